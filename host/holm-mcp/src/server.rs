//! [`HolmMcp`]: the MCP server handler. A call finds its tool in
//! [`crate::tools::tools`], which checks its arguments, calls holmd's REST
//! API through [`holm_client`], and answers a tool result; any failure is a
//! tool result too ([`crate::errors`]).

use std::time::Instant;

use holm_client::Client;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::errors::{new_request_id, tool_error};
use crate::progress::Reporter;
use crate::tools;

/// What the server tells a host about itself, for the model.
const INSTRUCTIONS: &str = "holm gives you Linux desktops (boxes). Start one with launch_box \
(list_runtimes shows where boxes can run), look at it with screenshot, use it with desktop \
(mouse and keyboard, in screenshot pixels; it answers the screenshot after the actions), run \
commands with exec, and move files with read_file, write_file and list_files. Its browser has page \
tools: page acts by CSS selector (navigate, click, type, fill, press, wait, evaluate, tabs), \
page_text, page_html and page_screenshot read a page, and save_state and load_state carry a \
login between boxes. Remove a box with remove_box when you are done; every box also ends at its \
expires_at.";

/// The MCP server: every box capability as a tool, over holmd's REST API.
#[derive(Clone)]
pub struct HolmMcp {
    pub(crate) client: Client,
    /// Where viewers are reached (holmd's public address), for the live
    /// screen's content security policy.
    viewer_origin: String,
}

/// Shows the server's address only: the client holds the token.
impl std::fmt::Debug for HolmMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HolmMcp").field("server", &self.client.url()).finish_non_exhaustive()
    }
}

impl HolmMcp {
    /// A server calling the holmd that `client` points at.
    pub fn new(client: Client) -> Self {
        let viewer_origin = client.url().to_owned();
        Self { client, viewer_origin }
    }

    /// Viewers are reached at `url` (`HOLM_PUBLIC_URL`) rather than at the
    /// address this server calls holmd on.
    pub fn with_viewer_origin(mut self, url: &str) -> Self {
        url.trim_end_matches('/').clone_into(&mut self.viewer_origin);
        self
    }

    /// Runs the tool `name`: its result, or its failure as a tool result.
    /// `None` when no tool has that name.
    pub async fn call(&self, name: &str, arguments: Option<JsonObject>) -> Option<CallToolResult> {
        self.call_reporting(name, arguments, None).await
    }

    /// [`HolmMcp::call`], reporting progress (of `launch_box` and a fork) to
    /// `reporter` when the client asked for it.
    pub async fn call_reporting(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        reporter: Option<Reporter>,
    ) -> Option<CallToolResult> {
        let tool = tools::get(name)?;
        let started = Instant::now();
        let outcome = tool.run(self, arguments, reporter.as_ref()).await;
        let ms = started.elapsed().as_millis() as u64;
        // Arguments are not logged: they can hold file contents and typed text.
        Some(match outcome {
            Ok(result) => {
                tracing::info!(tool = name, ms, "tool call");
                result
            }
            Err(error) => {
                let request_id = new_request_id();
                tracing::info!(
                    tool = name,
                    ms,
                    code = %error.code,
                    request_id = error.request_id.as_deref().unwrap_or(&request_id),
                    "tool call failed"
                );
                tool_error(error, &request_id)
            }
        })
    }
}

impl ServerHandler for HolmMcp {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder().enable_tools().enable_resources().build(),
        )
        .with_server_info(Implementation::new("holm", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![crate::live::resource(&self.viewer_origin)]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != crate::live::LIVE_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {:?}; resources/list lists them", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![crate::live::contents(&self.viewer_origin)]).into())
    }

    /// An unknown tool name is a protocol error (-32602), as the MCP
    /// specification lists it; everything a tool refuses is a tool result.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let token = request
            .meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        let reporter = token.map(|t| Reporter::new(context.peer.clone(), t));
        // A cancelled call drops its REST request, and holmd and the guest
        // stop what it started (a command's process group is killed).
        let outcome = tokio::select! {
            r = self.call_reporting(&name, request.arguments, reporter) => r,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        match outcome {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool {name:?}; tools/list lists the tools"),
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Client, HolmMcp, JsonObject};

    fn server() -> HolmMcp {
        // Nothing listens here: a test that reached the network would fail.
        HolmMcp::new(Client::new("http://127.0.0.1:9", Some("test-token-0123456789")))
    }

    fn obj(v: Value) -> Option<JsonObject> {
        match v {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    use crate::args::testing::text;

    #[test]
    fn debug_shows_no_token() {
        let shown = format!("{:?}", server());
        assert!(shown.contains("127.0.0.1:9") && !shown.contains("test-token"), "{shown}");
    }

    #[tokio::test]
    async fn an_unknown_tool_is_none() {
        assert!(server().call("add_runtime", None).await.is_none());
    }

    #[tokio::test]
    async fn bad_arguments_are_tool_results_before_any_call() {
        let s = server();
        let cases: &[(&str, Value, &[&str])] = &[
            ("list_runtimes", json!({"secret": true}), &["secret"]),
            ("remove_box", json!({"box_id": "../etc"}), &["box_id"]),
            ("screenshot", json!({"box_id": "box_a", "screen": -1}), &["screen"]),
            ("desktop", json!({"box_id": "box_a", "actions": []}), &["actions"]),
            (
                "desktop",
                json!({"box_id": "box_a", "actions": [{"type": "click", "x": 1, "y": 1, "butt": 1}], "zoom": 2}),
                &["actions[0].butt", "zoom"],
            ),
            (
                "exec",
                json!({"box_id": "box_a", "command": "true", "timeout_secs": 0}),
                &["timeout_secs"],
            ),
            (
                "exec",
                json!({"box_id": "box_a", "command": "true", "timeout_secs": 99999}),
                &["timeout_secs"],
            ),
            ("read_file", json!({"box_id": "box_a", "path": "/x", "max_bytes": 0}), &["max_bytes"]),
            (
                "write_file",
                json!({"box_id": "box_a", "path": "/x", "content": "%%%", "encoding": "base64"}),
                &["content"],
            ),
            ("launch_box", json!({"wait_secs": 901}), &["wait_secs"]),
            ("launch_box", json!({"ttl_minutes": u64::MAX}), &["ttl_minutes"]),
            ("launch_box", json!({"runtime": "docker", "colour": "red"}), &["colour"]),
            ("box", json!({"box_id": "box_a", "action": "extend"}), &["minutes"]),
            (
                "box",
                json!({"box_id": "box_a", "action": "start", "wait_secs": 901}),
                &["wait_secs"],
            ),
            (
                "box",
                json!({"box_id": "box_a", "action": "fork", "ttl_minutes": u64::MAX}),
                &["ttl_minutes"],
            ),
            (
                "box",
                json!({"box_id": "box_a", "action": "extend", "minutes": u64::MAX}),
                &["minutes"],
            ),
            ("box", json!({"box_id": "../x", "action": "stop"}), &["box_id"]),
            ("list_tabs", json!({"box_id": "box_a", "tab": "x"}), &["tab"]),
            ("list_tabs", json!({"box_id": "BOX"}), &["box_id"]),
            ("page", json!({"box_id": "box_a", "action": "click"}), &["selector"]),
            (
                "page",
                json!({"box_id": "box_a", "action": "navigate", "url": "x", "key": "Enter"}),
                &["key"],
            ),
            ("page", json!({"box_id": "box_a", "action": "close_tab"}), &["tab"]),
            ("page", json!({"box_id": "box_a", "action": "hover", "selector": "a"}), &["action"]),
            ("page", json!({"box_id": "box_/x", "action": "open_tab"}), &["box_id"]),
            ("page_text", json!({"box_id": "box_a", "max_bytes": 0}), &["max_bytes"]),
            ("page_html", json!({"box_id": "box_a", "max_bytes": 10_000_001}), &["max_bytes"]),
            ("page_screenshot", json!({"box_id": "box_a", "format": "gif"}), &["format"]),
            ("save_state", json!({"box_id": "box_a", "file": "/x"}), &["file"]),
            ("load_state", json!({"box_id": "box_a"}), &["state"]),
            (
                "load_state",
                json!({"box_id": "box_a", "state": {"cookies": [{"name": "a"}], "extra": 1}}),
                &["state.extra"],
            ),
        ];
        for (tool, arguments, want) in cases {
            let r = s.call(tool, obj(arguments.clone())).await.unwrap();
            assert_eq!(r.is_error, Some(true), "{tool} {arguments}");
            let t = text(&r);
            assert!(t.starts_with("error[invalid_request]"), "{tool}: {t}");
            assert!(t.contains("request_id: req_"), "{tool}: {t}");
            let issues: Vec<String> =
                r.structured_content.as_ref().unwrap()["error"]["details"]["issues"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["path"].as_str().unwrap().to_owned())
                    .collect();
            for w in *want {
                assert!(issues.iter().any(|i| i == w), "{tool}: {issues:?} names {w}");
            }
        }
    }

    /// Every tool parses strictly before it calls anything: an
    /// unknown field is named in a tool result, whatever else is missing.
    #[tokio::test]
    async fn every_tool_refuses_an_unknown_field_before_any_call() {
        let s = server();
        for tool in crate::tools::all() {
            let r = s.call(&tool.name, obj(json!({"no_such_field": 1}))).await.unwrap();
            assert_eq!(r.is_error, Some(true), "{}", tool.name);
            let issues =
                r.structured_content.as_ref().unwrap()["error"]["details"]["issues"].to_string();
            assert!(issues.contains("\"no_such_field\""), "{}: {issues}", tool.name);
        }
    }

    #[tokio::test]
    async fn an_unreachable_server_is_unavailable_with_a_hint() {
        let r = server().call("list_boxes", None).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let t = text(&r);
        assert!(
            t.starts_with("error[unavailable]: cannot reach holmd at http://127.0.0.1:9"),
            "{t}"
        );
        assert!(t.contains("hint: "), "{t}");
        assert!(!t.contains("test-token"), "{t}");
    }
}
