//! `holm runtime add/set/rm` with the real binary against a real holmd: the
//! key goes in from standard input or a variable, never the command line,
//! and never comes out.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use holm_testkit::TestServer;

const KEY: &str = "e2b_cli_key_5c4b3a29181716151413";
const KEY_2: &str = "e2b_cli_key_two_aabbccddeeff0011";

fn holm(server: &TestServer, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(args)
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run holm");
    let mut input = child.stdin.take().unwrap();
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    for text in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(text);
        assert!(!text.contains(KEY) && !text.contains(KEY_2), "a key came out: {text}");
    }
    out
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

// The server runs in this process while `holm` blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_add_set_and_rm_take_the_key_from_stdin_or_a_variable() {
    let server = TestServer::start_without_image(|c| {
        c.runtimes = Some(Vec::new());
        c.secret_key = Some("cli-test-server-key-0123456789abcdef0123".into());
    })
    .await;

    // No key given: refused by the CLI, nothing sent.
    let o = holm(&server, &["runtime", "add", "cloud", "--provider", "e2b"], None, &[]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--api-key"), "{}", text(&o));
    // The key has no place on the command line: `--api-key` takes no value.
    let o = holm(
        &server,
        &["runtime", "add", "cloud", "--provider", "e2b", "--api-key", "key-on-argv"],
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
            "cloud",
            "--provider",
            "e2b",
            "--field",
            "public_traffic=true",
            "--api-key",
        ],
        Some(&format!("{KEY}\n")),
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("no adapter for provider e2b"), "{}", text(&o));

    let o = holm(
        &server,
        &["runtime", "set", "cloud", "--field", "max_lifetime_secs=86400"],
        None,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = holm(
        &server,
        &["--json", "runtime", "set", "cloud", "--api-key-env", "MY_E2B_KEY"],
        None,
        &[("MY_E2B_KEY", KEY_2)],
    );
    assert!(o.status.success(), "{}", text(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["key_version"], 2);
    assert_eq!(info["max_lifetime_secs"], 86400);
    assert_eq!(info["secrets"], serde_json::json!(["api_key"]));

    let o = holm(&server, &["--json", "runtime", "ls"], None, &[]);
    assert!(o.status.success() && text(&o).contains("\"cloud\""), "{}", text(&o));

    // A host engine is refused, with the error's code and hint.
    let o = holm(
        &server,
        &["runtime", "add", "eng", "--provider", "docker", "--api-key"],
        Some("x"),
        &[],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("host engine"), "{}", text(&o));

    let o = holm(&server, &["runtime", "rm", "cloud"], None, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(server.client.runtimes().await.unwrap().is_empty());
}
