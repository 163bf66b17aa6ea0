//! The crash test: the real `holmd` binary is killed with SIGKILL while
//! creates are in flight, cycle after cycle, on each store. After each
//! restart:
//!
//! - every box whose create was answered is there, once, and runs again
//!   (a command through the server reaches it, so its secret came back);
//! - every create that was not answered is retried with its idempotency
//!   key: it answers the box the crash left (finished now) or makes it
//!   anew, never a second one;
//! - the boxes the server lists and the containers labelled with its name
//!   are the same set: no container without a record.
//!
//! Boxes run without Chromium to keep the machine's two cores for the test;
//! the kill lands at a different moment of the creates in each cycle.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use holm_client::Client;
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::services::{Postgres, S3, free_port};
use holm_testkit::{e2e_enabled, ensure_image, remove_server_boxes, unique_server_name};
use holmd::store::StoreConfig;

const CYCLES: usize = 5;
const CREATES: usize = 3;

/// Kill moments, one per cycle, from "as the requests leave" to "while the
/// desktops come up".
const KILL_AFTER_MS: [u64; CYCLES] = [0, 120, 400, 1200, 3000];

struct Holmd {
    child: Child,
}

impl Holmd {
    fn start(env: &[(String, String)], port: u16, name: &str, state: &std::path::Path) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_holmd"))
            .env("HOLM_SERVER_ADDR", format!("127.0.0.1:{port}"))
            .env("HOLM_SERVER_TOKEN", "crash-test-token-0123456789")
            .env("HOLM_SERVER_NAME", name)
            .env("HOLM_SERVER_RUNTIMES", "docker")
            .env("HOLM_STATE_DIR", state)
            .env("RUST_LOG", "holmd=warn")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .spawn()
            .expect("start holmd");
        Self { child }
    }

    fn kill(mut self) {
        // SIGKILL: nothing is flushed, nothing is closed.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Holmd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn healthy(client: &Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.health().await.is_err() {
        assert!(Instant::now() < deadline, "holmd did not answer after a restart");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn request() -> CreateBox {
    CreateBox {
        spec: BoxSpec { browser: Some(false), ..BoxSpec::default() },
        placement: Default::default(),
    }
}

async fn crash_cycles(storage: StoreConfig) {
    ensure_image().await;
    let state = tempfile::tempdir().unwrap();
    let name = unique_server_name();
    let env = common::store_env(&storage);
    let port = free_port();
    let client =
        Client::new(&format!("http://127.0.0.1:{port}"), Some("crash-test-token-0123456789"));
    // Every key sent, and the box it made once known.
    let mut made: BTreeMap<String, String> = BTreeMap::new();
    let mut acknowledged = 0;

    let mut server = Holmd::start(&env, port, &name, state.path());
    healthy(&client).await;
    for (cycle, kill_after) in KILL_AFTER_MS.iter().enumerate() {
        let keys: Vec<String> = (0..CREATES).map(|i| format!("{name}-{cycle}-{i}")).collect();
        let creates: Vec<_> = keys
            .iter()
            .map(|key| {
                let (client, key) = (client.clone(), key.clone());
                // Half wait for the desktop, so the kill finds them in flight.
                let wait = (cycle % 2 == 0).then_some(60);
                tokio::spawn(
                    async move { client.create_box_idempotent(&request(), &key, wait).await },
                )
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(*kill_after)).await;
        server.kill();
        for (key, create) in keys.iter().zip(creates) {
            match create.await.unwrap() {
                Ok(info) => {
                    acknowledged += 1;
                    made.insert(key.clone(), info.id);
                }
                Err(_) => {
                    made.insert(key.clone(), String::new());
                }
            }
        }

        server = Holmd::start(&env, port, &name, state.path());
        healthy(&client).await;
        // Retry what was not answered, with its key.
        for (key, id) in &mut made {
            let info = client.create_box_idempotent(&request(), key, None).await.expect("retry");
            if id.is_empty() {
                *id = info.id;
            } else {
                assert_eq!(&info.id, id, "an answered key made a second box");
                assert!(info.replayed);
            }
        }
        check(&client, &name, &made).await;
    }
    eprintln!(
        "crash test on {}: {CYCLES} kills, {} creates, {acknowledged} answered before a kill",
        storage.backend(),
        made.len()
    );
    for id in made.values() {
        client.remove_box(id).await.expect("remove");
    }
    server.kill();
    remove_server_boxes(&name).await;
}

/// Every box made runs, once, and nothing else of this server's is there.
async fn check(client: &Client, name: &str, made: &BTreeMap<String, String>) {
    let want: BTreeSet<&String> = made.values().collect();
    assert_eq!(want.len(), made.len(), "two keys answered the same box");
    let listed: Vec<String> = client.all_boxes().await.unwrap().into_iter().map(|b| b.id).collect();
    let listed_set: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(listed.len(), listed_set.len(), "a box is listed twice");
    assert_eq!(listed_set, want, "the boxes listed are not the boxes made");
    for id in &want {
        let info = client.get_box(id, Some((BoxState::Running, 120))).await.unwrap();
        assert_eq!(info.state, BoxState::Running, "{info:?}");
        let out = client.boxed(id).exec(&["echo", "ok"]).await.expect("a command reaches it");
        assert_eq!(out.stdout, "ok\n");
    }
    let containers = common::labelled_boxes(name).await;
    let mut want: Vec<String> = want.into_iter().cloned().collect();
    want.sort();
    assert_eq!(containers, want, "containers without a record, or records without one");
}

#[tokio::test]
async fn kill_9_during_creates_loses_and_doubles_nothing_on_the_local_store() {
    if !e2e_enabled().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    crash_cycles(StoreConfig::Local { dir: dir.path().join("state") }).await;
}

#[tokio::test]
async fn kill_9_during_creates_loses_and_doubles_nothing_on_the_sqlite_store() {
    if !e2e_enabled().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    crash_cycles(StoreConfig::Sqlite { path: dir.path().join("holm.db") }).await;
}

#[tokio::test]
async fn kill_9_during_creates_loses_and_doubles_nothing_on_the_postgres_store() {
    if !e2e_enabled().await {
        return;
    }
    let Some(pg) = tokio::task::spawn_blocking(Postgres::start).await.unwrap() else { return };
    crash_cycles(pg.store()).await;
}

#[tokio::test]
async fn kill_9_during_creates_loses_and_doubles_nothing_on_the_s3_store() {
    if !e2e_enabled().await {
        return;
    }
    let Some(s3) = tokio::task::spawn_blocking(S3::start).await.unwrap() else { return };
    crash_cycles(s3.store()).await;
}
