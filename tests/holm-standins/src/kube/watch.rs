//! `?watch=1`: a stream of `{"type":"ADDED|MODIFIED|DELETED","object":…}`
//! lines, one per change after the `resourceVersion` asked for (with none,
//! or `0`, the objects there are now as `ADDED` first), filtered by the
//! selectors as the API server filters them (an object that stops
//! matching is `DELETED` to the watcher, one that starts is `ADDED`), and
//! ended after `timeoutSeconds`. `sendInitialEvents=true` ends the
//! initial objects with a `BOOKMARK` annotated
//! `k8s.io/initial-events-end`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::api::{Query, Target, param, selectors};
use super::kinds::Kind;
use super::selector::{Fields, Labels};
use super::status::Failure;
use super::store::Event;
use super::{State, table};

struct Watch {
    state: Arc<State>,
    kind: &'static Kind,
    namespace: Option<String>,
    labels: Labels,
    fields: Fields,
    from: u64,
    pending: VecDeque<Value>,
    changes: tokio::sync::watch::Receiver<u64>,
    deadline: Option<tokio::time::Instant>,
}

impl Watch {
    fn matches(&self, o: &Value) -> bool {
        self.labels.matches(o) && self.fields.matches(self.kind.resource, o)
    }

    /// The event a watcher with these selectors sees for `e`, if any.
    fn seen(&self, e: &Event) -> Option<Value> {
        let now = self.matches(&e.object);
        let kind = match (e.kind, e.before.as_ref().map(|b| self.matches(b))) {
            ("MODIFIED", Some(true)) if now => "MODIFIED",
            ("MODIFIED", Some(true)) => "DELETED",
            ("MODIFIED", _) if now => "ADDED",
            ("ADDED" | "DELETED", _) if now => e.kind,
            _ => return None,
        };
        Some(json!({ "type": kind, "object": e.object }))
    }

    /// Starts after version `from`, or with the objects there are now as
    /// `ADDED` (and, with `bookmark`, the `BOOKMARK` that ends them).
    fn start(&mut self, from: Option<u64>, bookmark: bool) {
        let inner = self.state.lock();
        self.from = from.unwrap_or_else(|| inner.store.rv());
        if from.is_some() {
            return;
        }
        for o in inner.store.list(self.kind, self.namespace.as_deref()) {
            if self.matches(&o) {
                self.pending.push_back(json!({ "type": "ADDED", "object": o }));
            }
        }
        if bookmark {
            self.pending.push_back(json!({ "type": "BOOKMARK", "object": {
                "kind": self.kind.kind,
                "apiVersion": self.kind.api_version(),
                "metadata": {
                    "resourceVersion": inner.store.rv().to_string(),
                    "annotations": { "k8s.io/initial-events-end": "true" }
                }
            } }));
        }
    }

    /// The next line, waiting for a change; `None` once the watch's time
    /// is up or the stand-in stops.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(v) = self.pending.pop_front() {
                return Some(v);
            }
            let events = {
                let inner = self.state.lock();
                inner.store.since(self.from, self.kind, self.namespace.as_deref())
            };
            if let Some(last) = events.last() {
                self.from = last.rv;
                let seen: Vec<Value> = events.iter().filter_map(|e| self.seen(e)).collect();
                self.pending.extend(seen);
                continue;
            }
            let changed = self.changes.changed();
            let result = match self.deadline {
                Some(d) => tokio::time::timeout_at(d, changed).await.ok()?,
                None => changed.await,
            };
            result.ok()?;
        }
    }
}

/// Answers a watch as a stream of JSON lines.
pub(crate) fn stream(state: &Arc<State>, t: &Target, query: &Query, accept: &str) -> Response {
    let (labels, fields) = match selectors(t, query) {
        Ok(s) => s,
        Err(f) => return f.into_response(),
    };
    let rv = param(query, "resourceVersion").unwrap_or("");
    let initial = rv.is_empty() || rv == "0";
    let from = if initial {
        None
    } else {
        match rv.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return Failure::bad_request(format!(
                    "resourceVersion: Invalid value: \"{rv}\": must be a number"
                ))
                .into_response();
            }
        }
    };
    let deadline = param(query, "timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|s| tokio::time::Instant::now() + Duration::from_secs(s));
    let changes = state.subscribe();
    let mut w = Watch {
        state: Arc::clone(state),
        kind: t.kind,
        namespace: t.namespace.clone(),
        labels,
        fields,
        from: 0,
        pending: VecDeque::new(),
        changes,
        deadline,
    };
    w.start(from, param(query, "sendInitialEvents") == Some("true"));
    // As Tables (kubectl's `get -w` without `-o`): one row per event,
    // the columns with the first.
    let tables = table::wanted(accept).then(|| (t.kind, super::api::whole(query)));
    let lines = futures_util::stream::unfold((w, true), move |(mut w, first)| async move {
        let mut v = w.next().await?;
        if let Some((kind, whole)) = tables {
            let rv = v["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|r| r.parse().ok())
                .unwrap_or(0);
            let mut t = table::of(kind, std::slice::from_ref(&v["object"]), rv, whole);
            if !first && let Some(m) = t.as_object_mut() {
                m.remove("columnDefinitions");
            }
            v["object"] = t;
        }
        Some((Ok::<_, Infallible>(Bytes::from(format!("{v}\n"))), (w, false)))
    });
    let mut r = (StatusCode::OK, Body::from_stream(lines)).into_response();
    r.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    r
}
