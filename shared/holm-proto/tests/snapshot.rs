//! The guest API's wire schema, checked in: `docs/api/guest.openapi.json`
//! is the OpenAPI document made from the contract, and this test fails on
//! any change to it that was not written there on purpose (run with
//! `HOLM_UPDATE_SNAPSHOTS=1` to write it, then review the diff). What a
//! change means for boxes that outlive a server is in docs/VERSIONING.md.

#[test]
fn the_guest_schema_matches_its_snapshot() {
    let doc = holm_proto::contract::guest_openapi("snapshot");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api/guest.openapi.json");
    let review = "say in docs/VERSIONING.md whether PROTO_VERSION moves";
    holm_proto::docgen::check_snapshot(&path, &doc, review).unwrap();
}

use holm_proto::contract::{GUEST_ROUTES, GuestRoute, Method, Op};
use holm_proto::guest::PROTO_VERSION;

/// `routes` of generation `generation` (those with `since` at most it),
/// each as method, path and `since`, sorted by path and method.
fn routes_of(routes: &[GuestRoute], generation: u32) -> serde_json::Value {
    let mut routes: Vec<_> = routes
        .iter()
        .filter(|r| r.served_by(generation))
        .map(|r| (r.path, r.method.as_str(), r.since))
        .collect();
    routes.sort_unstable();
    let routes = routes.into_iter().map(
        |(path, method, since)| serde_json::json!({"method": method, "path": path, "since": since}),
    );
    serde_json::Value::Array(routes.collect())
}

/// Checks generation `generation`'s list of `routes` against its file
/// (`docs/api/guest.routes.v<N>.json`) while the guest speaks `current`:
/// the current generation's is a snapshot like the OpenAPI document
/// (reviewed, written with `HOLM_UPDATE_SNAPSHOTS=1`); an earlier one is
/// frozen, compared and never written.
fn check_generation(routes: &[GuestRoute], generation: u32, current: u32) -> Result<(), String> {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api");
    let path = docs.join(format!("guest.routes.v{generation}.json"));
    let list = routes_of(routes, generation);
    if generation == current {
        let review = "say in docs/VERSIONING.md whether PROTO_VERSION moves";
        return holm_proto::docgen::check_snapshot(&path, &list, review);
    }
    let kept: Option<serde_json::Value> =
        std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok());
    if kept.as_ref() == Some(&list) {
        return Ok(());
    }
    Err(format!(
        "the routes of guest protocol generation {generation} are not {} (frozen once a later \
         generation exists): an older guest serves exactly these; a new route arrives in a new \
         generation (GuestRoute::since)",
        path.display()
    ))
}

/// One checked-in list of routes per guest protocol generation: a route
/// can arrive in a new generation, but the surface an old guest serves
/// cannot change without this test failing.
#[test]
fn each_protocol_generation_keeps_its_routes() {
    for generation in 1..=PROTO_VERSION {
        check_generation(GUEST_ROUTES, generation, PROTO_VERSION).unwrap();
    }
}

/// Once a later generation exists, an earlier one's list is compared and
/// never written: a route added to it fails, one that arrives in the new
/// generation does not.
#[test]
fn an_earlier_generation_is_frozen() {
    let later = PROTO_VERSION + 1;
    let added = GuestRoute::new(Method::Get, "/v1/added", Op::empty("guest", "A new route"));
    let mut routes = GUEST_ROUTES.to_vec();
    routes.push(added.since(later));
    check_generation(&routes, PROTO_VERSION, later).unwrap();
    routes.pop();
    routes.push(added.since(PROTO_VERSION));
    let refused = check_generation(&routes, PROTO_VERSION, later).unwrap_err();
    assert!(refused.contains("frozen"), "{refused}");
}
