//! A vendor runtime reaches only public addresses unless its table in the
//! runtimes file allows private ones (review M4): through the real REST API
//! of a real holmd, against E2B's stand-in on loopback, named `localhost`
//! so the address is known only once the name is resolved, at connect time.
//!
//! No box starts, so Docker is not needed.

use holm_proto::ErrorCode;
use holm_proto::host::{AddRuntime, CreateBox, Placement, RuntimeState};
use holm_testkit::TestServer;
use holm_testkit::cloud::{Cloud, Standin};

/// A holmd whose runtimes file has `table`, with E2B's runtime added with
/// the stand-in's key through the API.
async fn start(standin: &Standin, table: String) -> (TestServer, holm_proto::host::RuntimeInfo) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, table.replace("127.0.0.1", "localhost")).unwrap();
    let mut server = TestServer::start_without_image(move |c| {
        c.runtimes = Some(Vec::new());
        c.config_file = Some(file);
        c.secret_key = Some(holm::ids::new_secret() + &holm::ids::new_secret());
    })
    .await;
    server.keep(dir);
    server.remember("the vendor key", standin.key());
    let add = AddRuntime {
        name: "e2b".into(),
        provider: "e2b".into(),
        fields: standin.fields(),
        api_key: Some(standin.key().to_owned()),
    };
    let info = server.client.add_runtime(&add).await.expect("add the runtime");
    (server, info)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vendor_at_a_name_that_resolves_to_loopback_is_refused_unless_allowed() {
    let standin = Standin::start(Cloud::E2b).await;
    let public_only = standin.runtimes_file_public_only();
    assert!(!public_only.contains("allow_private_addresses"), "{public_only}");

    // Without the allowance: the name resolves to 127.0.0.1, which is
    // refused on the connection, before the key is sent.
    let (server, info) = start(&standin, public_only).await;
    assert_eq!(info.state, RuntimeState::Unavailable, "{info:?}");
    let reason = info.reason.clone().unwrap_or_default();
    assert!(reason.contains("localhost resolves to"), "{reason}");
    assert!(reason.contains("is not a public address"), "{reason}");
    assert!(reason.contains("allow_private_addresses = true"), "{reason}");
    assert!(standin.controls().calls.all().is_empty(), "the stand-in was reached");
    // A box on it is refused in the one error shape, with the reason, and
    // nothing is made.
    let request = CreateBox {
        placement: Placement { runtime: Some("e2b".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let e = server.client.create_box(&request, None).await.unwrap_err();
    let e = e.api().expect("the one error shape").clone();
    assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
    assert!(e.message.contains("is not a public address"), "{e:?}");
    let boxes = server.client.list_boxes(None, None).await.unwrap();
    assert!(boxes.data.is_empty(), "{boxes:?}");
    assert!(standin.controls().calls.all().is_empty(), "the stand-in was reached");
    drop(server);

    // With the allowance (as every test against a stand-in says), the same
    // name is reached.
    let (_server, info) = start(&standin, standin.runtimes_file()).await;
    assert_eq!(info.state, RuntimeState::Available, "{info:?}");
    assert!(!standin.controls().calls.all().is_empty(), "the stand-in was reached");
}
