//! The routes: discovery, the OpenAPI index, and each kind's collection
//! and objects (`/api/v1/namespaces/{ns}/pods/{name}`,
//! `/apis/{group}/{version}/…`), behind the call log. Plain HTTP carries no
//! credentials (client-go sends a bearer token only over TLS), so, like
//! the API server's old insecure port, the stand-in authenticates nobody.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State as AxState};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::kinds::{self, Kind};
use super::selector::{Fields, Labels};
use super::status::{Failure, json_response};
use super::{State, table, watch, write};
use crate::common::Call;

/// What a request names: a kind, maybe a namespace, an object, and a
/// subresource.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub kind: &'static Kind,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub sub: Option<String>,
}

/// A request's query, as pairs.
pub(crate) type Query = Vec<(String, String)>;

/// The value of `key` in `query`.
pub(crate) fn param<'a>(query: &'a Query, key: &str) -> Option<&'a str> {
    query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// The one route: every path is read here, as the API server's own mux
/// reads it.
pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new().fallback(handle).with_state(state)
}

async fn handle(AxState(state): AxState<Arc<State>>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query: Query = form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let (content_type, accept) = {
        let header = |name: &str| {
            req.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
        };
        (header("content-type"), header("accept"))
    };
    let body = axum::body::to_bytes(req.into_body(), 64 << 20).await.unwrap_or_default();
    let request = Incoming {
        method: &method,
        query: &query,
        content_type: &content_type,
        accept: &accept,
        body,
    };
    let response = route(&state, &path, request);
    state.calls.push(Call {
        method: method.as_str().to_owned(),
        path,
        status: response.status().as_u16(),
        trace: None,
    });
    response
}

fn ok(v: &Value) -> Response {
    json_response(StatusCode::OK, v)
}

/// What a request brings besides its path.
struct Incoming<'a> {
    method: &'a Method,
    query: &'a Query,
    content_type: &'a str,
    accept: &'a str,
    body: Bytes,
}

fn route(state: &Arc<State>, path: &str, req: Incoming<'_>) -> Response {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let get = req.method == Method::GET;
    match segs.as_slice() {
        ["version"] if get => ok(&kinds::version()),
        ["healthz" | "livez" | "readyz"] if get => "ok".into_response(),
        ["api"] if get => ok(&kinds::core_versions(&state.server)),
        ["apis"] if get => ok(&kinds::group_list()),
        ["api", v] if get => opt(kinds::resource_list("", v)),
        ["apis", g] if get => opt(kinds::group_of(g)),
        ["apis", g, v] if get => opt(kinds::resource_list(g, v)),
        ["openapi", "v3"] if get => ok(&kinds::openapi_index()),
        ["openapi", "v3", rest @ ..] if get => opt(kinds::openapi_doc(&rest.join("/"))),
        ["api", v, rest @ ..] => resource(state, target("", v, rest), req),
        ["apis", g, v, rest @ ..] => resource(state, target(g, v, rest), req),
        _ => Failure::no_route().into_response(),
    }
}

fn opt(v: Option<Value>) -> Response {
    match v {
        Some(v) => ok(&v),
        None => Failure::no_route().into_response(),
    }
}

/// Reads `rest` (after `/api/v1` or `/apis/{g}/{v}`) as a target.
fn target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let owned = |s: &&str| (*s).to_owned();
    let (namespace, rest) = match rest {
        ["namespaces", ns, r, tail @ ..] if *r != "status" => (Some(ns.to_string()), {
            let mut v = vec![*r];
            v.extend_from_slice(tail);
            v
        }),
        _ => (None, rest.to_vec()),
    };
    let kind = kinds::find(group, version, rest.first()?)?;
    let unplaced = kind.namespaced && namespace.is_none() && rest.len() > 1;
    if unplaced || !kind.namespaced && namespace.is_some() {
        return None;
    }
    if rest.len() > 3 {
        return None;
    }
    Some(Target { kind, namespace, name: rest.get(1).map(owned), sub: rest.get(2).map(owned) })
}

fn resource(state: &Arc<State>, target: Option<Target>, req: Incoming<'_>) -> Response {
    let Incoming { method, query, content_type, accept, body } = req;
    let Some(t) = target else {
        return Failure::no_route().into_response();
    };
    if t.sub.as_deref().is_some_and(|s| s != "status" || !t.kind.status) {
        return Failure::no_route().into_response();
    }
    let watching = param(query, "watch").is_some_and(|w| w == "1" || w == "true");
    let result = match (method.clone(), &t.name) {
        (Method::GET, None) if watching => return watch::stream(state, &t, query, accept),
        (Method::GET, None) => list(state, &t, query, accept),
        (Method::POST, None) if t.namespace.is_some() || !t.kind.namespaced => {
            write::create(state, &t, query, &body)
        }
        (Method::DELETE, None) => write::delete_collection(state, &t, query),
        (Method::GET, Some(name)) => get(state, &t, name, query, accept),
        (Method::PUT, Some(_)) => write::replace(state, &t, query, &body),
        (Method::PATCH, Some(_)) => write::patch(state, &t, query, content_type, &body),
        (Method::DELETE, Some(_)) => write::delete(state, &t, query, &body),
        _ => Err(Failure::method_not_allowed()),
    };
    match result {
        Ok(r) => r,
        Err(f) => f.into_response(),
    }
}

fn get(
    state: &State,
    t: &Target,
    name: &str,
    query: &Query,
    accept: &str,
) -> Result<Response, Failure> {
    let key = (t.kind, t.namespace.clone().unwrap_or_default(), name.to_owned());
    let inner = state.lock();
    let o = inner.store.get(&key).ok_or_else(|| Failure::not_found(t.kind, name))?;
    if table::wanted(accept) {
        let rv =
            o["metadata"]["resourceVersion"].as_str().and_then(|v| v.parse().ok()).unwrap_or(0);
        return Ok(ok(&table::of(t.kind, std::slice::from_ref(o), rv, whole(query))));
    }
    Ok(ok(o))
}

/// Whether a Table's rows carry whole objects (`includeObject=Object`).
pub(crate) fn whole(query: &Query) -> bool {
    param(query, "includeObject") == Some("Object")
}

/// The selectors of a list or watch.
pub(crate) fn selectors(t: &Target, query: &Query) -> Result<(Labels, Fields), Failure> {
    let labels =
        Labels::parse(param(query, "labelSelector").unwrap_or("")).map_err(Failure::bad_request)?;
    let fields = Fields::parse(param(query, "fieldSelector").unwrap_or(""), t.kind.resource)
        .map_err(Failure::bad_request)?;
    Ok((labels, fields))
}

/// An item of a list: objects of built-in kinds carry no `kind` and
/// `apiVersion` there.
pub(crate) fn list_item(kind: &Kind, o: &Value) -> Value {
    let mut o = o.clone();
    if kind.built_in()
        && let Some(m) = o.as_object_mut()
    {
        m.remove("kind");
        m.remove("apiVersion");
    }
    o
}

fn list(state: &State, t: &Target, query: &Query, accept: &str) -> Result<Response, Failure> {
    let (labels, fields) = selectors(t, query)?;
    let inner = state.lock();
    let matching: Vec<Value> = inner
        .store
        .list(t.kind, t.namespace.as_deref())
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(t.kind.resource, o))
        .collect();
    if table::wanted(accept) {
        return Ok(ok(&table::of(t.kind, &matching, inner.store.rv(), whole(query))));
    }
    let items: Vec<Value> = matching.iter().map(|o| list_item(t.kind, o)).collect();
    Ok(ok(&json!({
        "kind": format!("{}List", t.kind.kind),
        "apiVersion": t.kind.api_version(),
        "metadata": { "resourceVersion": inner.store.rv().to_string() },
        "items": items
    })))
}
