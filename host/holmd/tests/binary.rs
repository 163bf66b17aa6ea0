//! The `holmd` binary as a user runs it: embedded defaults, a clean stop on
//! SIGINT or SIGTERM, and boxes that outlive the server and are taken back
//! by the next one. It fails closed: every configuration that would answer
//! beyond loopback without a token is refused at start, naming the
//! setting; a token file that is missing, unreadable or empty is a start
//! error; only the explicit opt-out starts such a server, and says so.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use holm_client::Client;
use holm_proto::host::BoxState;
use holm_testkit::{e2e_enabled, ensure_image};

struct Holmd {
    child: Child,
    url: String,
}

impl Holmd {
    fn start(state_dir: &std::path::Path, port: u16, token: &str) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_holmd"))
            .env("HOLM_SERVER_ADDR", format!("127.0.0.1:{port}"))
            .env("HOLM_SERVER_TOKEN", token)
            .env("HOLM_STATE_DIR", state_dir)
            // Its own name: it takes back only the boxes it labelled.
            .env("HOLM_SERVER_NAME", format!("binary-{port}"))
            .env("RUST_LOG", "holmd=debug")
            .stdin(Stdio::null())
            .spawn()
            .expect("start holmd");
        Self { child, url: format!("http://127.0.0.1:{port}") }
    }

    async fn wait_healthy(&self, client: &Client) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while client.health().await.is_err() {
            assert!(Instant::now() < deadline, "holmd at {} did not answer", self.url);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends `signal` and waits for the exit status.
    fn stop(mut self, signal: i32) -> std::process::ExitStatus {
        // SAFETY: kill takes plain integers.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "holmd did not stop on signal {signal}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Holmd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// holmd started with `env` (on a fresh environment but for `PATH`) and
/// `args`, run to its exit: its status and what it wrote.
fn refused(env: &[(&str, &str)], args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_holmd"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOLM_STATE_DIR", std::env::temp_dir().join("holmd-test-unused"))
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out");
    let out = std::fs::File::create(&log).unwrap();
    let mut child = c.stdout(out.try_clone().unwrap()).stderr(out).spawn().unwrap();
    // A holmd that started would run until stopped: one that is still
    // running after a while was not refused (and is stopped).
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "holmd started with {env:?} {args:?}: {}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, std::fs::read_to_string(&log).unwrap())
}

#[test]
fn refuses_to_answer_beyond_loopback_without_a_token() {
    let public = ("HOLM_PUBLIC_URL", "https://boxes.example.com");
    let open: [(&[(&str, &str)], &str); 4] = [
        (&[("HOLM_SERVER_ADDR", "0.0.0.0:0")], "HOLM_SERVER_ADDR=0.0.0.0:0"),
        (&[("HOLM_SERVER_ADDR", "[::]:0")], "HOLM_SERVER_ADDR=[::]:0"),
        (
            &[("HOLM_SERVER_ADDR", "127.0.0.1:0"), public],
            "HOLM_PUBLIC_URL=https://boxes.example.com",
        ),
        // An empty token is no token (what `$(cat unreadable)` gave).
        (&[("HOLM_SERVER_TOKEN", ""), public], "HOLM_PUBLIC_URL"),
    ];
    for (env, setting) in open {
        let (status, said) = refused(env, &[]);
        assert!(!status.success(), "{env:?} started");
        assert!(said.contains(setting), "{env:?}: {said}");
        assert!(said.contains("HOLM_SERVER_TOKEN_FILE"), "{env:?}: {said}");
        assert!(!said.contains("listening"), "{env:?}: {said}");
    }
    // The opt-out with a token, or spelt otherwise, is refused too.
    let (status, said) = refused(
        &[("HOLM_SERVER_TOKEN", "0123456789abcdef0123"), ("HOLM_INSECURE_NO_TOKEN", "1")],
        &[],
    );
    assert!(!status.success() && said.contains("HOLM_INSECURE_NO_TOKEN"), "{said}");
    let (status, said) = refused(&[public, ("HOLM_INSECURE_NO_TOKEN", "yes")], &[]);
    assert!(!status.success() && said.contains("HOLM_INSECURE_NO_TOKEN"), "{said}");
    let (status, said) = refused(&[], &["--insecure"]);
    assert!(!status.success() && said.contains("--insecure-no-token"), "{said}");
}

#[test]
fn a_token_file_that_cannot_give_a_token_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, "short\n").unwrap();
    let missing = dir.path().join("missing");
    // A directory cannot be read as a file, whoever runs the test (root
    // reads a file of mode 0000).
    let unreadable = dir.path().join("unreadable");
    std::fs::create_dir(&unreadable).unwrap();
    let creds = dir.path().join("creds");
    std::fs::create_dir(&creds).unwrap();
    std::fs::write(creds.join("token"), "").unwrap();
    let cases: [(&str, &std::path::Path, &str); 5] = [
        ("HOLM_SERVER_TOKEN_FILE", &missing, "cannot read"),
        ("HOLM_SERVER_TOKEN_FILE", &unreadable, "cannot read"),
        ("HOLM_SERVER_TOKEN_FILE", &empty, "is empty"),
        ("HOLM_SERVER_TOKEN_FILE", &short, "shorter than 16"),
        ("CREDENTIALS_DIRECTORY", &creds, "is empty"),
    ];
    for (var, path, message) in cases {
        let path = path.to_str().unwrap();
        // On loopback with no proxy, too: a named file is never skipped.
        let (status, said) = refused(&[(var, path), ("HOLM_SERVER_ADDR", "127.0.0.1:0")], &[]);
        assert!(!status.success(), "{var}={path} started: {said}");
        assert!(said.contains(message), "{var}={path}: {said}");
        let name =
            if var == "CREDENTIALS_DIRECTORY" { "$CREDENTIALS_DIRECTORY/token" } else { var };
        assert!(said.contains(name), "{var}={path}: {said}");
    }
}

/// A holmd that started, its output in `dir/holmd.log`.
struct Started {
    child: Child,
    url: String,
    log: std::path::PathBuf,
}

impl Started {
    async fn run(dir: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Self {
        let port = free_port();
        let log = dir.join("holmd.log");
        let out = std::fs::File::create(&log).unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_holmd"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOLM_SERVER_ADDR", format!("127.0.0.1:{port}"))
            .env("HOLM_STATE_DIR", dir.join("state"))
            .env("HOLM_SERVER_NAME", format!("binary-{port}"))
            .env("HOLM_SERVER_RUNTIMES", "docker")
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("start holmd");
        let url = format!("http://127.0.0.1:{port}");
        let http = holm_client::client_builder().no_proxy().build().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while http.get(format!("{url}/v1/health")).send().await.is_err() {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(child.try_wait().unwrap().is_none(), "holmd exited: {said}");
            assert!(Instant::now() < deadline, "holmd did not answer: {said}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, url, log }
    }

    /// `GET /v1/boxes` with `Host` and maybe a token: the status.
    async fn boxes(&self, host: &str, token: Option<&str>) -> u16 {
        let http = holm_client::client_builder().no_proxy().build().unwrap();
        let mut rb = http.get(format!("{}/v1/boxes", self.url)).header("host", host);
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        rb.send().await.unwrap().status().as_u16()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn only_the_explicit_opt_out_answers_beyond_loopback_without_a_token() {
    let public = ("HOLM_PUBLIC_URL", "https://boxes.example.com");
    for (env, args) in [
        (vec![public, ("HOLM_INSECURE_NO_TOKEN", "1")], vec![]),
        (vec![public], vec!["--insecure-no-token"]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let holmd = Started::run(dir.path(), &env, &args).await;
        // Open, as asked: what the proxy forwards is answered.
        assert_eq!(holmd.boxes("boxes.example.com", None).await, 200);
        let log = holmd.log_text();
        assert!(
            log.contains("INSECURE") && log.contains("without a credential"),
            "{env:?} {args:?}: {log}"
        );
    }
}

#[tokio::test]
async fn a_token_from_a_file_or_a_systemd_credential_guards_the_api() {
    let token = "file-token-0123456789abcdef";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let creds = tempfile::tempdir().unwrap();
    std::fs::write(creds.path().join("token"), token).unwrap();
    let public = ("HOLM_PUBLIC_URL", "https://boxes.example.com");
    for var in [
        ("HOLM_SERVER_TOKEN_FILE", file.to_str().unwrap()),
        ("CREDENTIALS_DIRECTORY", creds.path().to_str().unwrap()),
    ] {
        let state = tempfile::tempdir().unwrap();
        let holmd = Started::run(state.path(), &[var, public], &[]).await;
        assert_eq!(holmd.boxes("boxes.example.com", None).await, 401, "{var:?}");
        assert_eq!(holmd.boxes("boxes.example.com", Some("wrong-token-0123456789")).await, 401);
        assert_eq!(holmd.boxes("boxes.example.com", Some(token)).await, 200, "{var:?}");
        let log = holmd.log_text();
        assert!(!log.contains("without a credential") && !log.contains(token), "{log}");
    }
}

#[tokio::test]
async fn boxes_outlive_a_clean_stop_and_the_next_server_takes_them_back() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let dir = tempfile::tempdir().unwrap();
    let token = "binary-test-token-0123456789";
    let port = free_port();

    let first = Holmd::start(dir.path(), port, token);
    let client = Client::new(&first.url, Some(token));
    first.wait_healthy(&client).await;
    let id = client.create_box(&Default::default(), Some(600)).await.expect("create").id;
    let status = first.stop(libc::SIGINT);
    assert!(status.success(), "SIGINT: {status}");

    let second = Holmd::start(dir.path(), port, token);
    second.wait_healthy(&client).await;
    let info = client.get_box(&id, None).await.expect("the box is known again");
    assert_eq!(info.state, BoxState::Running);
    let out = client.boxed(&id).exec(&["echo", "still here"]).await.expect("exec after restart");
    assert_eq!(out.stdout, "still here\n");
    let status = second.stop(libc::SIGTERM);
    assert!(status.success(), "SIGTERM: {status}");

    let third = Holmd::start(dir.path(), port, token);
    third.wait_healthy(&client).await;
    // Both stops wrote the store: the traces of both servers are there.
    let traces = client.all_traces(&id).await.expect("traces");
    let paths: Vec<String> = traces.iter().map(|t| t.path.clone()).collect();
    assert_eq!(
        paths,
        ["/v1/boxes".to_owned(), format!("/v1/boxes/{id}/commands/run")],
        "{traces:?}"
    );
    client.remove_box(&id).await.expect("remove");
    assert!(!holm_testkit::container_exists(&id).await);
}
