//! Runtime Cloud's custom images, as the stand-in answers them: exactly one
//! source (`recipe`, `image` or a single-stage `dockerfile`), an identical
//! source reused at once, each build a Docker build on the local engine.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::Digest as _;

use super::api::{S, decode_cursor, error, invalid, not_found, object, page, query, unknown};
use super::{Image, State};
use crate::common::{Clock, random_id};

fn image_json(i: &Image) -> Value {
    json!({
        "id": i.id,
        "kind": "image",
        "name": i.name,
        "state": i.state,
        "error": i.error.as_ref().map(|m| json!({ "message": m })),
        "createdAt": Clock::rfc3339(i.created),
    })
}

/// The Dockerfile a source makes.
fn dockerfile_of(body: &serde_json::Map<String, Value>) -> Result<String, Vec<(String, String)>> {
    let sources: Vec<&str> = ["recipe", "image", "dockerfile"]
        .into_iter()
        .filter(|k| body.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    if sources.len() != 1 {
        return Err(vec![(
            "recipe".into(),
            "give exactly one source: recipe, image or dockerfile".into(),
        )]);
    }
    match sources[0] {
        "dockerfile" => {
            let Some(text) = body["dockerfile"].as_str() else {
                return Err(vec![("dockerfile".into(), "must be a string".into())]);
            };
            let froms = text
                .lines()
                .filter(|l| l.trim_start().to_ascii_uppercase().starts_with("FROM "))
                .count();
            if froms != 1 {
                return Err(vec![(
                    "dockerfile".into(),
                    "must be a single-stage Dockerfile (one FROM)".into(),
                )]);
            }
            Ok(text.to_owned())
        }
        "image" => match body["image"].as_str() {
            Some(tag) if !tag.is_empty() => Ok(format!("FROM {tag}\n")),
            _ => Err(vec![(
                "image".into(),
                "must be a public image such as python:3.12-slim".into(),
            )]),
        },
        _ => {
            let list = |k: &str| -> Vec<String> {
                body["recipe"]
                    .get(k)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default()
            };
            let mut d = format!("FROM {}\n", super::DEFAULT_IMAGE);
            let apt = list("apt");
            if !apt.is_empty() {
                d.push_str(&format!(
                    "RUN apt-get update && apt-get install -y --no-install-recommends {}\n",
                    apt.join(" ")
                ));
            }
            let pip = list("pip");
            if !pip.is_empty() {
                d.push_str(&format!("RUN pip install {}\n", pip.join(" ")));
            }
            Ok(d)
        }
    }
}

pub(super) async fn create(AxState(state): S, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut issues = unknown(&body, &["name", "recipe", "image", "dockerfile"]);
    let name = match body.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 128 => Some(s.clone()),
        Some(_) => {
            issues.push(("name".into(), "must be a string of 1 to 128 characters".into()));
            None
        }
    };
    let dockerfile = match dockerfile_of(&body) {
        Ok(d) => Some(d),
        Err(more) => {
            issues.extend(more);
            None
        }
    };
    let Some(dockerfile) = dockerfile.filter(|_| issues.is_empty()) else {
        return invalid(issues);
    };
    let source = hex::encode(sha2::Sha256::digest(dockerfile.as_bytes()));
    let found = state
        .lock()
        .images
        .values()
        .find(|i| i.source == source && i.name == name && i.state != "failed")
        .cloned();
    if let Some(i) = found {
        return axum::Json(image_json(&i)).into_response();
    }
    let image = Image {
        id: format!("img_{}", random_id(20)),
        name,
        tag: format!("holm-standin-runtime-cloud:{}", &source[..16]),
        source,
        state: "queued".into(),
        error: None,
        logs: Vec::new(),
        created: state.clock.now(),
    };
    let answer = image_json(&image);
    {
        let mut inner = state.lock();
        inner.order.push(image.id.clone());
        inner.images.insert(image.id.clone(), image.clone());
    }
    let st = Arc::clone(&state);
    tokio::spawn(async move { build(st, image.id, image.tag, dockerfile).await });
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn build(state: Arc<State>, id: String, tag: String, dockerfile: String) {
    let set = |state: &State, to: &str, error: Option<String>, logs: Vec<String>| {
        if let Some(i) = state.lock().images.get_mut(&id) {
            i.state = to.into();
            i.error = error;
            i.logs.extend(logs);
        }
    };
    set(&state, "building", None, Vec::new());
    let mut log = Vec::new();
    let failing = state.failing_builds.fetch_update(
        std::sync::atomic::Ordering::SeqCst,
        std::sync::atomic::Ordering::SeqCst,
        |n| n.checked_sub(1),
    );
    let done = if failing.is_ok() {
        Err("the build failed (a failure the test asked for)".to_owned())
    } else if state.engine.image_exists(&tag).await {
        log.push(format!("an identical image exists: {tag}"));
        Ok(())
    } else {
        state.engine.build(&dockerfile, &[], &tag, &mut log).await
    };
    match done {
        Ok(()) => set(&state, "ready", None, log),
        Err(e) => set(&state, "failed", Some(e), log),
    }
}

pub(super) async fn list(AxState(state): S, RawQuery(raw): RawQuery) -> Response {
    let (mut limit, mut cursor, mut issues) = (100usize, 0usize, Vec::new());
    for (k, v) in query(raw.as_deref()) {
        match k.as_str() {
            "limit" => match v.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => limit = n,
                _ => issues.push(("limit".into(), "must be from 1 to 100".into())),
            },
            "cursor" => match decode_cursor(&v) {
                Some(c) => cursor = c,
                None => issues.push(("cursor".into(), "is not a cursor this list gave".into())),
            },
            other => issues.push((other.to_owned(), "is not a parameter of this list".into())),
        }
    }
    if !issues.is_empty() {
        return invalid(issues);
    }
    let inner = state.lock();
    let all: Vec<Value> =
        inner.order.iter().filter_map(|id| inner.images.get(id)).map(image_json).collect();
    page(all, cursor, limit)
}

pub(super) async fn read(AxState(state): S, Path(id): Path<String>) -> Response {
    match state.lock().images.get(&id) {
        Some(i) => axum::Json(image_json(i)).into_response(),
        None => not_found("image", &id),
    }
}

pub(super) async fn logs(AxState(state): S, Path(id): Path<String>) -> Response {
    match state.lock().images.get(&id) {
        Some(i) => {
            let data: Vec<Value> = i.logs.iter().map(|l| json!({ "text": l })).collect();
            page(data, 0, usize::MAX / 2)
        }
        None => not_found("image", &id),
    }
}

/// `POST /v1/images/{id}:delete`.
pub(super) async fn delete(AxState(state): S, Path(action): Path<String>) -> Response {
    let Some(id) = action.strip_suffix(":delete") else {
        return error(
            StatusCode::NOT_FOUND,
            "route_not_found",
            "No such route.",
            "Use POST /v1/images/{id}:delete.",
            None,
        );
    };
    let gone = {
        let mut inner = state.lock();
        inner.order.retain(|x| x != id);
        inner.images.remove(id)
    };
    match gone {
        Some(mut i) => {
            i.state = "deleted".into();
            axum::Json(image_json(&i)).into_response()
        }
        None => not_found("image", id),
    }
}
