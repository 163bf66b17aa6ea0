//! The service's errors: what went wrong and to what, never how a frontend
//! words it. [`Error`] becomes the one wire shape ([`ApiError`]) with typed
//! `details` ([`ErrorDetails`]); the REST frontend words the hint from them
//! (`holm_http::error::rest_hint`), and the CLI and MCP word their own from
//! the same details. A refusal whose hint reads the same everywhere (a
//! limit, a field that is wrong) is already in the wire shape: [`Error::Api`].

use holm::runtime::RuntimeError;
use holm_proto::host::{BoxState, Can};
use holm_proto::{ApiError, BoxRequest, ErrorCode, ErrorDetails};

use crate::store::StoreError;

/// A refusal or failure of the service.
#[derive(Debug, Clone)]
pub enum Error {
    /// No box has this id; `why` adds to the message.
    NoSuchBox { id: String, why: &'static str },
    /// The box is still coming up.
    Starting { id: String },
    /// The box is stopped, paused, failed or removed; its reason says why.
    NotRunning { id: String, state: BoxState, reason: Option<String> },
    /// The box's runtime lost it.
    Unreachable { id: String, reason: Option<String> },
    /// The box's state does not allow `request`; `what` says why.
    Refused { id: String, state: BoxState, request: BoxRequest, what: &'static str },
    /// The box has no machine yet.
    NoMachine { id: String },
    /// A part of the box did not answer (or not in time).
    GuestDown { id: String, part: Part, late: bool },
    /// The box runs no browser.
    NoBrowser { id: String },
    /// The box's runtime cannot `what` a box.
    RuntimeCannot { runtime: String, what: &'static str, can: Can },
    /// No runtime has this name.
    UnknownRuntime { name: String, known: Vec<String> },
    /// No remote runtime has this name.
    NoSuchRemote { name: String },
    /// A runtime has this name already.
    RemoteExists { name: String },
    /// Already in the wire shape, with a hint (if any) that every frontend
    /// says alike: a guest's own answer, a limit, fields that are wrong.
    Api(ApiError),
}

/// A part of a box that holmd talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The guest agent, through forwarded requests.
    Agent,
    /// The guest agent, asked by holmd itself.
    Guest,
    /// The Chromium bridge.
    Bridge,
    /// The viewer port.
    Viewers,
}

impl Part {
    fn of_box(self, id: &str) -> String {
        match self {
            Self::Agent => format!("the agent in box {id}"),
            Self::Guest => format!("the guest of box {id}"),
            Self::Bridge => format!("the bridge of box {id}"),
            Self::Viewers => format!("the viewers of box {id}"),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        ApiError::from(self.clone()).fmt(f)
    }
}

impl std::error::Error for Error {}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        use ErrorDetails as D;
        let (code, message, details) = match e {
            Error::Api(e) => return e,
            Error::NoSuchBox { id, why } => (
                ErrorCode::NotFound,
                format!("there is no box {id:?}{why}"),
                D::NoSuchBox { box_id: id },
            ),
            Error::Starting { id } => (
                ErrorCode::NotReady,
                format!("box {id} is still starting"),
                D::BoxStarting { box_id: id },
            ),
            Error::NotRunning { id, state, reason } => {
                let e = ApiError::new(ErrorCode::NotRunning, format!("box {id} is {state}"))
                    .with_kind(D::BoxNotRunning { box_id: id, state });
                return match reason {
                    Some(reason) => e.with_hint(reason),
                    None => e,
                };
            }
            Error::Unreachable { id, reason } => {
                let why = reason.as_deref().unwrap_or("no reason known");
                (
                    ErrorCode::GuestUnreachable,
                    format!("box {id} is unreachable: {why}"),
                    D::GuestUnreachable { box_id: id },
                )
            }
            Error::Refused { id, state, request, what } => (
                ErrorCode::Conflict,
                format!("box {id} is {state}; {what}"),
                D::BoxRefused { box_id: id, state, request },
            ),
            Error::NoMachine { id } => (
                ErrorCode::Conflict,
                format!("box {id} has no machine yet"),
                D::NoMachine { box_id: id },
            ),
            Error::GuestDown { id, part, late } => (
                ErrorCode::GuestUnreachable,
                format!(
                    "{} did not answer{}",
                    part.of_box(&id),
                    if late { " in time" } else { "" }
                ),
                D::GuestUnreachable { box_id: id },
            ),
            Error::NoBrowser { id } => {
                (ErrorCode::NotReady, format!("box {id} runs no browser"), D::NoBrowser)
            }
            Error::RuntimeCannot { runtime, what, can } => (
                ErrorCode::Unsupported,
                format!("the {runtime} runtime cannot {what} a box"),
                D::RuntimeCannot { runtime, can },
            ),
            Error::UnknownRuntime { name, known } => {
                let hint = format!("use one of: {}", known.join(", "));
                return ApiError::new(
                    ErrorCode::UnknownRuntime,
                    format!("there is no runtime named {name:?}"),
                )
                .with_hint(hint)
                .with_kind(D::UnknownRuntime { runtime: name, known });
            }
            Error::NoSuchRemote { name } => (
                ErrorCode::NotFound,
                format!("there is no remote runtime named {name:?}"),
                D::NoSuchRemoteRuntime { runtime: name },
            ),
            Error::RemoteExists { name } => (
                ErrorCode::AlreadyExists,
                format!("there is a runtime named {name:?} already"),
                D::RuntimeExists { runtime: name },
            ),
        };
        ApiError::new(code, message).with_kind(details)
    }
}

impl From<Error> for holm_http::Error {
    fn from(e: Error) -> Self {
        Self(e.into())
    }
}

pub(super) fn store_error(e: &StoreError) -> ApiError {
    tracing::error!(error = %e, "the store failed");
    ApiError::new(ErrorCode::Unavailable, "the server cannot write its records now")
        .with_hint("retry with the same Idempotency-Key; the server's log says what failed")
}

/// Maps a runtime error to the one error shape.
pub fn runtime_error(e: RuntimeError) -> ApiError {
    match e {
        RuntimeError::NotFound(m) => ApiError::new(ErrorCode::NotFound, m),
        RuntimeError::Conflict(m) => ApiError::new(ErrorCode::Conflict, m),
        RuntimeError::Unsupported { .. } => ApiError::new(ErrorCode::Unsupported, e.to_string()),
        RuntimeError::Unavailable { .. } => ApiError::new(ErrorCode::Unavailable, e.to_string())
            .with_hint("check that the runtime's engine runs, such as `docker info`"),
        RuntimeError::Image(_) | RuntimeError::Engine(_) => {
            ApiError::new(ErrorCode::Unavailable, e.to_string())
        }
        RuntimeError::Vendor { runtime, error } => vendor_error(&runtime, &error),
    }
}

/// A cloud vendor's refusal in the one error shape: the vendor's status,
/// code and request id in `details` (never its key, which the message was
/// scrubbed of).
fn vendor_error(runtime: &str, e: &holm::runtime::remote::VendorError) -> ApiError {
    let (code, hint) = match e.status {
        Some(401 | 403) => (
            ErrorCode::Unavailable,
            format!("the vendor refused runtime {runtime}'s key; set a new one with `holm runtime set {runtime} --api-key`"),
        ),
        Some(404) => (ErrorCode::NotFound, format!("the vendor has no such thing for runtime {runtime}")),
        Some(409) => (ErrorCode::Conflict, "the vendor's sandbox is not in a state that allows this".to_owned()),
        Some(429) => (
            ErrorCode::Unavailable,
            "the vendor limits requests or sandboxes; retry later, or remove boxes you no longer need".to_owned(),
        ),
        Some(400..=499) => (
            ErrorCode::Unsupported,
            format!("the vendor refused what runtime {runtime} asked; GET /v1/runtimes/{runtime} says what it can do"),
        ),
        _ => (ErrorCode::Unavailable, "the vendor failed after every retry; try again later".to_owned()),
    };
    ApiError::new(code, format!("runtime {runtime}: {e}")).with_hint(hint).with_details(
        serde_json::json!({
            "runtime": runtime,
            "vendor": e.vendor,
            "vendor_status": e.status,
            "vendor_code": e.code,
            "vendor_request_id": e.request_id,
        }),
    )
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;

    use super::*;

    /// The error as REST answers it.
    fn rest(e: Error) -> ApiError {
        let response = holm_http::Error::from(e).into_response();
        response.extensions().get::<ApiError>().cloned().unwrap()
    }

    #[test]
    fn a_variant_is_answered_with_typed_details_and_a_hint_in_routes() {
        let e = rest(Error::Refused {
            id: "box_x".into(),
            state: BoxState::Paused,
            request: BoxRequest::Stop,
            what: "stop needs a running box",
        });
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::Conflict, "box box_x is paused; stop needs a running box")
        );
        assert_eq!(
            e.details,
            Some(serde_json::json!({
                "kind": "box_refused", "box_id": "box_x", "state": "paused", "request": "stop"
            }))
        );
        assert_eq!(e.hint.as_deref(), Some("resume it first: POST /v1/boxes/box_x/resume"));
        let e = rest(Error::GuestDown { id: "box_x".into(), part: Part::Bridge, late: true });
        assert_eq!(e.message, "the bridge of box box_x did not answer in time");
        assert_eq!(
            e.hint.as_deref(),
            Some("the box may be stopping; GET /v1/boxes/box_x shows its state")
        );
    }

    #[test]
    fn a_reason_or_a_list_is_the_same_hint_everywhere() {
        let e = rest(Error::NotRunning {
            id: "box_x".into(),
            state: BoxState::Stopped,
            reason: Some("stopped at its idle timeout".into()),
        });
        assert_eq!(e.hint.as_deref(), Some("stopped at its idle timeout"));
        assert_eq!(e.details.unwrap()["state"], "stopped");
        let e = rest(Error::UnknownRuntime { name: "x".into(), known: vec!["docker".into()] });
        assert_eq!(e.hint.as_deref(), Some("use one of: docker"));
        assert_eq!(e.details.unwrap()["known"], serde_json::json!(["docker"]));
    }
}
