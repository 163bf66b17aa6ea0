//! The embedded guest follows everything it is built from: each workspace
//! crate the guest links (its own, and the shared ones) is under an input
//! that `build.rs` names for `rerun-if-changed`, so an edit to any of them
//! rebuilds the guest, and so changes the box image's tag.

use std::path::Path;

include!("../guest_inputs.rs");

#[test]
fn every_crate_the_guest_links_is_an_input_of_its_build() {
    let ws = holm_testkit::workspace::Workspace::load();
    let crates = ws.local_dirs("holm-guest");
    assert!(crates.contains(Path::new("shared/holm-proto")), "{crates:?}");
    for dir in &crates {
        assert!(
            GUEST_INPUTS.iter().any(|input| dir.starts_with(input)),
            "the guest links {} but build.rs does not rebuild it when that changes: \
             add it to host/holm/guest_inputs.rs",
            dir.display()
        );
    }
    // Every input that is a crate is one the guest links (a stale entry
    // would hide a missing one), and the lock and manifest exist.
    for input in GUEST_INPUTS {
        let path = ws.root.join(input);
        if path.join("Cargo.toml").is_file() {
            assert!(crates.iter().any(|c| c.starts_with(input)), "{input} is not linked");
        }
    }
    for file in ["Cargo.lock", "Cargo.toml"] {
        assert!(ws.root.join(file).is_file());
    }
}
