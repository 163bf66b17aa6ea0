//! The API server's one error shape: a `Status` object (`kind: Status`,
//! `apiVersion: v1`, `status: Failure`, `message`, `reason`, `details`,
//! `code`), with the reasons and messages the API server uses.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::kinds::Kind;

/// A refusal, answered as a `Status`.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The HTTP status.
    pub code: u16,
    /// The reason (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`,
    /// `BadRequest`, …).
    pub reason: &'static str,
    /// The message.
    pub message: String,
    /// `details`, when the API server gives them.
    pub details: Option<Value>,
}

impl Failure {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object.
    pub fn not_found(kind: &Kind, name: &str) -> Self {
        let mut f =
            Self::new(404, "NotFound", format!("{} \"{name}\" not found", kind.qualified()));
        f.details = Some(details(name, kind.group, kind.resource));
        f
    }

    /// 404 NotFound for a path the server does not serve.
    pub fn no_route() -> Self {
        let mut f = Self::new(404, "NotFound", "the server could not find the requested resource");
        f.details = Some(json!({}));
        f
    }

    /// 409 AlreadyExists.
    pub fn already_exists(kind: &Kind, name: &str) -> Self {
        let mut f = Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", kind.qualified()),
        );
        f.details = Some(details(name, kind.group, kind.resource));
        f
    }

    /// 409 Conflict: a stale `resourceVersion`.
    pub fn conflict(kind: &Kind, name: &str) -> Self {
        let mut f = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                kind.qualified()
            ),
        );
        f.details = Some(details(name, kind.group, kind.resource));
        f
    }

    /// 422 Invalid, with one cause per `(field, reason, message)`.
    pub fn invalid(kind: &Kind, name: &str, causes: &[(String, &str, String)]) -> Self {
        let text: Vec<String> = causes.iter().map(|(f, _, m)| format!("{f}: {m}")).collect();
        // A custom resource's kind is named with its group.
        let what = if kind.built_in() {
            kind.kind.to_owned()
        } else {
            format!("{}.{}", kind.kind, kind.group)
        };
        let message = if text.len() == 1 {
            format!("{what} \"{name}\" is invalid: {}", text[0])
        } else {
            format!("{what} \"{name}\" is invalid: [{}]", text.join(", "))
        };
        let mut f = Self::new(422, "Invalid", message);
        let causes: Vec<Value> = causes
            .iter()
            .map(|(field, reason, m)| json!({ "reason": reason, "message": m, "field": field }))
            .collect();
        let mut d = details(name, kind.group, kind.kind);
        d["causes"] = Value::Array(causes);
        f.details = Some(d);
        f
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 415 UnsupportedMediaType: a patch type the stand-in does not take
    /// for `kind` (strategic merge only for built-in kinds, no apply).
    pub fn unsupported_media(kind: &Kind) -> Self {
        let strategic =
            if kind.built_in() { ", application/strategic-merge-patch+json" } else { "" };
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json{strategic}"
            ),
        )
    }

    /// The `Status` body.
    pub fn body(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = json!({ "name": name, "kind": kind });
    if !group.is_empty() {
        d["group"] = json!(group);
    }
    d
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(code, &self.body())
    }
}

/// `value` as `application/json` with `code`.
pub fn json_response(code: StatusCode, value: &Value) -> Response {
    let mut r = (code, value.to_string()).into_response();
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    r
}

/// The `Status` a successful delete of a kind without graceful deletion
/// answers.
pub fn deleted(kind: &Kind, name: &str, uid: &str) -> Value {
    let mut d = details(name, kind.group, kind.resource);
    d["uid"] = json!(uid);
    json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d })
}
