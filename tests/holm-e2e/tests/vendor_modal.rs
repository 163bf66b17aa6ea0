//! holm's Modal adapter against the Modal stand-in made as strict as
//! Modal's own sources say Modal is (issue 28, the audit's ranked items 1,
//! 2, 3 and 7): the guest's environment goes as a Secret, the 12 MB guest
//! through blob storage in a context mount, a box with an idle timeout
//! gets Modal's `idle_timeout_secs` and its lifetime as the timeout, and
//! holm speaks as a current client type with the environment's builder
//! version.

use std::collections::BTreeMap;

use holm::image::ImageRequest;
use holm::runtime::modal::{Modal, Options};
use holm::runtime::remote::{Addresses, Idle, NewSandbox, Recipe, Resources, Vendor};
use holm_standins::modal::ModalStandin;
use holm_testkit::e2e_enabled;

fn paths(s: &ModalStandin) -> Vec<String> {
    s.controls.calls.all().into_iter().map(|c| format!("{} {}", c.path, c.status)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn modal_gets_the_guest_by_blob_and_its_environment_by_secret_and_keeps_idle_boxes() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;

    let s = ModalStandin::start().await;
    let modal = Modal::new(
        &s.token_id,
        &s.controls.key,
        Options {
            server_url: Some(s.server_url.clone()),
            environment: None,
            addresses: Addresses::Any,
        },
    )
    .expect("the adapter");

    // Items 2 and 7: the image. The stand-in refuses an inline context file
    // of 4 MiB or more, an image without a builder version (ClientHello's
    // is deprecated and empty), and the obsolete client type 7.
    let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).expect("a recipe");
    assert!(recipe.guest().len() >= 4 * 1024 * 1024, "the guest is large enough to need a blob");
    let mut progress = |p: holm::image::Progress| eprintln!("[modal] {p:?}");
    let image = modal.image(&recipe, &mut progress).await;
    let calls = paths(&s);
    let image = image.unwrap_or_else(|e| panic!("the image: {e}; calls: {calls:#?}"));
    for rpc in ["EnvironmentGetOrCreate", "BlobCreate", "MountPutFile", "MountGetOrCreate"] {
        assert!(
            calls.iter().any(|c| c == &format!("/modal.client.ModalClient/{rpc} 200")),
            "{rpc} was not called: {calls:#?}"
        );
    }

    // Items 1 and 3: a box with the guest's environment and an idle timeout
    // of 10 minutes in a lifetime of an hour.
    let env = vec![("HOLM_PROBE".to_owned(), "from-a-secret".to_owned())];
    let new = NewSandbox {
        box_id: "bx-modal-probe".into(),
        image,
        env,
        labels: BTreeMap::from([("holm.runtime".to_owned(), "modal".to_owned())]),
        deadline_secs: 600,
        idle: Some(Idle { idle_secs: 600, lifetime_secs: 3600 }),
        resources: Resources { memory_mib: 2048, cpus: 1 },
    };
    let started = s.controls.clock.now();
    let sandbox = modal.create(&new).await.expect("a sandbox");
    let got = s.env(&sandbox.id).expect("the stand-in's sandbox");
    assert_eq!(got.get("HOLM_PROBE").map(String::as_str), Some("from-a-secret"), "{got:?}");
    assert!(
        paths(&s).iter().any(|c| c == "/modal.client.ModalClient/SecretGetOrCreate 200"),
        "the environment went as a Secret"
    );
    assert_eq!(s.idle_timeout_secs(&sandbox.id), Some(600), "Modal's own idle timeout is used");
    let ends = s.ends_at(&sandbox.id).expect("its timeout");
    assert!(
        ends >= started + 3590,
        "a box in use is not ended at its idle timeout: it ends {} s after it started",
        ends - started
    );
    modal.delete(&sandbox.id).await.expect("delete");
}
