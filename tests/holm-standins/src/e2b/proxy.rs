//! E2B's proxy and envd, as the stand-in answers them: one loopback port
//! for every sandbox and port, routed by `E2b-Sandbox-Id` and
//! `E2b-Sandbox-Port` (E2B routes so for IP hosts and its shared
//! `sandbox.` host, and by `<port>-<id>.<domain>` otherwise).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use super::{ENVD_PORT, State};
use crate::forward::{Body, forward, json as json_response, respond};

const TRAFFIC_HEADER: &str = "e2b-traffic-access-token";

/// The sandbox and port a request is for.
fn target(req: &Request<Incoming>) -> Option<(String, u16)> {
    let header =
        |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let (Some(id), Some(port)) = (header("e2b-sandbox-id"), header("e2b-sandbox-port")) {
        return Some((id, port.parse().ok()?));
    }
    let host = header("host")?;
    let first = host.split('.').next()?;
    let (port, id) = first.split_once('-')?;
    Some((id.to_owned(), port.parse().ok()?))
}

/// Answers one request to the proxy.
pub(crate) async fn handle(state: Arc<State>, mut req: Request<Incoming>) -> Response<Body> {
    let Some((id, port)) = target(&req) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &json!({ "message": "Invalid host", "code": 400 }),
        );
    };
    let sandbox = state.lock().sandboxes.get(&id).cloned().filter(|s| !s.paused);
    let Some(sandbox) = sandbox else {
        return json_response(
            StatusCode::BAD_GATEWAY,
            &json!({ "sandboxId": id, "message": "The sandbox was not found", "code": 502 }),
        );
    };
    if port == ENVD_PORT {
        return envd(&state, &sandbox, req).await;
    }
    if let Some(token) = &sandbox.traffic_token {
        let given =
            req.headers().get(TRAFFIC_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let message = match given {
            None => Some(format!(
                "Sandbox is secured with traffic access token. Token header '{TRAFFIC_HEADER}' is missing"
            )),
            Some(t) if &t != token => Some(format!(
                "Sandbox is secured with traffic access token. Provided token in header '{TRAFFIC_HEADER}' is invalid"
            )),
            Some(_) => None,
        };
        if let Some(message) = message {
            return json_response(
                StatusCode::FORBIDDEN,
                &json!({ "sandboxId": id, "message": message, "code": 403 }),
            );
        }
    }
    req.headers_mut().remove(TRAFFIC_HEADER);
    let closed = || {
        json_response(
            StatusCode::BAD_GATEWAY,
            &json!({ "sandboxId": id, "message": "The sandbox is running but port is not open", "port": port, "code": 502 }),
        )
    };
    let Some(host_port) = sandbox.ports.get(&port) else { return closed() };
    match forward(req, SocketAddr::from(([127, 0, 0, 1], *host_port))).await {
        Some(r) => r,
        None => closed(),
    }
}

fn envd_error(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({ "code": status.as_u16(), "message": message }))
}

/// The Linux user a request runs as: `Authorization: Basic <user>:`, else
/// E2B's default `user`.
fn user_of(req: &Request<Incoming>) -> String {
    req.headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.split(':').next().map(str::to_owned))
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "user".into())
}

/// envd: the calls holm and the SDKs make of it.
async fn envd(state: &State, sandbox: &super::Sandbox, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_owned();
    if path == "/health" {
        return respond(StatusCode::NO_CONTENT, "text/plain", Bytes::new());
    }
    let token = req.headers().get("x-access-token").and_then(|v| v.to_str().ok()).unwrap_or("");
    if token != sandbox.envd_token {
        return envd_error(
            StatusCode::UNAUTHORIZED,
            "unauthorized access, please provide a valid access token",
        );
    }
    let user = user_of(&req);
    let query: HashMap<String, String> = req
        .uri()
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    match path.as_str() {
        "/envs" => json_response(StatusCode::OK, &json!(sandbox.env_vars)),
        "/files" if req.method() == hyper::Method::GET => {
            let Some(file) = query.get("path") else {
                return envd_error(StatusCode::BAD_REQUEST, "path is required");
            };
            match state.engine.get_file(&sandbox.container, file).await {
                Ok(Some(bytes)) => respond(StatusCode::OK, "application/octet-stream", bytes),
                Ok(None) => {
                    envd_error(StatusCode::NOT_FOUND, &format!("path '{file}' does not exist"))
                }
                Err(e) => envd_error(StatusCode::INTERNAL_SERVER_ERROR, &e),
            }
        }
        "/process.Process/Start" => start(state, sandbox, &user, req).await,
        _ => envd_error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn envelope(flags: u8, message: &Value) -> Vec<u8> {
    let bytes = serde_json::to_vec(message).unwrap_or_default();
    let mut out = vec![flags];
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&bytes);
    out
}

/// `process.Process/Start`: runs the process to its end, then answers the
/// stream: start, data, end, and the end-of-stream message.
async fn start(
    state: &State,
    sandbox: &super::Sandbox,
    user: &str,
    req: Request<Incoming>,
) -> Response<Body> {
    let content_type =
        req.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    if content_type != "application/connect+json" {
        return respond(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "text/plain",
            "unsupported content type",
        );
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return envd_error(StatusCode::BAD_REQUEST, "the request broke off"),
    };
    if body.len() < 5 {
        return envd_error(StatusCode::BAD_REQUEST, "no message");
    }
    let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    let Some(message) = body.get(5..5 + len) else {
        return envd_error(StatusCode::BAD_REQUEST, "a short message");
    };
    let request: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
    let process = &request["process"];
    let Some(cmd) = process["cmd"].as_str() else {
        let end = envelope(
            2,
            &json!({ "error": { "code": "invalid_argument", "message": "process.cmd is required" } }),
        );
        return respond(StatusCode::OK, "application/connect+json", end);
    };
    let mut argv = vec![cmd.to_owned()];
    argv.extend(
        process["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned),
    );
    let mut env = sandbox.env_vars.clone();
    for (k, v) in process["envs"].as_object().into_iter().flatten() {
        if let Some(v) = v.as_str() {
            env.insert(k.clone(), v.to_owned());
        }
    }
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let cwd = process["cwd"].as_str();
    let mut out = Vec::new();
    match state.engine.exec(&sandbox.container, argv, env, Some(user), cwd).await {
        Ok((code, stdout, stderr)) => {
            out.extend(envelope(0, &json!({ "event": { "start": { "pid": 1000 } } })));
            let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
            if !stdout.is_empty() {
                out.extend(envelope(
                    0,
                    &json!({ "event": { "data": { "stdout": b64(&stdout) } } }),
                ));
            }
            if !stderr.is_empty() {
                out.extend(envelope(
                    0,
                    &json!({ "event": { "data": { "stderr": b64(&stderr) } } }),
                ));
            }
            // proto3 JSON leaves a zero exit code out.
            let mut end = json!({ "exited": true, "status": format!("exit status {code}") });
            if code != 0 {
                end["exitCode"] = json!(code);
            }
            out.extend(envelope(0, &json!({ "event": { "end": end } })));
            out.extend(envelope(2, &json!({})));
        }
        Err(e) => {
            out.extend(envelope(2, &json!({ "error": { "code": "internal", "message": e } })))
        }
    }
    respond(StatusCode::OK, "application/connect+json", out)
}
