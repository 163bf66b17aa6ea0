//! Routes and their documentation, declared once: [`Api`] registers each
//! handler with axum by its route record
//! ([`holm_proto::contract::server::SERVER_ROUTES`]: method, path, what it
//! takes and answers), and [`openapi`] turns the records into
//! `/v1/openapi.json`. A route cannot be served without being documented,
//! nor documented without being served. The guest's routes that holmd
//! forwards come from the one table of them
//! ([`holm_proto::contract::GUEST_ROUTES`]), so a guest route cannot be
//! left out of holmd's forwarding or its document.

use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use axum::{Extension, Router};
use std::collections::HashMap;

use holm_proto::contract::server::ServerRoute;
use holm_proto::contract::{Body, Documented, GUEST_ROUTES, GuestRoute, Holmd, Method};
use serde_json::Value;

/// A router that documents every route it serves.
#[derive(Debug)]
pub struct Api<S> {
    router: Router<S>,
    ops: Vec<Documented>,
    records: Records,
}

impl<S: Clone + Send + Sync + 'static> Default for Api<S> {
    fn default() -> Self {
        Self { router: Router::new(), ops: Vec::new(), records: Records::default() }
    }
}

/// The record a served route was registered with.
#[derive(Debug, Clone, Copy)]
pub enum Record {
    /// A route of holmd's own.
    Own(ServerRoute),
    /// A guest route holmd forwards.
    Forwarded(&'static GuestRoute),
}

impl Record {
    /// Whether a request of it is traced on the box its path names: every
    /// forwarded guest route, and each of holmd's own under
    /// `/v1/boxes/{id}` but those that only read what the server keeps
    /// ([`ServerRoute::untraced`]).
    pub fn traced(&self) -> bool {
        match self {
            Self::Forwarded(_) => true,
            Self::Own(r) => r.path.starts_with("/v1/boxes/{id}") && !r.untraced,
        }
    }

    /// What it is on the box's timeline ([`holm_proto::contract::Step`]);
    /// `None` for a read.
    pub fn step(&self) -> Option<holm_proto::contract::Step> {
        match self {
            Self::Own(r) => r.step,
            Self::Forwarded(r) => r.step,
        }
    }

    /// Whether its body is raw bytes (a file's contents, standard input):
    /// counted as it streams, never read.
    pub fn raw_body(&self) -> bool {
        let op = match self {
            Self::Own(r) => r.op,
            Self::Forwarded(r) => r.op,
        };
        matches!(op.body, Body::Bytes)
    }
}

/// The record of each served route, by its method and its path as
/// registered (what axum names a request's `MatchedPath`).
#[derive(Debug, Clone, Default)]
pub struct Records(HashMap<(Method, String), Record>);

impl Records {
    /// The record of a `method` request that matched the route `matched`.
    pub fn of(&self, method: &axum::http::Method, matched: &str) -> Option<Record> {
        let method = Method::parse(method.as_str())?;
        self.0.get(&(method, matched.to_owned())).copied()
    }
}

impl<S: Clone + Send + Sync + 'static> Api<S> {
    fn add(mut self, method: Method, path: &str, route: MethodRouter<S>, record: Record) -> Self {
        let op = match record {
            Record::Own(r) => r.op,
            Record::Forwarded(r) => r.op,
        };
        self.router = self.router.route(path, route);
        self.ops.push(Documented { method, path: path.to_owned(), op });
        self.records.0.insert((method, path.to_owned()), record);
        self
    }

    /// Serves `route`, a record of holmd's own
    /// ([`holm_proto::contract::server`]), with `h`, documented as the
    /// record says.
    pub fn serve<H: Handler<T, S>, T: 'static>(self, route: ServerRoute, h: H) -> Self {
        self.add(route.method, route.path, method_router(route.method, h), Record::Own(route))
    }

    /// Serves every guest route that holmd forwards, at
    /// `/v1/boxes/{id}/...`, with `forward`, documented as the table says;
    /// `forward` is handed the route's record (`Extension<&'static
    /// GuestRoute>`), so it reads the route's facts, never its path.
    pub fn forwarded<H: Handler<T, S> + Clone, T: 'static>(mut self, forward: H) -> Self {
        for r in GUEST_ROUTES.iter().filter(|r| r.holmd == Holmd::Forward) {
            let path = r.forwarded_path().expect("a forwarded route has a path through holmd");
            let route = method_router(r.method, forward.clone()).layer(Extension(r));
            self = self.add(r.method, &path, route, Record::Forwarded(r));
        }
        self
    }

    /// The record of each route, for the middleware that runs once a
    /// route matched (tracing and the timeline).
    pub fn records(&self) -> Records {
        self.records.clone()
    }

    /// The router and the routes' documentation.
    pub fn into_parts(self) -> (Router<S>, Vec<Documented>) {
        (self.router, self.ops)
    }
}

/// `h` serving `method`.
fn method_router<S, H, T>(method: Method, h: H) -> MethodRouter<S>
where
    S: Clone + Send + Sync + 'static,
    H: Handler<T, S>,
    T: 'static,
{
    match method {
        Method::Get => get(h),
        Method::Post => post(h),
        Method::Put => put(h),
        Method::Patch => patch(h),
        Method::Delete => delete(h),
    }
}

/// The OpenAPI 3.1 document of `ops`.
pub fn openapi(ops: &[Documented], version: &str) -> Value {
    holm_proto::contract::openapi(
        ops,
        "holmd",
        version,
        "Boxes: Linux desktops for AI agents, on every runtime. Every error has one shape: \
         {\"error\": {\"code\", \"message\", \"hint\", \"details\", \"request_id\"}}.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_route_is_documented_and_every_reference_resolves() {
        let (_, ops) = crate::api::routes().into_parts();
        let doc = openapi(&ops, "test");
        assert_eq!(doc["openapi"], "3.1.0");
        let paths = doc["paths"].as_object().unwrap();
        for op in &ops {
            let entry = &paths[op.path.as_str()][op.method.lower()];
            assert!(entry["responses"].is_object(), "{} {} has no responses", op.method, op.path);
            assert!(entry["summary"].as_str().is_some_and(|s| !s.is_empty()));
        }
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(!all.is_empty());
        for r in all {
            let pointer = r.strip_prefix('#').expect("local reference");
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
        let ids: std::collections::HashSet<&str> = paths
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .map(|o| o["operationId"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), ops.len(), "operation ids must be unique");
    }

    #[test]
    fn query_types_become_parameters() {
        let (_, ops) = crate::api::routes().into_parts();
        let doc = openapi(&ops, "test");
        let params =
            doc["paths"]["/v1/boxes/{id}/screens/{screen}/screenshot"]["get"]["parameters"]
                .as_array()
                .unwrap();
        let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
        for want in ["id", "screen", "format", "region", "max_width", "cursor"] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        assert_eq!(doc["paths"]["/v1/health"]["get"]["security"], serde_json::json!([]));
    }

    /// holmd's wire schema, checked in (see docs/VERSIONING.md): fails on a
    /// change not written to `docs/api/holmd.openapi.json` on purpose (run
    /// with `HOLM_UPDATE_SNAPSHOTS=1`, then review the diff).
    #[test]
    fn the_server_schema_matches_its_snapshot() {
        let (_, ops) = crate::api::routes().into_parts();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/api/holmd.openapi.json");
        let review = "keep /v1 to additions (docs/VERSIONING.md)";
        holm_proto::docgen::check_snapshot(&path, &openapi(&ops, "snapshot"), review).unwrap();
    }

    #[test]
    fn holmd_serves_each_of_its_route_records_once() {
        let (_, ops) = crate::api::routes().into_parts();
        let own: Vec<&Documented> = ops
            .iter()
            .filter(|o| {
                !GUEST_ROUTES.iter().any(|g| {
                    g.method == o.method && g.forwarded_path().as_deref() == Some(o.path.as_str())
                })
            })
            .collect();
        let records = holm_proto::contract::server::SERVER_ROUTES;
        assert_eq!(own.len(), records.len());
        for (served, record) in own.iter().zip(records) {
            assert_eq!((served.method, served.path.as_str()), (record.method, record.path));
        }
    }

    #[test]
    fn the_records_say_which_bodies_are_raw_and_which_routes_are_traced() {
        let api = crate::api::routes();
        let records = api.records();
        let (_, ops) = api.into_parts();
        let raw = [
            ("PUT", "/v1/boxes/{id}/files/content"),
            ("POST", "/v1/boxes/{id}/processes/{process}/stdin"),
        ];
        let reads = ["", "/progress", "/traces", "/timeline", "/timeline/export"];
        for op in &ops {
            let method = axum::http::Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
            let record = records.of(&method, &op.path).expect("every served route has its record");
            let key = (op.method.as_str(), op.path.as_str());
            assert_eq!(record.raw_body(), raw.contains(&key), "{key:?}");
            let rest = op.path.strip_prefix("/v1/boxes/{id}");
            let reading = op.method == Method::Get
                && rest.is_some_and(|r| reads.contains(&r) || r.starts_with("/timeline/"));
            assert_eq!(record.traced(), rest.is_some() && !reading, "{key:?}");
        }
    }

    #[test]
    fn every_forwarded_guest_route_is_served_and_documented() {
        let (_, ops) = crate::api::routes().into_parts();
        for r in holm_proto::contract::GUEST_ROUTES {
            let Some(path) = r.forwarded_path() else { continue };
            assert!(
                ops.iter().any(|o| o.method == r.method && o.path == path),
                "{} {path} is not served",
                r.method
            );
        }
    }
}
