//! The review's L3 in a real box: the box's clipboard (RFB `ServerCutText`)
//! reaches a takeover viewer and never a watch-only one. Both streams go
//! through holmd; the watcher's is read by the guest, which leaves the
//! clipboard out.

use std::time::Duration;

use holm_proto::desk::ClipboardSet;
use holm_proto::host::BoxState;
use holm_testkit::matrix::Target;
use holm_testkit::rfb;

holm_testkit::suite!(a_watcher_never_receives_the_clipboard: docker [x11, wayland]);

const SECRET: &str = "clipboard-S3CRET";

async fn a_watcher_never_receives_the_clipboard(target: Target) {
    let server = target.server().await;
    let info = server.client.create_box(&target.create(), Some(600)).await.expect("a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    // Only a box's own GET shows its viewer URLs.
    let info = server.client.get_box(&info.id, None).await.expect("the box");
    let pair = &info.viewers[0];
    let mut watcher = rfb::open(&pair.view_url).await.expect("the watch-only URL is let in");
    let mut person = rfb::open(&pair.takeover_url).await.expect("the takeover URL is let in");
    // Both streams show the screen through the guest's reader.
    assert!(!watcher.frame().await.is_empty());
    assert!(!person.frame().await.is_empty());

    let b = server.client.boxed(&info.id);
    let set = ClipboardSet { text: Some(SECRET.into()), ..ClipboardSet::default() };
    b.set_clipboard(&set).await.expect("the agent sets the clipboard");
    // The person in control gets it (the VNC server sends it to every
    // client as the selection changes)...
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !person.cut_texts.iter().any(|t| t == SECRET) {
        assert!(
            std::time::Instant::now() < deadline,
            "the takeover viewer never got the clipboard"
        );
        person.frame().await;
    }
    // ... and by then the VNC server has sent it to the watcher too: a
    // frame asked for after it comes after it in the watcher's stream.
    let frame = watcher.frame().await;
    assert!(!frame.is_empty());
    assert!(watcher.cut_texts.is_empty(), "a watcher got the clipboard: {:?}", watcher.cut_texts);
    server.client.remove_box(&info.id).await.expect("remove the box");
}
