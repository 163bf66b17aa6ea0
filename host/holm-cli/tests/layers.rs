//! The CLI is a client: it links no server code, and `holm bench` runs the
//! benchmark (which carries a server) as a program of its own.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use holm_testkit::workspace::Workspace;

/// Crates only a server links: holmd, its stores and its sealing.
const SERVER_ONLY: [&str; 5] =
    ["holmd", "rusqlite", "tokio-postgres", "rusty-s3", "chacha20poly1305"];

#[test]
fn the_cli_links_no_server_code() {
    let ws = Workspace::load();
    let cli = ws.links("holm-cli");
    assert!(cli.contains("holm-client") && cli.contains("holm-mcp"), "{cli:?}");
    for server in SERVER_ONLY {
        assert!(!cli.contains(server), "the holm CLI links {server}");
    }
    // The benchmark does link the server: that is why it is apart.
    assert!(ws.links("holm-bench").contains("holmd"));
}

fn holm(args: &[&str], bench: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(args)
        .env("HOLM_BENCH_BIN", bench)
        .output()
        .expect("run holm")
}

#[test]
fn holm_bench_runs_the_benchmark_program_with_its_arguments_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("holm-bench");
    std::fs::write(&fake, "#!/bin/sh\necho \"args: $*\"\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = fake.to_str().unwrap();

    let out = holm(&["bench", "--quick", "--out", "r.json"], fake);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "args: --quick --out r.json\n");
    assert_eq!(out.status.code(), Some(3), "its exit status is holm's");
    let out = holm(&["--json", "bench", "--help"], fake);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "args: --json --help\n");

    let out = holm(&["bench", "--quick"], "/nonexistent/holm-bench");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error[unavailable]: holm bench runs /nonexistent/holm-bench"), "{err}");
    assert!(err.contains("cargo build --release -p holm-bench"), "{err}");
}
