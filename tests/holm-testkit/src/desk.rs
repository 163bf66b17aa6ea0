//! A box's desktop as the end-to-end tests use it: terminals that write
//! what they are typed into a file, and where windows are.

use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::guest::ProcessStart;

use crate::{Profile, eventually};

/// Starts a terminal named `name` in the box that writes what it is typed
/// into `file` (xterm at `geometry` on X11; foot, tiled by sway, on
/// Wayland), waits until its window is on the screen, and answers the
/// middle of its window.
pub async fn terminal_writing_to(
    b: &BoxClient,
    display: Profile,
    name: &str,
    geometry: &str,
    file: &str,
) -> (i32, i32) {
    let script = format!("stty -echo; exec cat > {file}");
    let argv: Vec<String> = match display {
        Profile::X11 => {
            ["xterm", "-name", name, "-geometry", geometry, "-en", "UTF-8", "-e", "sh", "-c"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([script])
                .collect()
        }
        Profile::Wayland => ["foot", "--app-id", name, "--", "sh", "-c"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([script])
            .collect(),
    };
    let start = ProcessStart {
        argv: Some(argv),
        env: [("LANG".to_owned(), "C.UTF-8".to_owned())].into(),
        ..ProcessStart::default()
    };
    b.start_process(&start).await.expect("start the terminal");
    let middle = eventually(Duration::from_secs(60), "the terminal's window", || {
        window_middle(b, display, name)
    })
    .await;
    eventually(Duration::from_secs(20), "the terminal's cat", || async {
        b.stat(file).await.ok().map(drop)
    })
    .await;
    middle
}

/// The middle of the window named `name`, once it is on the screen.
pub async fn window_middle(b: &BoxClient, display: Profile, name: &str) -> Option<(i32, i32)> {
    let r = window_rect(b, display, name).await?;
    Some((r.x + r.width / 2, r.y + r.height / 2))
}

/// A rectangle on the screen, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Rect {
    /// Whether `self` lies wholly inside `outer`.
    #[must_use]
    pub fn within(&self, outer: &Rect) -> bool {
        self.x >= outer.x
            && self.y >= outer.y
            && self.x + self.width <= outer.x + outer.width
            && self.y + self.height <= outer.y + outer.height
    }
}

/// Where the window named `name` is, once it is on the screen: its client
/// area as X places it (found with xdotool, measured with xwininfo), or its
/// node in sway's tree (swaymsg).
pub async fn window_rect(b: &BoxClient, display: Profile, name: &str) -> Option<Rect> {
    match display {
        Profile::X11 => {
            // xdotool finds the window; xwininfo says where it is (xdotool's
            // own geometry counts a window manager's frame offset twice).
            let script = format!(
                "w=$(xdotool search --onlyvisible --classname '{name}' | head -n 1) \
                 && [ -n \"$w\" ] && xwininfo -id \"$w\""
            );
            let r = b.exec(&["sh", "-c", &script]).await.ok()?;
            let field = |k: &str| -> Option<i32> {
                r.stdout
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(k))
                    .and_then(|v| v.trim().parse().ok())
            };
            Some(Rect {
                x: field("Absolute upper-left X:")?,
                y: field("Absolute upper-left Y:")?,
                width: field("Width:")?,
                height: field("Height:")?,
            })
        }
        Profile::Wayland => {
            let r = b.exec(&["swaymsg", "-t", "get_tree"]).await.ok()?;
            let tree: serde_json::Value = serde_json::from_str(&r.stdout).ok()?;
            let rect = find_app(&tree, name)?;
            let n = |k: &str| rect[k].as_i64().and_then(|v| i32::try_from(v).ok());
            Some(Rect { x: n("x")?, y: n("y")?, width: n("width")?, height: n("height")? })
        }
    }
}

/// The part of the first screen that windows may fill: X's
/// `_NET_WORKAREA` as the window manager sets it (the screen less fluxbox's
/// toolbar), or the first output's usable area in sway.
pub async fn work_area(b: &BoxClient, display: Profile) -> Option<Rect> {
    match display {
        Profile::X11 => {
            let r = b.exec(&["xprop", "-root", "_NET_WORKAREA"]).await.ok()?;
            let numbers = r.stdout.split_once('=')?.1;
            let mut n = numbers.split(',').map(|v| v.trim().parse::<i32>().ok());
            Some(Rect { x: n.next()??, y: n.next()??, width: n.next()??, height: n.next()?? })
        }
        Profile::Wayland => {
            let r = b.exec(&["swaymsg", "-t", "get_workspaces"]).await.ok()?;
            let spaces: serde_json::Value = serde_json::from_str(&r.stdout).ok()?;
            let rect = &spaces.as_array()?.first()?["rect"];
            let n = |k: &str| rect[k].as_i64().and_then(|v| i32::try_from(v).ok());
            Some(Rect { x: n("x")?, y: n("y")?, width: n("width")?, height: n("height")? })
        }
    }
}

/// The rectangle of the node of sway's tree whose `app_id` is `name`, once
/// its window is mapped and shown.
fn find_app<'a>(node: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    if node["app_id"] == name && node["visible"] == true {
        return Some(&node["rect"]);
    }
    ["nodes", "floating_nodes"]
        .iter()
        .filter_map(|k| node[k].as_array())
        .flatten()
        .find_map(|child| find_app(child, name))
}

/// Waits until the file at `path` in the box holds exactly `want`; a
/// timeout says what the file last held, so a lost or wrong key shows.
pub async fn file_text(b: &BoxClient, path: &str, want: &str) -> String {
    let seen = std::sync::Mutex::new(None::<String>);
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(bytes) = b.read_file(path).await {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if text == want {
                    return text;
                }
                *seen.lock().unwrap() = Some(text);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| {
        let last = seen.lock().unwrap().clone();
        panic!("timed out after 30s waiting for {path} to hold {want:?}; it last held {last:?}")
    })
}

/// Waits until at least 99% of the stream's pixels are those of the box's
/// screenshot of screen 0 (a few tries: the screen may change between the
/// two reads).
pub async fn stream_shows_the_screen(b: &BoxClient, v: &mut crate::rfb::Rfb) {
    let mut best = 0;
    let pixels = usize::from(v.width) * usize::from(v.height);
    for _ in 0..20 {
        let frame = v.frame().await;
        let shot = b.screenshot(0, &holm_proto::guest::ScreenshotOptions::default()).await.unwrap();
        let same = crate::rfb::matching_pixels(&frame, &shot.bytes);
        best = best.max(same);
        if same * 100 >= pixels * 99 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    panic!("at best {best} of {pixels} pixels of the stream match the screenshot");
}

/// What a viewer page learns about itself (`GET <page>/session`), asked with
/// the token in `url`'s fragment, as the page asks it.
pub async fn viewer_session(url: &str) -> serde_json::Value {
    let (page, token) = url.split_once("#token=").expect("a token in the URL");
    holm_client::client_builder()
        .no_proxy()
        .build()
        .expect("an HTTP client")
        .get(format!("{page}/session"))
        .bearer_auth(token)
        .send()
        .await
        .expect("the session")
        .json()
        .await
        .expect("the session as JSON")
}
