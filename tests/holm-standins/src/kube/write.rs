//! The writes: create, replace, patch and delete, with the API server's
//! checks in its order: the body decodes (unknown fields per
//! `fieldValidation`), names the kind of its endpoint and the namespace of
//! its path, the object exists (or not), its `resourceVersion` is the
//! current one, and the kind's own rules hold.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::api::{Query, Target, param, selectors};
use super::kinds::{self, Kind};
use super::objects::{self, Fresh};
use super::status::{Failure, deleted, json_response};
use super::store::Key;
use super::{State, pods, schema};
use crate::common::{Clock, random_id};

/// A decoded body and the warnings it earned.
struct Decoded {
    object: Value,
    warnings: Vec<String>,
}

/// Checks a write's body against `kind` under the request's
/// `fieldValidation` (`Strict`, `Warn` (the default) or `Ignore`).
fn decode_value(kind: &Kind, mut object: Value, query: &Query) -> Result<Decoded, Failure> {
    let mode = param(query, "fieldValidation").unwrap_or("Warn");
    if !["Strict", "Warn", "Ignore"].contains(&mode) {
        return Err(Failure::bad_request(format!(
            "fieldValidation: Invalid value: \"{mode}\": fieldValidation must be one of: Ignore, Warn, Strict"
        )));
    }
    let cannot = |why: String| {
        Failure::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: {why}",
            kind.kind, kind.version, kind.kind
        ))
    };
    if !object.is_object() {
        return Err(cannot("the body is not a JSON object".into()));
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let named = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if !api_version.is_empty() && api_version != kind.api_version() {
        return Err(Failure::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            kind.api_version()
        )));
    }
    if !named.is_empty() && named != kind.kind {
        return Err(Failure::bad_request(format!(
            "the kind in the data ({named}) does not match the expected kind ({})",
            kind.kind
        )));
    }
    object["apiVersion"] = json!(kind.api_version());
    object["kind"] = json!(kind.kind);
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    let mut unknown = Vec::new();
    schema::check(&mut object, &schema::of(kind.kind), "", &mut unknown).map_err(cannot)?;
    let warnings: Vec<String> = unknown.iter().map(|f| format!("unknown field \"{f}\"")).collect();
    match mode {
        "Strict" if !warnings.is_empty() => {
            Err(cannot(format!("strict decoding error: {}", warnings.join(", "))))
        }
        "Warn" => Ok(Decoded { object, warnings }),
        _ => Ok(Decoded { object, warnings: Vec::new() }),
    }
}

fn decode(kind: &Kind, body: &Bytes, query: &Query) -> Result<Decoded, Failure> {
    let object: Value = serde_json::from_slice(body).map_err(|e| {
        Failure::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {e}",
            kind.kind
        ))
    })?;
    decode_value(kind, object, query)
}

fn respond(code: StatusCode, object: &Value, warnings: &[String]) -> Response {
    let mut r = json_response(code, object);
    for w in warnings {
        let text = format!("299 - \"{}\"", w.replace('"', "\\\""));
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append("warning", v);
        }
    }
    r
}

fn dry_run(query: &Query) -> Result<bool, Failure> {
    match param(query, "dryRun") {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(Failure::bad_request(format!(
            "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
        ))),
    }
}

fn now() -> String {
    Clock::rfc3339(Clock::default().now())
}

/// `POST` to a collection.
pub(crate) fn create(
    state: &Arc<State>,
    t: &Target,
    query: &Query,
    body: &Bytes,
) -> Result<Response, Failure> {
    let Decoded { mut object, warnings } = decode(t.kind, body, query)?;
    let dry = dry_run(query)?;
    let ns = t.namespace.clone().unwrap_or_default();
    let meta = &mut object["metadata"];
    let given_ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    if t.kind.namespaced {
        if !given_ns.is_empty() && given_ns != ns {
            return Err(Failure::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        meta["namespace"] = json!(ns);
    } else if let Some(m) = meta.as_object_mut() {
        m.remove("namespace");
    }
    let mut name = meta.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    if name.is_empty() {
        match meta.get("generateName").and_then(Value::as_str) {
            Some(prefix) if !prefix.is_empty() => name = format!("{prefix}{}", random_id(5)),
            _ => {
                return Err(Failure::invalid(
                    t.kind,
                    "",
                    &[(
                        "metadata.name".into(),
                        "FieldValueRequired",
                        "Required value: name or generateName is required".into(),
                    )],
                ));
            }
        }
        meta["name"] = json!(name);
    }
    let mut inner = state.lock();
    if t.kind.namespaced {
        let ns_kind = kinds::find("", "v1", "namespaces").expect("namespaces are served");
        if inner.store.get(&(ns_kind, String::new(), ns.clone())).is_none() {
            return Err(Failure::not_found(ns_kind, &ns));
        }
    }
    let key: Key = (t.kind, ns.clone(), name.clone());
    if inner.store.get(&key).is_some() {
        return Err(Failure::already_exists(t.kind, &name));
    }
    let uid = uuid();
    let mut next_ip = || inner.next_cluster_ip();
    objects::create(t.kind, &mut object, &name, Fresh { now: now(), uid, next_ip: &mut next_ip })?;
    if dry {
        return Ok(respond(StatusCode::CREATED, &object, &warnings));
    }
    let stored = inner.store.put(&key, object);
    drop(inner);
    state.changed();
    if t.kind.kind == "Pod" {
        pods::start(Arc::clone(state), ns, name);
    }
    Ok(respond(StatusCode::CREATED, &stored, &warnings))
}

/// A random uid in the form the API server gives (a UUID v4).
pub(crate) fn uuid() -> String {
    let h = crate::common::token();
    format!("{}-{}-4{}-a{}-{}", &h[..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

/// Stores `new` over the object at `key` (whose current version is
/// `old`), after the kind's update rules; `precondition` is the
/// `resourceVersion` the writer saw, if it named one.
fn store_update(
    state: &State,
    t: &Target,
    key: &Key,
    mut new: Value,
    query: &Query,
    warnings: &[String],
) -> Result<Response, Failure> {
    let dry = dry_run(query)?;
    let mut inner = state.lock();
    let old = inner.store.get(key).cloned().ok_or_else(|| Failure::not_found(t.kind, &key.2))?;
    let seen = new["metadata"].get("resourceVersion").and_then(Value::as_str).unwrap_or("");
    if !seen.is_empty() && Some(seen) != old["metadata"]["resourceVersion"].as_str() {
        return Err(Failure::conflict(t.kind, &key.2));
    }
    new["metadata"]["namespace"] = old["metadata"]["namespace"].clone();
    if let Some(m) = new["metadata"].as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    objects::update(t.kind, &old, &mut new, t.sub.is_some())?;
    if dry || new == old {
        return Ok(respond(StatusCode::OK, &old, warnings));
    }
    let stored = inner.store.put(key, new);
    drop(inner);
    state.changed();
    Ok(respond(StatusCode::OK, &stored, warnings))
}

fn key_of(t: &Target) -> Key {
    (t.kind, t.namespace.clone().unwrap_or_default(), t.name.clone().unwrap_or_default())
}

/// `PUT` to an object (or its `status`).
pub(crate) fn replace(
    state: &Arc<State>,
    t: &Target,
    query: &Query,
    body: &Bytes,
) -> Result<Response, Failure> {
    let Decoded { object, warnings } = decode(t.kind, body, query)?;
    let key = key_of(t);
    let named = object["metadata"].get("name").and_then(Value::as_str).unwrap_or("");
    if named != key.2 {
        return Err(Failure::bad_request(format!(
            "the name of the object ({named}) does not match the name on the URL ({})",
            key.2
        )));
    }
    store_update(state, t, &key, object, query, &warnings)
}

/// `PATCH` of an object (or its `status`): JSON merge, strategic merge
/// or JSON patch, by `Content-Type`.
pub(crate) fn patch(
    state: &Arc<State>,
    t: &Target,
    query: &Query,
    content_type: &str,
    body: &Bytes,
) -> Result<Response, Failure> {
    let kind_of_patch = content_type.split(';').next().unwrap_or("").trim();
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| Failure::bad_request(format!("error decoding patch: {e}")))?;
    let key = key_of(t);
    let mut object = {
        let inner = state.lock();
        inner.store.get(&key).cloned().ok_or_else(|| Failure::not_found(t.kind, &key.2))?
    };
    let current_rv = object["metadata"]["resourceVersion"].clone();
    object["metadata"]["resourceVersion"] = Value::Null;
    let applied = match kind_of_patch {
        "application/merge-patch+json" => {
            super::patch::merge(&mut object, &patch);
            Ok(())
        }
        "application/strategic-merge-patch+json" if t.kind.built_in() => {
            super::patch::strategic(&mut object, &patch)
        }
        "application/json-patch+json" => super::patch::json_patch(&mut object, &patch),
        _ => return Err(Failure::unsupported_media(t.kind)),
    };
    applied
        .map_err(|e| Failure::invalid(t.kind, &key.2, &[("".into(), "FieldValueInvalid", e)]))?;
    if object["metadata"]["resourceVersion"].is_null() {
        object["metadata"]["resourceVersion"] = current_rv;
    }
    let Decoded { object, warnings } = decode_value(t.kind, object, query)?;
    store_update(state, t, &key, object, query, &warnings)
}

/// The `DeleteOptions` of a delete's body, checked against `object`.
fn preconditions(t: &Target, object: &Value, options: &Value) -> Result<(), Failure> {
    let pre = &options["preconditions"];
    for (field, at) in [("resourceVersion", "ResourceVersion"), ("uid", "UID")] {
        if let Some(want) = pre.get(field).and_then(Value::as_str) {
            let have = object["metadata"][field].as_str().unwrap_or("");
            if want != have {
                let mut f = Failure::conflict(t.kind, t.name.as_deref().unwrap_or(""));
                f.message = format!(
                    "Operation cannot be fulfilled on {} \"{}\": Precondition failed: {at} in precondition: {want}, {at} in object meta: {have}",
                    t.kind.qualified(),
                    t.name.as_deref().unwrap_or("")
                );
                return Err(f);
            }
        }
    }
    Ok(())
}

/// `DELETE` of an object. A Pod is deleted gracefully: it gets its
/// `deletionTimestamp` and is answered, and goes once its container is
/// removed; anything else goes at once, answered with a `Status` (a
/// Service with itself, as the API server does).
pub(crate) fn delete(
    state: &Arc<State>,
    t: &Target,
    query: &Query,
    body: &Bytes,
) -> Result<Response, Failure> {
    let options: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| Failure::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    let dry = dry_run(query)?;
    let key = key_of(t);
    let mut inner = state.lock();
    let object =
        inner.store.get(&key).cloned().ok_or_else(|| Failure::not_found(t.kind, &key.2))?;
    preconditions(t, &object, &options)?;
    if dry {
        return Ok(json_response(StatusCode::OK, &object));
    }
    if t.kind.kind == "Pod" {
        if object["metadata"].get("deletionTimestamp").is_some() {
            return Ok(json_response(StatusCode::OK, &object));
        }
        drop(inner);
        let grace = options.get("gracePeriodSeconds").and_then(Value::as_i64);
        let stored = pods::delete(state, &key.1, &key.2, grace).unwrap_or(object);
        return Ok(json_response(StatusCode::OK, &stored));
    }
    let gone = inner.store.remove(&key).expect("the object was there");
    drop(inner);
    state.changed();
    if t.kind.kind == "Service" {
        return Ok(json_response(StatusCode::OK, &gone));
    }
    let uid = gone["metadata"]["uid"].as_str().unwrap_or("");
    Ok(json_response(StatusCode::OK, &deleted(t.kind, &key.2, uid)))
}

/// `DELETE` of a collection: each object its selectors match, answered as
/// the list of them.
pub(crate) fn delete_collection(
    state: &Arc<State>,
    t: &Target,
    query: &Query,
) -> Result<Response, Failure> {
    let (labels, fields) = selectors(t, query)?;
    let names: Vec<String> = state
        .lock()
        .store
        .list(t.kind, t.namespace.as_deref())
        .iter()
        .filter(|o| labels.matches(o) && fields.matches(t.kind.resource, o))
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    let mut items = Vec::new();
    for name in names {
        let one = Target { name: Some(name), ..t.clone() };
        delete(state, &one, query, &Bytes::new())?;
        if let Some(o) = state.lock().store.get(&key_of(&one)) {
            items.push(super::api::list_item(t.kind, o));
        }
    }
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "kind": format!("{}List", t.kind.kind),
            "apiVersion": t.kind.api_version(),
            "metadata": { "resourceVersion": state.lock().store.rv().to_string() },
            "items": items
        }),
    ))
}
