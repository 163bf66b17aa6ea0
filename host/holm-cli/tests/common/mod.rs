//! What the CLI's tests share: running the real `holm` binary against a
//! test server.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use holm_testkit::TestServer;

/// Runs `holm ARGS` against `server`, with `stdin` and `env`, and fails the
/// test when any of `secrets` comes out on standard output or error.
pub fn holm_with(
    server: &TestServer,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
    secrets: &[&str],
) -> Output {
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
        for secret in secrets {
            assert!(!text.contains(secret), "a secret came out: {text}");
        }
    }
    out
}

/// Standard output and error together.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}
