//! The `holmd` binary as a user runs it: embedded defaults, a clean stop on
//! SIGINT or SIGTERM, and boxes that outlive the server and are taken back
//! by the next one.

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

#[test]
fn refuses_a_public_address_without_a_token() {
    let out = Command::new(env!("CARGO_BIN_EXE_holmd"))
        .env("HOLM_SERVER_ADDR", "0.0.0.0:0")
        .env_remove("HOLM_SERVER_TOKEN")
        .env("HOLM_STATE_DIR", std::env::temp_dir().join("holmd-test-unused"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HOLM_SERVER_TOKEN"), "{err}");
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
