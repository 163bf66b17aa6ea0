//! Runs the Rust examples against real boxes on Docker, as a user would:
//! the built programs, with only the environment docs/library.md names.

use std::process::Command;

use holm_testkit::{TestServer, e2e_enabled, ensure_image};

// The server runs in this process while the example blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loop_reaches_its_goal_through_holm_client() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let o = Command::new(env!("CARGO_BIN_EXE_agent_loop"))
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .output()
        .expect("run agent_loop");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(": act (2 actions)") && out.contains("holds the line"), "{out}");
    let id = out.lines().find_map(|l| l.strip_prefix("box ")).expect("the box id").to_owned();
    let info = server.client.get_box(&id, None).await.unwrap();
    assert_eq!(info.state, holm_proto::host::BoxState::Removed, "the example removes its box");
}

#[tokio::test]
async fn computer_builder_drives_a_box_with_no_server() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let dir = tempfile_dir();
    let shot = dir.join("shot.png");
    let o = Command::new(env!("CARGO_BIN_EXE_computer"))
        .arg(&shot)
        .env_remove("HOLM_SERVER_URL")
        .output()
        .expect("run computer");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("uname: Linux"), "{out}");
    let bytes = std::fs::read(&shot).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG was written");
    let id = out.lines().find_map(|l| l.strip_prefix("box ")).expect("the box id");
    assert!(!holm_testkit::container_exists(id).await, "the example removes its box");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("holm-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
