//! Daytona's preview URLs and its preview proxy, as the stand-in answers
//! them: a loopback port of its own for each previewed port of a sandbox
//! (at Daytona the URL's host names the port and the sandbox).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Path, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::State;
use super::api::{error, not_found};
use crate::forward::{self, Body};

type S = AxState<Arc<State>>;

pub(super) async fn preview_url(
    AxState(state): S,
    Path((id, port)): Path<(String, u16)>,
) -> Response {
    if port == 0 {
        return error(StatusCode::BAD_REQUEST, "", "Invalid port");
    }
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    let addr = match s.previews.get(&port) {
        Some(a) => *a,
        None => {
            let (sid, st) = (s.id.clone(), Arc::clone(&state));
            let (addr, task) =
                forward::serve(move |req| preview(Arc::clone(&st), sid.clone(), port, req)).await;
            state.tasks.add([task]);
            if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
                x.previews.insert(port, addr);
            }
            addr
        }
    };
    axum::Json(json!({ "sandboxId": s.id, "url": format!("http://{addr}"), "token": s.auth_token }))
        .into_response()
}

/// The preview proxy for one port of one sandbox.
async fn preview(
    state: Arc<State>,
    id: String,
    port: u16,
    mut req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let Some(s) = state.find(&id) else {
        return forward::json(
            hyper::StatusCode::NOT_FOUND,
            &json!({ "statusCode": 404, "message": "sandbox not found" }),
        );
    };
    let headers = req.headers();
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|k| state.keys.accepts(k));
    let header_token = headers.get("x-daytona-preview-token").and_then(|v| v.to_str().ok())
        == Some(s.auth_token.as_str());
    let query: Vec<(String, String)> = req
        .uri()
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let query_token =
        query.iter().any(|(k, v)| k == "DAYTONA_SANDBOX_AUTH_KEY" && v == &s.auth_token);
    if !(s.public || bearer || header_token || query_token) {
        let mut r = forward::respond(hyper::StatusCode::TEMPORARY_REDIRECT, "text/plain", "");
        if let Ok(v) = format!("{}/api/auth/login?sandbox={id}", state.base).parse() {
            r.headers_mut().insert(hyper::header::LOCATION, v);
        }
        return r;
    }
    // The proxy's own credentials do not reach the sandbox.
    if bearer {
        req.headers_mut().remove("authorization");
    }
    req.headers_mut().remove("x-daytona-preview-token");
    if query_token {
        let rest: Vec<(String, String)> =
            query.into_iter().filter(|(k, _)| k != "DAYTONA_SANDBOX_AUTH_KEY").collect();
        let q = form_urlencoded::Serializer::new(String::new()).extend_pairs(rest).finish();
        let path = req.uri().path().to_owned();
        let pq = if q.is_empty() { path } else { format!("{path}?{q}") };
        if let Ok(uri) = pq.parse() {
            *req.uri_mut() = uri;
        }
    }
    let browser = req
        .headers()
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ua| ["Mozilla", "Chrome", "Safari"].iter().any(|b| ua.contains(b)));
    let skip = req.headers().get("x-daytona-skip-preview-warning").and_then(|v| v.to_str().ok())
        == Some("true");
    let upgrade = req.headers().contains_key("upgrade");
    if browser && !skip && !upgrade {
        return forward::respond(
            hyper::StatusCode::OK,
            "text/html; charset=utf-8",
            "<html><body>Preview warning: this page is served by a Daytona sandbox.</body></html>",
        );
    }
    if s.state != "started" {
        return forward::json(
            hyper::StatusCode::BAD_REQUEST,
            &json!({ "statusCode": 400, "message": "Sandbox is not started" }),
        );
    }
    state.touch(&id);
    let bad_gateway = || {
        forward::json(
            hyper::StatusCode::BAD_GATEWAY,
            &json!({ "statusCode": 502, "message": "Bad Gateway" }),
        )
    };
    let Some(host_port) = s.ports.get(&port) else { return bad_gateway() };
    match forward::forward(req, SocketAddr::from(([127, 0, 0, 1], *host_port))).await {
        Some(r) => r,
        None => bad_gateway(),
    }
}
