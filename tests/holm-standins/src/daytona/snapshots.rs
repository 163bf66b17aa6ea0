//! Daytona's snapshots, as the stand-in answers them: made from a
//! Dockerfile (built by the local engine, cached by its text as Daytona
//! caches builds by `snapshotRef`) or an image name, found by id or name.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::api::{error, not_found, parse};
use super::{DEFAULT_SNAPSHOT, Snapshot, State};
use crate::common::{Clock, random_id};

type S = AxState<Arc<State>>;

/// The snapshot every organization starts from: the local Debian image.
pub(crate) fn seed_default_snapshot(state: &State) {
    let now = state.clock.now();
    state.lock().snapshots.insert(
        "default".into(),
        Snapshot {
            id: "default".into(),
            name: DEFAULT_SNAPSHOT.into(),
            state: "active".into(),
            image: Some("debian:bookworm-slim".into()),
            error: None,
            cpu: 1,
            memory: 1,
            disk: 3,
            created: now,
            updated: now,
            last_used: now,
            region: super::DEFAULT_REGION.into(),
        },
    );
}

fn snapshot_dto(s: &Snapshot, org: &str) -> Value {
    json!({
        "id": s.id,
        "organizationId": org,
        "general": s.id == "default",
        "name": s.name,
        "imageName": Value::Null,
        "state": s.state,
        "size": Value::Null,
        "entrypoint": Value::Null,
        "cpu": s.cpu,
        "gpu": 0,
        "mem": s.memory,
        "disk": s.disk,
        "errorReason": s.error,
        "createdAt": Clock::rfc3339(s.created),
        "updatedAt": Clock::rfc3339(s.updated),
        "lastUsedAt": Value::Null,
        "regionIds": [s.region],
    })
}

/// Turns snapshots unused for the deactivation time `inactive`, as
/// Daytona's snapshot manager does (general snapshots stay active).
fn deactivate_unused(state: &State) {
    let now = state.clock.now();
    let after = state.deactivate_after.load(std::sync::atomic::Ordering::Relaxed);
    for s in state.lock().snapshots.values_mut() {
        if s.id != "default" && s.state == "active" && now.saturating_sub(s.last_used) >= after {
            s.state = "inactive".into();
            s.updated = now;
        }
    }
}

pub(super) fn find_snapshot(state: &State, id_or_name: &str) -> Option<Snapshot> {
    deactivate_unused(state);
    let inner = state.lock();
    inner
        .snapshots
        .get(id_or_name)
        .or_else(|| inner.snapshots.values().find(|s| s.name == id_or_name))
        .cloned()
}

fn whole(v: Option<&Value>, default: u64) -> Result<u64, String> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_u64().ok_or_else(|| "must be a whole number".to_owned()),
    }
}

pub(super) async fn create_snapshot(AxState(state): S, body: Bytes) -> Response {
    let path = "/api/snapshots";
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(name) = body.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
        return error(StatusCode::BAD_REQUEST, path, "name should not be empty");
    };
    let dockerfile =
        body.pointer("/buildInfo/dockerfileContent").and_then(Value::as_str).map(str::to_owned);
    let image_name = body.get("imageName").and_then(Value::as_str).map(str::to_owned);
    if dockerfile.is_none() && image_name.is_none() {
        return error(
            StatusCode::BAD_REQUEST,
            path,
            "Either imageName or buildInfo must be provided",
        );
    }
    let (cpu, memory, disk) =
        match (whole(body.get("cpu"), 1), whole(body.get("memory"), 1), whole(body.get("disk"), 3))
        {
            (Ok(c), Ok(m), Ok(d)) => (c, m, d),
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    path,
                    "cpu, memory and disk must be whole numbers",
                );
            }
        };
    if find_snapshot(&state, name).is_some() {
        return error(
            StatusCode::CONFLICT,
            path,
            format!("Snapshot with name {name} already exists"),
        );
    }
    let now = state.clock.now();
    let snapshot = Snapshot {
        id: format!("{}-{}-{}", random_id(8), random_id(4), random_id(12)),
        name: name.to_owned(),
        state: "pending".into(),
        image: image_name.clone(),
        error: None,
        cpu,
        memory,
        disk,
        created: now,
        updated: now,
        last_used: now,
        region: body
            .get("regionId")
            .and_then(Value::as_str)
            .unwrap_or(super::DEFAULT_REGION)
            .to_owned(),
    };
    let dto = snapshot_dto(&snapshot, &state.organization);
    let id = snapshot.id.clone();
    state.lock().snapshots.insert(id.clone(), snapshot);
    let task_state = Arc::clone(&state);
    tokio::spawn(async move { build_snapshot(task_state, id, dockerfile, image_name).await });
    (StatusCode::OK, axum::Json(dto)).into_response()
}

/// Builds a snapshot's Dockerfile (the build cache is keyed by its text,
/// as Daytona keys builds by `snapshotRef`).
async fn build_snapshot(
    state: Arc<State>,
    id: String,
    dockerfile: Option<String>,
    image: Option<String>,
) {
    let set = |st: &str, image: Option<String>, error: Option<String>| {
        let now = state.clock.now();
        if let Some(s) = state.lock().snapshots.get_mut(&id) {
            s.state = st.into();
            s.updated = now;
            if image.is_some() {
                s.image = image;
            }
            s.error = error;
        }
    };
    set("building", None, None);
    let result = match (dockerfile, image) {
        (Some(text), _) => {
            use sha2::Digest as _;
            let tag = format!(
                "holm-standin-daytona:{}",
                &hex::encode(sha2::Sha256::digest(text.as_bytes()))[..16]
            );
            if state.engine.image_exists(&tag).await {
                Ok(tag)
            } else {
                let mut log = Vec::new();
                state.engine.build(&text, &[], &tag, &mut log).await.map(|()| tag)
            }
        }
        (None, Some(image)) if state.engine.image_exists(&image).await => Ok(image),
        (None, Some(image)) => Err(format!("image {image} cannot be pulled")),
        (None, None) => Err("nothing to build".into()),
    };
    match result {
        Ok(tag) => set("active", Some(tag), None),
        Err(e) => set("build_failed", None, Some(e)),
    }
}

pub(super) async fn get_snapshot(AxState(state): S, Path(id): Path<String>) -> Response {
    match find_snapshot(&state, &id) {
        Some(s) => axum::Json(snapshot_dto(&s, &state.organization)).into_response(),
        None => not_found("Snapshot", &id),
    }
}

/// `POST /snapshots/{id}/activate`: an inactive snapshot is active again
/// (Daytona sets the state and answers the snapshot; an active one is
/// answered as it is). The stand-in refuses any other state.
pub(super) async fn activate_snapshot(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = find_snapshot(&state, &id) else { return not_found("Snapshot", &id) };
    let now = state.clock.now();
    match s.state.as_str() {
        "active" => {}
        "inactive" => {
            if let Some(x) = state.lock().snapshots.get_mut(&s.id) {
                x.state = "active".into();
                x.updated = now;
                x.last_used = now;
            }
        }
        other => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("/api/snapshots/{id}/activate"),
                format!("Snapshot {} is {other}, not inactive", s.name),
            );
        }
    }
    let s = find_snapshot(&state, &id).unwrap_or(s);
    axum::Json(snapshot_dto(&s, &state.organization)).into_response()
}

/// Marks a snapshot used now (a sandbox was made from it).
pub(super) fn used(state: &State, id: &str) {
    let now = state.clock.now();
    if let Some(s) = state.lock().snapshots.get_mut(id) {
        s.last_used = now;
    }
}

pub(super) async fn delete_snapshot(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = find_snapshot(&state, &id) else { return not_found("Snapshot", &id) };
    state.lock().snapshots.remove(&s.id);
    StatusCode::OK.into_response()
}
