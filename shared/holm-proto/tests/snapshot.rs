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
