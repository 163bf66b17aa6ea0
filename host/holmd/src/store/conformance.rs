//! The one conformance suite every backend passes: [`run`] against a store
//! checks each promise of [`Store`]. The local and SQLite backends run it in
//! unit tests; PostgreSQL and S3 in `tests/stores.rs`, against real servers.
//! Ids are random per run, so a run against a shared database still checks
//! only its own items.

use holm::runtime::Endpoint;
use holm_proto::host::{BoxSpec, BoxState, Placement, Trace};

use super::{BoxRecord, IdempotencyRecord, RuntimeRecord, Store, StoreError};

/// A box record for tests.
pub fn record(id: &str, created_at: u64) -> BoxRecord {
    BoxRecord {
        id: id.into(),
        runtime: "docker".into(),
        machine_id: Some(format!("machine-{id}")),
        // A vendor's proxy, with the header it needs: stored whole.
        guest: Some(
            Endpoint::new(&format!("https://8765-{id}.proxy.example"))
                .and_then(|e| e.with_header("x-proxy-token", &format!("token-of-{id}")))
                .expect("a valid endpoint"),
        ),
        secret: format!("secret-of-{id}"),
        spec: BoxSpec { screens: Some(2), ..BoxSpec::default() },
        placement: Placement { idle_timeout_secs: Some(600), ..Placement::default() },
        state: BoxState::Running,
        reason: None,
        image: Some("holm-box:0".into()),
        screens: Vec::new(),
        created_at,
        expires_at: created_at + 3600,
        idle_timeout_secs: Some(600),
        last_activity: created_at,
        forked_from: None,
        bridge: Some(Endpoint::loopback(([127, 0, 0, 1], 2).into())),
        bridge_secret: Some(format!("bridge-secret-of-{id}")),
        viewer: None,
        viewer_key: None,
        viewer_grants: Vec::new(),
        control_seen: None,
        pool: None,
        guest_proto: None,
        ended_at: None,
        rev: 0,
    }
}

/// A trace for tests.
pub fn trace(box_id: &str, id: &str) -> Trace {
    Trace {
        id: id.into(),
        box_id: box_id.into(),
        at: "2026-01-01T00:00:00.000Z".into(),
        method: "POST".into(),
        path: format!("/v1/boxes/{box_id}/commands/run"),
        query: vec!["wait".into()],
        status: 200,
        code: None,
        duration_ms: 12,
        request_id: "req_0".into(),
        ..Trace::default()
    }
}

fn tag() -> String {
    holm::ids::new_box_id().trim_start_matches("box_").to_owned()
}

/// Runs the suite. Panics naming the first broken promise.
pub async fn run(store: &dyn Store) {
    let t = tag();
    let mine = |all: Vec<BoxRecord>| -> Vec<BoxRecord> {
        all.into_iter().filter(|r| r.id.ends_with(&t)).collect()
    };
    let a = format!("box_a{t}");
    let b = format!("box_b{t}");
    let c = format!("box_c{t}");

    // Empty.
    assert!(mine(store.boxes().await.unwrap()).is_empty(), "a new store has no boxes");
    assert_eq!(store.get_box(&a).await.unwrap(), None);
    assert!(store.traces(&a, None, 10).await.unwrap().is_empty());
    assert_eq!(store.get_idempotency(&format!("{t}00")).await.unwrap(), None);

    // Boxes: written, read back whole (secret included), oldest first.
    let ra = record(&a, 2000);
    let rb = record(&b, 1000);
    store.put_box(&ra).await.unwrap();
    store.put_box(&rb).await.unwrap();
    assert_eq!(store.get_box(&a).await.unwrap().as_ref(), Some(&ra), "a record reads back whole");
    assert_eq!(mine(store.boxes().await.unwrap()), vec![rb.clone(), ra.clone()], "oldest first");
    // Replaced, not duplicated.
    let mut ra2 = ra.clone();
    ra2.state = BoxState::Removed;
    ra2.reason = Some("removed by request".into());
    ra2.guest = None;
    store.put_box(&ra2).await.unwrap();
    assert_eq!(mine(store.boxes().await.unwrap()), vec![rb.clone(), ra2.clone()], "replaced");
    // Removal is terminal: a stale copy written after it is refused and
    // changes nothing; another removed copy still lands.
    let err = store.put_box(&ra).await.expect_err("a write out of removed is refused");
    assert!(matches!(&err, StoreError::Removed { id } if id == &a), "{err}");
    assert_eq!(store.get_box(&a).await.unwrap().as_ref(), Some(&ra2), "removal stays");
    let mut ra3 = ra2.clone();
    ra3.reason = Some("expired: lifetime".into());
    store.put_box(&ra3).await.unwrap();
    assert_eq!(store.get_box(&a).await.unwrap().as_ref(), Some(&ra3), "removed to removed");

    // Concurrent writes all land.
    let many: Vec<BoxRecord> = (0..12).map(|i| record(&format!("box_m{i}{t}"), 3000 + i)).collect();
    futures_util::future::join_all(many.iter().map(|r| store.put_box(r)))
        .await
        .into_iter()
        .collect::<Result<Vec<()>, _>>()
        .unwrap();
    let listed = mine(store.boxes().await.unwrap());
    assert_eq!(listed.len(), 14, "every concurrent write landed once");
    assert_eq!(&listed[2..], many.as_slice());

    // Traces: per box, in id order, paged by the last id.
    let ids: Vec<String> = (1..=5).map(|i| format!("{:020}", 1_000_000 + i)).collect();
    store
        .append_traces(&[trace(&a, &ids[0]), trace(&b, &ids[1]), trace(&a, &ids[2])])
        .await
        .unwrap();
    store.append_traces(&[trace(&a, &ids[3]), trace(&b, &ids[4])]).await.unwrap();
    store.append_traces(&[]).await.unwrap();
    let ta = store.traces(&a, None, 10).await.unwrap();
    assert_eq!(ta, vec![trace(&a, &ids[0]), trace(&a, &ids[2]), trace(&a, &ids[3])]);
    let first = store.traces(&a, None, 2).await.unwrap();
    assert_eq!(first.len(), 2, "a page holds at most the limit");
    let rest = store.traces(&a, Some(&first[1].id), 2).await.unwrap();
    assert_eq!(rest, vec![trace(&a, &ids[3])], "the next page starts after the cursor");
    assert!(store.traces(&a, Some(&ids[3]), 2).await.unwrap().is_empty());
    assert_eq!(store.traces(&b, None, 10).await.unwrap().len(), 2, "traces are per box");

    // Timeline images: bytes as given, per box, listed oldest first with
    // their sizes, replaced, deleted; missing ones are nothing.
    let png = |n: u8| vec![0x89, b'P', b'N', b'G', 0, n, 255, 7];
    store.put_shot(&a, &ids[2], &png(2)).await.unwrap();
    store.put_shot(&a, &ids[0], &[png(0), png(0)].concat()).await.unwrap();
    store.put_shot(&b, &ids[1], &png(1)).await.unwrap();
    assert_eq!(store.shot(&a, &ids[2]).await.unwrap(), Some(png(2)), "an image reads back whole");
    assert_eq!(store.shot(&a, &ids[1]).await.unwrap(), None, "images are per box");
    assert_eq!(
        store.shots(&a).await.unwrap(),
        vec![(ids[0].clone(), 16), (ids[2].clone(), 8)],
        "oldest first, with sizes"
    );
    store.put_shot(&a, &ids[2], &png(9)).await.unwrap();
    assert_eq!(store.shot(&a, &ids[2]).await.unwrap(), Some(png(9)), "replaced");
    store.delete_shot(&a, &ids[0]).await.unwrap();
    store.delete_shot(&a, &ids[0]).await.unwrap();
    assert_eq!(store.shots(&a).await.unwrap(), vec![(ids[2].clone(), 8)]);
    assert_eq!(store.shot(&a, &ids[0]).await.unwrap(), None);

    // Deleting a box takes its traces and images; deleting twice is fine.
    store.delete_box(&b).await.unwrap();
    store.delete_box(&b).await.unwrap();
    store.delete_box(&c).await.unwrap();
    assert_eq!(store.get_box(&b).await.unwrap(), None);
    assert!(store.traces(&b, None, 10).await.unwrap().is_empty(), "traces go with the box");
    assert!(store.shots(&b).await.unwrap().is_empty(), "images go with the box");
    assert_eq!(store.shot(&b, &ids[1]).await.unwrap(), None);
    assert_eq!(store.shots(&a).await.unwrap().len(), 1, "others' images stay");
    assert_eq!(store.traces(&a, None, 10).await.unwrap().len(), 3, "others' traces stay");

    // Remote runtimes: by name, replaced, deleted; sealed values kept as given.
    let rt = |name: &str, v: i64| RuntimeRecord {
        name: name.into(),
        provider: "e2b".into(),
        fields: serde_json::json!({ "max_lifetime_secs": v }).as_object().unwrap().clone(),
        sealed: [("api_key".to_owned(), format!("sealed-{v}"))].into(),
        created_at: 10,
        updated_at: 10 + u64::try_from(v).unwrap(),
        key_version: u64::try_from(v).unwrap(),
    };
    let (n1, n2) = (format!("cloud-{t}"), format!("a.b {t}/x"));
    store.put_runtime(&rt(&n1, 1)).await.unwrap();
    store.put_runtime(&rt(&n2, 2)).await.unwrap();
    store.put_runtime(&rt(&n1, 3)).await.unwrap();
    let runtimes: Vec<RuntimeRecord> =
        store.runtimes().await.unwrap().into_iter().filter(|r| r.name.contains(&t)).collect();
    assert_eq!(runtimes, vec![rt(&n2, 2), rt(&n1, 3)], "by name, replaced");
    store.delete_runtime(&n2).await.unwrap();
    store.delete_runtime(&n2).await.unwrap();
    let left: Vec<String> = store
        .runtimes()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .filter(|n| n.contains(&t))
        .collect();
    assert_eq!(left, vec![n1.clone()]);
    store.delete_runtime(&n1).await.unwrap();

    // Idempotency keys: kept by hash, forgotten after the retention.
    let key = |n: u64| IdempotencyRecord {
        key_hash: format!("{t}{n:02}"),
        fingerprint: format!("fp{n}"),
        box_id: a.clone(),
        created_at: n * 100,
    };
    store.put_idempotency(&key(1)).await.unwrap();
    store.put_idempotency(&key(5)).await.unwrap();
    assert_eq!(store.get_idempotency(&key(1).key_hash).await.unwrap(), Some(key(1)));
    let purged = store.purge_idempotency(300).await.unwrap();
    assert!(purged >= 1, "the old key is purged");
    assert_eq!(store.get_idempotency(&key(1).key_hash).await.unwrap(), None);
    assert_eq!(store.get_idempotency(&key(5).key_hash).await.unwrap(), Some(key(5)));

    store.flush().await.unwrap();

    // Leave nothing behind.
    for r in mine(store.boxes().await.unwrap()) {
        store.delete_box(&r.id).await.unwrap();
    }
    assert!(mine(store.boxes().await.unwrap()).is_empty());
}
