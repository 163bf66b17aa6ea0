//! The store conformance suite against real servers: PostgreSQL (Debian's
//! package) and an S3-compatible server (moto), each a process of its own
//! on a loopback port, started fresh for the test. The local and SQLite
//! backends run the same suite in unit tests.

use holm_testkit::services::{Postgres, S3};
use holmd::store::{self, conformance};

/// A second connection sees what the first wrote: nothing is only in the
/// first's memory.
async fn kept_across_connections(config: &store::StoreConfig) {
    let first = store::open(config).await.expect("open");
    let r = conformance::record("box_kept", 7);
    first.put_box(&r).await.unwrap();
    first.append_traces(&[conformance::trace("box_kept", "00000000000000000009")]).await.unwrap();
    drop(first);
    let second = store::open(config).await.expect("open again");
    assert_eq!(second.get_box("box_kept").await.unwrap(), Some(r));
    assert_eq!(second.traces("box_kept", None, 10).await.unwrap().len(), 1);
    second.delete_box("box_kept").await.unwrap();
}

#[tokio::test]
async fn the_postgres_store_conforms() {
    let Some(pg) = tokio::task::spawn_blocking(Postgres::start).await.unwrap() else { return };
    let config = pg.store();
    let s = store::open(&config).await.expect("connect to PostgreSQL");
    assert_eq!(s.backend(), "postgres");
    conformance::run(&*s).await;
    kept_across_connections(&config).await;
}

#[tokio::test]
async fn the_s3_store_conforms() {
    let Some(server) = tokio::task::spawn_blocking(S3::start).await.unwrap() else { return };
    let config = server.store();
    let s = store::open(&config).await.expect("connect to S3 (the bucket is made)");
    assert_eq!(s.backend(), "s3");
    conformance::run(&*s).await;
    kept_across_connections(&config).await;
}

#[tokio::test]
async fn a_wrong_address_is_a_clear_error_without_the_password() {
    let port = holm_testkit::services::free_port();
    let config = store::StoreConfig::Postgres {
        url: format!("postgres://holm:pw-hunter2@127.0.0.1:{port}/holm"),
    };
    let e = store::open(&config).await.unwrap_err().to_string();
    assert!(e.contains("cannot connect to PostgreSQL"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
}
