//! Two replicas, one fleet: two real `holmd` processes with one server name
//! on one store (`HOLM_SHARED_STORE=1`: a fresh PostgreSQL, then an S3
//! server, each on loopback), on the real Docker engine. A box made through one is seen, served, changed and
//! removed through the other; a removal is never undone by the replica
//! that held an older copy; a replica that starts while a box is being
//! made elsewhere neither removes nor makes again its machine; and one
//! restarted takes the box back while the others go on serving it.

mod common;

use common::Holmd;
use holm_client::Client;
use holm_proto::ErrorCode;
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::services::{Postgres, S3};
use holm_testkit::{e2e_enabled, ensure_image, unique_server_name};
use holmd::store::{StoreConfig, StoreError};

const TOKEN: &str = "replicas-test-token-0123456789";

/// A box without Chromium, to keep the machine's cores for the test.
fn request() -> CreateBox {
    CreateBox {
        spec: BoxSpec { browser: Some(false), ..BoxSpec::default() },
        placement: Default::default(),
    }
}

/// A replica on `storage`, named `name`, with its own state directory.
async fn replica(dir: &std::path::Path, storage: &StoreConfig, name: &str) -> (Holmd, Client) {
    std::fs::create_dir_all(dir).unwrap();
    let state = dir.join("state").display().to_string();
    let mut env = common::store_env(storage);
    env.extend(
        [
            ("HOLM_SHARED_STORE", "1"),
            ("HOLM_SERVER_NAME", name),
            ("HOLM_SERVER_TOKEN", TOKEN),
            ("HOLM_SERVER_RUNTIMES", "docker"),
            ("HOLM_STATE_DIR", &state),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut holmd = Holmd::start(dir, &env).await;
    // The name the test gave (the helper made one of its own first), so
    // the boxes it ends when dropped are the fleet's.
    holmd.name = name.to_owned();
    let client = Client::new(&holmd.url, Some(TOKEN));
    (holmd, client)
}

async fn listed(client: &Client) -> Vec<String> {
    client.all_boxes().await.unwrap().into_iter().map(|b| b.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_postgres_store_serve_one_fleet() {
    if !e2e_enabled().await {
        return;
    }
    let Some(pg) = tokio::task::spawn_blocking(Postgres::start).await.unwrap() else { return };
    one_fleet(pg.store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_s3_store_serve_one_fleet() {
    if !e2e_enabled().await {
        return;
    }
    let Some(s3) = tokio::task::spawn_blocking(S3::start).await.unwrap() else { return };
    one_fleet(s3.store()).await;
}

async fn one_fleet(storage: StoreConfig) {
    ensure_image().await;
    let dir = tempfile::tempdir().unwrap();
    let name = unique_server_name();
    let (mut replica_a, a) = replica(&dir.path().join("a"), &storage, &name).await;
    let (_b, b) = replica(&dir.path().join("b"), &storage, &name).await;

    // Made through A; B sees and serves it at once, no waiting for a sync.
    let made = a.create_box(&request(), Some(120)).await.expect("create through A");
    assert_eq!(made.state, BoxState::Running, "{made:?}");
    let id = made.id.clone();
    let on_b = b.get_box(&id, None).await.expect("B reads a box A made");
    assert_eq!((on_b.state, on_b.created_at.clone()), (BoxState::Running, made.created_at));
    assert_eq!(listed(&b).await, vec![id.clone()], "B lists the box A made");
    assert_eq!(listed(&a).await, listed(&b).await, "both replicas list one fleet");
    let out = b.boxed(&id).exec(&["echo", "served by B"]).await.expect("a command through B");
    assert_eq!(out.stdout, "served by B\n");

    // A change through one is seen through the other.
    assert_eq!(b.pause_box(&id).await.expect("pause through B").state, BoxState::Paused);
    assert_eq!(a.get_box(&id, None).await.unwrap().state, BoxState::Paused, "A sees B's pause");
    assert_eq!(a.resume_box(&id).await.expect("resume through A").state, BoxState::Running);
    assert_eq!(b.get_box(&id, None).await.unwrap().state, BoxState::Running, "B sees A's resume");
    let out = a.boxed(&id).exec(&["echo", "served by A"]).await.expect("a command through A");
    assert_eq!(out.stdout, "served by A\n");
    // The record as A last wrote it: a copy that is about to be stale.
    let store = holmd::store::open(&storage).await.unwrap();
    let stale = store.get_box(&id).await.unwrap().expect("the record is in the store");
    assert_eq!(stale.state, BoxState::Running);

    // Removed through B: A answers it removed, its container is gone.
    let removed = b.remove_box(&id).await.expect("remove through B");
    assert_eq!(removed.state, BoxState::Removed);
    let on_a = a.get_box(&id, None).await.expect("A still answers the box");
    assert_eq!(on_a.state, BoxState::Removed, "A reports the removal: {on_a:?}");
    assert!(listed(&a).await.is_empty(), "A lists no removed box");
    assert!(common::labelled_boxes(&name).await.is_empty(), "the removed box's container is gone");

    // Touching it through A brings nothing back: a command is refused as
    // not running, a stale copy's write is refused by the store, and both
    // replicas still answer it removed.
    let refused = a.boxed(&id).exec(&["true"]).await.expect_err("a removed box runs nothing");
    assert_eq!(refused.api().map(|e| e.code), Some(ErrorCode::NotRunning), "{refused:?}");
    let extend = a.extend_box(&id, 600).await.expect_err("a removed box is not extended");
    assert_eq!(extend.api().map(|e| e.code), Some(ErrorCode::Conflict), "{extend:?}");
    let err = store.put_box(&stale).await.expect_err("a stale running copy is refused");
    assert!(matches!(err, StoreError::Removed { .. }), "{err}");
    assert_eq!(store.get_box(&id).await.unwrap().unwrap().state, BoxState::Removed);
    for client in [&a, &b] {
        assert_eq!(client.get_box(&id, None).await.unwrap().state, BoxState::Removed);
    }

    // A replica that starts while B makes a box does not make it again nor
    // remove its machine: the box comes up once, and all three serve it.
    let making = b.create_box(&request(), None).await.expect("create through B");
    let (_c, c) = replica(&dir.path().join("c"), &storage, &name).await;
    let up = c.get_box(&making.id, Some((BoxState::Running, 120))).await.unwrap();
    assert_eq!(up.state, BoxState::Running, "{up:?}");
    assert_eq!(
        common::labelled_boxes(&name).await,
        vec![making.id.clone()],
        "one machine for the box"
    );
    for client in [&a, &b, &c] {
        assert_eq!(listed(client).await, vec![making.id.clone()]);
    }
    let out = c.boxed(&making.id).exec(&["echo", "ok"]).await.expect("a command through C");
    assert_eq!(out.stdout, "ok\n");

    // A replica restarted takes the running box back beside the others,
    // which go on serving it; a removal through it is seen by them.
    assert!(replica_a.stop().success(), "A stops cleanly");
    let (_a, a) = replica(&dir.path().join("a-again"), &storage, &name).await;
    assert_eq!(a.get_box(&making.id, None).await.unwrap().state, BoxState::Running);
    for client in [&a, &b, &c] {
        let out = client.boxed(&making.id).exec(&["echo", "ok"]).await.expect("a command");
        assert_eq!(out.stdout, "ok\n");
    }
    assert_eq!(a.remove_box(&making.id).await.unwrap().state, BoxState::Removed);
    assert_eq!(c.get_box(&making.id, None).await.unwrap().state, BoxState::Removed);
    assert!(common::labelled_boxes(&name).await.is_empty());
}
