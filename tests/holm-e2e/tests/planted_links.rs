//! The review's L4 probe, in a real box: the desktop user (`holm`) points
//! `~/.fluxbox/overlay` and `~/.fluxbox/apps` at files that do not exist
//! under `/etc` and kills fluxbox; the guest (root) restarts it and writes
//! the overlay again, and neither file under `/etc` is made: the links stay
//! links, their targets absent.

use std::time::Duration;

use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::eventually;
use holm_testkit::matrix::Target;

holm_testkit::suite!(a_link_the_desktop_user_plants_does_not_redirect_root: docker [x11]);

/// Runs `script` with `sh -c` in the box; answers its exit code and output.
async fn sh(b: &holm_client::BoxClient, script: &str) -> (Option<i32>, String) {
    let r = b.exec(&["sh", "-c", script]).await.expect("a command");
    (r.exit_code, r.stdout.trim().to_owned())
}

async fn a_link_the_desktop_user_plants_does_not_redirect_root(target: Target) {
    let server = target.server().await;
    let request = CreateBox {
        spec: BoxSpec { display: Some(target.display), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = server.client.boxed(&info.id);

    let (_, before) = sh(&b, "pgrep -u holm -x fluxbox").await;
    assert!(!before.is_empty(), "fluxbox runs as holm");
    let plant = "su holm -s /bin/sh -c 'ln -sfn /etc/holm-probe ~/.fluxbox/overlay \
                 && ln -sfn /etc/holm-probe-apps ~/.fluxbox/apps && pkill -u holm -x fluxbox'";
    assert_eq!(sh(&b, plant).await.0, Some(0), "the desktop user planted the links");
    // The guest restarts fluxbox, writing its overlay first.
    eventually(Duration::from_secs(60), "fluxbox started again", || async {
        let (code, now) = sh(&b, "pgrep -u holm -x fluxbox").await;
        (code == Some(0) && !now.is_empty() && now != before).then_some(())
    })
    .await;
    let check = "test ! -e /etc/holm-probe && test ! -e /etc/holm-probe-apps \
                 && test -L /home/holm/.fluxbox/overlay && test -L /home/holm/.fluxbox/apps";
    let (code, _) = sh(&b, check).await;
    assert_eq!(code, Some(0), "root made a file through a planted link, or replaced a link");
    server.client.remove_box(&info.id).await.expect("remove the box");
}
