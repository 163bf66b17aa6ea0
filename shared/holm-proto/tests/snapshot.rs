//! The guest API's wire schema, checked in: `docs/api/guest.openapi.json`
//! is the OpenAPI document made from the contract, and this test fails on
//! any change to it that was not written there on purpose (run with
//! `HOLM_UPDATE_SNAPSHOTS=1` to write it, then review the diff). What a
//! change means for boxes that outlive a server is in docs/VERSIONING.md.

#[test]
fn the_guest_schema_matches_its_snapshot() {
    let doc = holm_proto::contract::guest_openapi("snapshot");
    let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api/guest.openapi.json");
    if std::env::var_os("HOLM_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == text,
        "the guest's wire schema changed; if on purpose, run with HOLM_UPDATE_SNAPSHOTS=1, \
         review the diff of {} and say in docs/VERSIONING.md whether PROTO_VERSION moves",
        path.display()
    );
}
