//! What a call carried that a vendor's contract fixes, recorded by the
//! stand-ins' gates for contract traces: the route it matched, who made it
//! (its `User-Agent`), the names of its headers and query parameters, and
//! its JSON body's shape
//! (each field's path and JSON type, never a value).
//!
//! A contract trace runs one operation through holm's adapter and through
//! the vendor's SDK against the same stand-in and compares the two
//! ([`Shape`]s per route); the test and the per-vendor tables of the
//! differences that remain are in `holm-e2e` (`tests/traces/`). Modal's
//! gRPC calls are traced into the same [`Trace`] by `modal::traced`.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};

/// The largest JSON body whose shape is recorded; larger bodies (and
/// bodies of other types) pass untouched and record no shape.
const MAX_BODY: u64 = 1 << 20;

/// Headers every HTTP client sends for its own reasons (Node's `fetch`
/// adds `accept-language` and `sec-fetch-mode` to each request): never
/// part of a vendor's contract, so not recorded.
const TRANSPORT: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "connection",
    "content-length",
    "host",
    "keep-alive",
    "sec-fetch-mode",
    "te",
    "transfer-encoding",
    "user-agent",
];

/// A request's `User-Agent` (empty when it sent none) and its header
/// names, lowercase, sorted, once each, less the `transport` ones.
pub fn agent_and_headers(
    headers: &axum::http::HeaderMap,
    transport: &[&str],
) -> (String, Vec<String>) {
    let agent =
        headers.get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let mut names: Vec<String> = headers
        .keys()
        .map(|k| k.as_str().to_ascii_lowercase())
        .filter(|k| !transport.contains(&k.as_str()))
        .collect();
    names.sort();
    names.dedup();
    (agent, names)
}

/// The contract part of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The stand-in's route the request matched (`/sandboxes/{id}`), or
    /// its path when it matched none.
    pub route: String,
    /// Its `User-Agent` (empty when it sent none).
    pub agent: String,
    /// The names of its headers, lowercase and sorted, transport headers
    /// left out.
    pub headers: Vec<String>,
    /// The names of its query's parameters, sorted.
    pub query: Vec<String>,
    /// Its JSON body's shape: each field's path (`a.b`, `a[]` for an
    /// array's items) and JSON type.
    pub body: Shape,
}

/// A JSON value's fields and their types, by path.
pub type Shape = BTreeMap<String, &'static str>;

/// Reads the contract part of `req` and gives the request back whole (its
/// body read into memory when it was JSON and small, and put back).
pub async fn observe(req: Request) -> (Request, Trace) {
    let path = req.uri().path();
    let mut route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| path.to_owned(), |m| m.as_str().to_owned());
    // A custom method (`/sandboxes/{id}:stop`, as Google's API design has
    // it) matched by the segment's route is part of the route.
    let verb = path.rsplit('/').next().and_then(|last| last.split_once(':')).map(|(_, v)| v);
    if let Some(verb) = verb
        && !route.rsplit('/').next().is_some_and(|last| last.contains(':'))
    {
        route = format!("{route}:{verb}");
    }
    let (agent, headers) = agent_and_headers(req.headers(), TRANSPORT);
    let mut query: Vec<String> =
        form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
            .map(|(k, _)| k.into_owned())
            .collect();
    query.sort();
    query.dedup();
    let json = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    let small = req
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|n| n <= MAX_BODY);
    let mut trace = Trace { route, agent, headers, query, body: Shape::new() };
    if !(json && small) {
        return (req, trace);
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY as usize).await.unwrap_or_default();
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) {
        shape_of(&v, "", &mut trace.body);
    }
    (Request::from_parts(parts, Body::from(bytes)), trace)
}

/// The JSON type's name.
pub fn type_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Adds the fields of `v` under `prefix` to `out`; an array's items are
/// one path (`prefix[]`), their shapes merged.
pub fn shape_of(v: &serde_json::Value, prefix: &str, out: &mut Shape) {
    match v {
        serde_json::Value::Object(fields) => {
            for (name, value) in fields {
                let path =
                    if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
                out.insert(path.clone(), type_of(value));
                shape_of(value, &path, out);
            }
        }
        serde_json::Value::Array(items) => {
            let path = format!("{prefix}[]");
            for item in items {
                out.insert(path.clone(), type_of(item));
                shape_of(item, &path, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_has_every_field_by_path_and_no_value() {
        let v = serde_json::json!({
            "templateID": "base", "timeout": 300, "secure": true,
            "metadata": {"holm.box": "b-1"}, "ports": [{"port": 1, "name": "x"}], "none": null
        });
        let mut s = Shape::new();
        shape_of(&v, "", &mut s);
        let got: Vec<(&str, &str)> = s.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("metadata", "object"),
                ("metadata.holm.box", "string"),
                ("none", "null"),
                ("ports", "array"),
                ("ports[]", "object"),
                ("ports[].name", "string"),
                ("ports[].port", "number"),
                ("secure", "bool"),
                ("templateID", "string"),
                ("timeout", "number"),
            ]
        );
    }
}
