//! The accessibility tree in real boxes on Docker, through holmd, on both
//! profiles: the REST API (through the client) and the MCP tools. On X11 a
//! page's button is in the focused window's tree, clicking it by node (and
//! by role and name through MCP) clicks it, and an unknown node is
//! not_found and clicks nothing; on Wayland the tree is `unsupported`. The
//! behaviours in detail (rectangles where the pixels are, a GTK app, the
//! pointer fallback, values, bounds) are tested in holm-guest's
//! tests/accessibility.rs.

use std::time::Duration;

use holm_proto::ErrorCode;
use holm_proto::accessibility::{ActedVia, Node, NodeAction, NodeVerb, TreeQuery};
use holm_proto::guest::Profile;
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::eventually;
use holm_testkit::matrix::Target;
use holm_testkit::mcp::{McpClient, Sdk, Transport, text};
use serde_json::json;

holm_testkit::suite!(the_accessibility_tree_works_through_holmd_and_mcp: docker [x11, wayland]);

const PAGE: &str = "data:text/html,%3Ctitle%3ENodes%3C%2Ftitle%3E%3Cbutton%20onclick%3D%22window.clicks%3D(window.clicks%7C%7C0)%2B1%22%3EPress%20me%3C%2Fbutton%3E";

fn find<'a>(nodes: &'a [Node], role: &str, name: &str) -> Option<&'a Node> {
    nodes.iter().find_map(|n| {
        (n.role == role && n.name == name).then_some(n).or_else(|| find(&n.children, role, name))
    })
}

fn click(node: Option<String>, name: Option<&str>) -> NodeAction {
    NodeAction {
        action: NodeVerb::Click,
        node,
        role: name.map(|_| "push button".to_owned()),
        name: name.map(str::to_owned),
        value: None,
        screen: None,
        pointer: None,
        sensitive: false,
    }
}

async fn the_accessibility_tree_works_through_holmd_and_mcp(target: Target) {
    let server = target.server().await;
    let create = CreateBox {
        spec: BoxSpec { display: Some(target.display), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&create, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = server.client.boxed(&info.id);
    b.navigate(PAGE).await.expect("navigate");
    if target.display == Profile::Wayland {
        let e = b.accessibility(&TreeQuery::default()).await.unwrap_err();
        assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Unsupported), "{e}");
        server.client.remove_box(&info.id).await.expect("remove the box");
        return;
    }

    // The button is in the focused window's tree; clicking it by node
    // clicks it once.
    let button = eventually(Duration::from_secs(60), "the page's button", || async {
        let tree = b.accessibility(&TreeQuery::default()).await.ok()?;
        find(&tree.nodes, "push button", "Press me").cloned()
    })
    .await;
    assert!(button.rect.is_some_and(|r| r.width > 0 && r.height > 0), "{button:?}");
    let acted = b.accessibility_act(&click(Some(button.id.clone()), None)).await.expect("click");
    assert_eq!(acted.via, ActedVia::Action);
    let clicks = || async { b.evaluate("window.clicks || 0").await.ok().map(|r| r.value) };
    eventually(Duration::from_secs(20), "one click", || async {
        (clicks().await? == json!(1)).then_some(())
    })
    .await;

    // An unknown node is not_found and clicks nothing.
    let gone = click(Some(":1.9999/org/a11y/atspi/accessible/1".into()), None);
    let e = b.accessibility_act(&gone).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotFound), "{e}");
    assert_eq!(clicks().await, Some(json!(1)));

    // The MCP tools see the same tree and click by role and name.
    let transport =
        Transport::Http { url: format!("{}/mcp", server.url), token: Some(server.token.clone()) };
    let mut mcp = McpClient::connect(&transport, Sdk::V2).await.expect("connect");
    let tree = mcp.call("accessibility_tree", json!({"box_id": info.id})).await;
    assert!(tree["structuredContent"].to_string().contains(&button.id), "{}", text(&tree));
    let acted = mcp
        .call(
            "accessibility_act",
            json!({"box_id": info.id, "action": "click", "role": "push button", "name": "Press me"}),
        )
        .await;
    assert_eq!(acted["structuredContent"]["via"], "action", "{acted}");
    eventually(Duration::from_secs(20), "two clicks", || async {
        (clicks().await? == json!(2)).then_some(())
    })
    .await;
    server.client.remove_box(&info.id).await.expect("remove the box");
}
