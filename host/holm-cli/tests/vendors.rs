//! `holm new --runtime e2b`, `--runtime daytona` and `--runtime runtime-cloud`
//! with the real binary, a real holmd and the vendor's stand-in, the key
//! added as the deploy guide shows it (`holm runtime add NAME --provider
//! NAME --api-key`, the key on standard input); the box's commands and
//! screenshot through the vendor's proxy; `holm rm` ends the vendor's
//! sandbox. No key comes out.

mod common;

use std::process::Output;

use common::{holm_with, text};
use holm_testkit::cloud::{Cloud, Standin};
use holm_testkit::{TestServer, e2e_enabled, ensure_image};

fn holm(server: &TestServer, args: &[&str], stdin: Option<&str>, key: &str) -> Output {
    holm_with(server, args, stdin, &[], &[key])
}

async fn a_box_from_the_cli(cloud: Cloud) {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let standin = Standin::start(cloud).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, standin.runtimes_file()).unwrap();
    let mut server = TestServer::start_without_image(move |c| {
        c.config_file = Some(file);
        c.secret_key = Some("cli-vendor-test-server-key-0123456789abcdef".into());
    })
    .await;
    server.keep(dir);
    let name = cloud.name();
    let key = standin.key().to_owned();

    let o =
        holm(&server, &["runtime", "add", name, "--provider", name, "--api-key"], Some(&key), &key);
    assert!(o.status.success(), "{}", text(&o));
    let o = holm(&server, &["--json", "runtime", "get", name], None, &key);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(info["state"], "available", "{info}");
    assert_eq!(info["place"], "remote");

    let o = holm(&server, &["new", "--runtime", name, "--ttl", "15"], None, &key);
    assert!(o.status.success(), "{}", text(&o));
    let id = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    assert!(holm::ids::is_box_id(&id), "{id:?}");

    let o =
        holm(&server, &["exec", &id, "--", "sh", "-c", "echo at the vendor; exit 4"], None, &key);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "at the vendor\n");
    let o = holm(&server, &["screenshot", &id, "-"], None, &key);
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stdout.starts_with(b"\x89PNG"), "a PNG on standard output");

    let sandbox = server.service.get(&id).unwrap().record().machine_id.expect("its sandbox");
    assert!(standin.has_sandbox(&sandbox));
    let o = holm(&server, &["rm", &id], None, &key);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!standin.has_sandbox(&sandbox), "holm rm ended the vendor's sandbox");
}

// The server runs in this process while `holm` blocks a thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holm_new_runtime_e2b_with_the_key_added_as_the_guide_shows() {
    a_box_from_the_cli(Cloud::E2b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holm_new_runtime_daytona_with_the_key_added_as_the_guide_shows() {
    a_box_from_the_cli(Cloud::Daytona).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holm_new_runtime_runtime_cloud_with_the_key_added_as_the_guide_shows() {
    a_box_from_the_cli(Cloud::RuntimeCloud).await;
}
