//! Windows and the clipboard in real boxes on Docker, through holmd, on
//! both profiles: the REST API (through the client) and the MCP tools. A
//! move shows in the next listing, an unknown window is not_found, the
//! clipboard gives back the text and PNG bytes set, a bad image is refused
//! and changes nothing, and Chromium pastes the text with ctrl+v. The
//! behaviours in detail (pixels where a window is listed, focus and typed
//! keys, close) are tested on both profiles in holm-guest's tests/windows.rs.

use std::time::Duration;

use base64::Engine as _;
use holm_proto::ErrorCode;
use holm_proto::desk::{ClipboardSet, WindowAction};
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::eventually;
use holm_testkit::matrix::Target;
use holm_testkit::mcp::{McpClient, Sdk, Transport, text};
use serde_json::json;

holm_testkit::suite!(windows_and_the_clipboard_work_through_holmd_and_mcp: docker [x11, wayland]);

const PAGE: &str =
    "data:text/html,%3Ctitle%3EPaste%3C%2Ftitle%3E%3Ctextarea%20id%3Dt%3E%3C%2Ftextarea%3E";

/// A PNG of 3x2 pixels.
fn png_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, 3, 2);
    e.set_color(png::ColorType::Rgb);
    let mut w = e.write_header().unwrap();
    w.write_image_data(&[255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9, 200, 100, 50, 1, 2, 3]).unwrap();
    w.finish().unwrap();
    out
}

async fn windows_and_the_clipboard_work_through_holmd_and_mcp(target: Target) {
    let server = target.server().await;
    let info = server
        .client
        .create_box(
            &CreateBox {
                spec: BoxSpec { display: Some(target.display), ..BoxSpec::default() },
                ..CreateBox::default()
            },
            Some(600),
        )
        .await
        .expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = server.client.boxed(&info.id);

    // Chromium's window is listed; a move shows in the next listing.
    b.navigate(PAGE).await.expect("navigate");
    let chromium = eventually(Duration::from_secs(30), "Chromium's window", || async {
        b.windows().await.ok()?.into_iter().find(|w| w.app.to_lowercase().contains("chrom"))
    })
    .await;
    let acted = b.window(chromium.id, WindowAction::Move { x: 40, y: 50 }).await.expect("move");
    assert!(acted.applied, "{acted:?}");
    let now = b.windows().await.unwrap().into_iter().find(|w| w.id == chromium.id).unwrap();
    assert_eq!((now.x, now.y), (40, 50), "{now:?}");
    let e = b.window(4_000_000_000, WindowAction::Focus).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotFound));

    // The clipboard: text and a PNG, set and read back byte for byte.
    let b64 = base64::engine::general_purpose::STANDARD;
    let png = png_bytes();
    let text_set = "pasted through holmd: ✓";
    let set = ClipboardSet {
        text: Some(text_set.into()),
        png_base64: Some(b64.encode(&png)),
        sensitive: false,
    };
    b.set_clipboard(&set).await.expect("set the clipboard");
    let got = b.clipboard().await.expect("read the clipboard");
    assert_eq!(got.text.as_deref(), Some(text_set));
    assert_eq!(b64.decode(got.png_base64.expect("an image")).unwrap(), png);
    let bad = ClipboardSet {
        text: None,
        png_base64: Some(b64.encode(b"\xff\xd8\xff a jpeg")),
        sensitive: false,
    };
    let e = b.set_clipboard(&bad).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::InvalidRequest));
    assert_eq!(b.clipboard().await.unwrap().text.as_deref(), Some(text_set));

    // Chromium pastes it.
    b.window(chromium.id, WindowAction::Focus).await.expect("focus");
    b.page_click("#t").await.expect("click the text area");
    b.key(0, "ctrl+v").await.expect("ctrl+v");
    eventually(Duration::from_secs(20), "Chromium to paste the text", || async {
        let v = b.evaluate("document.getElementById('t').value").await.ok()?.value;
        (v == text_set).then_some(())
    })
    .await;

    // The MCP tools see the same.
    let transport =
        Transport::Http { url: format!("{}/mcp", server.url), token: Some(server.token.clone()) };
    let mut mcp = McpClient::connect(&transport, Sdk::V2).await.expect("connect");
    let listed = mcp.call("list_windows", json!({"box_id": info.id})).await;
    let ids = listed["structuredContent"]["windows"].to_string();
    assert!(ids.contains(&chromium.id.to_string()), "{ids}");
    mcp.call("set_clipboard", json!({"box_id": info.id, "text": "from mcp"})).await;
    let clip = mcp.call("get_clipboard", json!({"box_id": info.id})).await;
    assert_eq!(clip["structuredContent"]["text"], "from mcp", "{}", text(&clip));
    let moved = mcp
        .call(
            "window",
            json!({"box_id": info.id, "window": chromium.id, "action": "move", "x": 10, "y": 20}),
        )
        .await;
    assert_eq!(moved["structuredContent"]["applied"], true, "{moved}");
    server.client.remove_box(&info.id).await.expect("remove the box");
}
