//! `holm runtime add/set/rm` with the real binary against a real holmd: the
//! key goes in from standard input or a variable, never the command line,
//! and never comes out.

mod common;

use std::process::Output;

use common::{holm_with, text};
use holm_testkit::TestServer;

const KEY: &str = "e2b_cli_key_5c4b3a29181716151413";
const KEY_2: &str = "e2b_cli_key_two_aabbccddeeff0011";
/// The runtime `vercel`'s API and registry: a closed loopback port (the
/// runtimes file sets a vendor's endpoints on the runtime named after it,
/// and allows that private address).
const CLOSED_VERCEL: &str = "[runtimes.vercel]\napi_url = \"http://127.0.0.1:1/api\"\nregistry_url = \"http://127.0.0.1:1\"\nallow_private_addresses = true\n";

fn holm(server: &TestServer, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    holm_with(server, args, stdin, env, &[KEY, KEY_2])
}

// The server runs in this process while `holm` blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_add_set_and_rm_take_the_key_from_stdin_or_a_variable() {
    // The Vercel runtime below is pointed at a closed loopback port, so the
    // vendor is never dialled and the runtime is unavailable.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, CLOSED_VERCEL).unwrap();
    let mut server = TestServer::start_without_image(move |c| {
        c.runtimes = Some(Vec::new());
        c.secret_key = Some("cli-test-server-key-0123456789abcdef0123".into());
        c.config_file = Some(file);
    })
    .await;
    server.keep(dir);

    // No key given: refused by the CLI, nothing sent.
    let o = holm(&server, &["runtime", "add", "vercel", "--provider", "e2b"], None, &[]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--api-key"), "{}", text(&o));
    // The key has no place on the command line: `--api-key` takes no value.
    let o = holm(
        &server,
        &["runtime", "add", "vercel", "--provider", "e2b", "--api-key", "key-on-argv"],
        None,
        &[],
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("unexpected argument 'key-on-argv'"), "{}", text(&o));

    let o = holm(
        &server,
        &[
            "runtime",
            "add",
            "vercel",
            "--provider",
            "vercel",
            "--field",
            "team_id=team_cli",
            "--field",
            "project_id=prj_cli",
            "--api-key",
        ],
        Some(&format!("{KEY}\n")),
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("unavailable"), "{}", text(&o));
    assert!(text(&o).contains("cannot connect"), "{}", text(&o));

    let o = holm(
        &server,
        &["runtime", "set", "vercel", "--field", "max_lifetime_secs=86400"],
        None,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = holm(
        &server,
        &["--json", "runtime", "set", "vercel", "--api-key-env", "MY_E2B_KEY"],
        None,
        &[("MY_E2B_KEY", KEY_2)],
    );
    assert!(o.status.success(), "{}", text(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["key_version"], 2);
    assert_eq!(info["max_lifetime_secs"], 86400);
    assert_eq!(info["secrets"], serde_json::json!(["api_key"]));

    let o = holm(&server, &["--json", "runtime", "ls"], None, &[]);
    assert!(o.status.success() && text(&o).contains("\"vercel\""), "{}", text(&o));

    // A host engine is refused, with the error's code and hint.
    let o = holm(
        &server,
        &["runtime", "add", "eng", "--provider", "docker", "--api-key"],
        Some("x"),
        &[],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("host engine"), "{}", text(&o));

    let o = holm(&server, &["runtime", "rm", "vercel"], None, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(server.client.runtimes().await.unwrap().is_empty());
}
