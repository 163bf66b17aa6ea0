// Everything the embedded guest is built from, relative to the workspace
// root. `build.rs` reruns the nested guest build when any of these changes;
// `tests/guest_inputs.rs` fails when a crate the guest links is missing.
// Shared by both with `include!`.

/// The inputs of the guest's build: its crates, every workspace crate it
/// links, and the workspace's lock, manifest and cargo configuration.
const GUEST_INPUTS: &[&str] = &[
    "guest-agent",
    "shared/holm-proto",
    "shared/holm-http",
    "Cargo.lock",
    "Cargo.toml",
    ".cargo/config.toml",
    "rust-toolchain.toml",
];
