//! [`HolmMcp`]: the MCP server handler. Each tool checks its arguments, calls
//! holmd's REST API through [`holm_client`], and answers a tool result; any
//! failure is a tool result too ([`crate::errors`]).

use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::StreamExt;
use holm_client::{BoxClient, Client, Screenshot};
use holm_proto::guest::{
    ClickRequest, CommandRequest, CoordinateSpace, EvaluateRequest, EvaluateResult, FillRequest,
    ImageFormat, InputRequest, NavigateRequest, OpenTab, PageImageFormat, PageResult,
    PageScreenshotOptions, PressRequest, Screen, ScreenshotOptions, Settle, TypeRequest,
    WaitRequest,
};
use holm_proto::viewer::{AskForHelp, CreateViewer, ViewerMode};
use holm_proto::{ApiError, Issue};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::args::{
    self, BoxAction, BoxArgs, BoxLifeArgs, Coordinates, CursorArgs, DesktopArgs, Encoding,
    ExecArgs, ListFilesArgs, LoadStateArgs, PageAction, PageArgs, PageContentArgs,
    PageScreenshotArgs, ReadFileArgs, SaveStateArgs, ScreenshotArgs, ShotFormat, TabsArgs,
    WriteFileArgs,
};
use crate::errors::{from_client, new_request_id, tool_error};
use crate::lifecycle::{LAUNCH_WAIT_SECS, MAX_LAUNCH_WAIT_SECS, Reporter};
use crate::scale::{scale_for, to_image};
use crate::tools::{self, Name};

mod files;
mod page;

/// `exec` keeps this many bytes of each output stream: enough for a model,
/// small enough for its context.
const EXEC_OUTPUT_LIMIT: u64 = 100_000;
/// Under the 60 s a typical MCP client waits for any answer.
const EXEC_TIMEOUT_SECS: u64 = 50;
const MAX_EXEC_TIMEOUT_SECS: u64 = 3600;
const READ_DEFAULT_BYTES: u64 = 100_000;
const READ_MAX_BYTES: u64 = 10_000_000;
const LIST_MAX_ENTRIES: usize = 1000;
/// `page_text` and `page_html` answer this many bytes unless asked for more
/// (at most `READ_MAX_BYTES`); `evaluate` answers a value whose JSON is at
/// most this long whole.
const PAGE_DEFAULT_BYTES: u64 = 100_000;

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
        let tool = Name::parse(name)?;
        let started = Instant::now();
        let outcome = self.dispatch(tool, arguments, reporter.as_ref()).await;
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

    async fn dispatch(
        &self,
        tool: Name,
        arguments: Option<JsonObject>,
        reporter: Option<&Reporter>,
    ) -> Result<CallToolResult, ApiError> {
        match tool {
            Name::ListRuntimes => {
                args::no_args(arguments)?;
                let runtimes = self.client.runtimes().await.map_err(from_client)?;
                Ok(json_result(None, json!({ "runtimes": runtimes })))
            }
            Name::LaunchBox => self.launch_box(args::parse(arguments)?, reporter).await,
            Name::Box => {
                let a = args::parse_action::<BoxLifeArgs, BoxAction>(arguments)?;
                self.box_life(a, reporter).await
            }
            Name::ListBoxes => {
                args::no_args(arguments)?;
                let boxes = self.client.all_boxes().await.map_err(from_client)?;
                let summary = match boxes.len() {
                    0 => "no boxes; launch_box starts one".to_owned(),
                    1 => "1 box".to_owned(),
                    n => format!("{n} boxes"),
                };
                Ok(json_result(Some(summary), json!({ "boxes": boxes })))
            }
            Name::RemoveBox => {
                let a: BoxArgs = args::parse(arguments)?;
                args::check_box_id(&a.box_id)?;
                let info = self.client.remove_box(&a.box_id).await.map_err(from_client)?;
                Ok(json_result(Some(format!("box {} is removed", info.id)), to_value(&info)))
            }
            Name::Screenshot => self.screenshot(args::parse(arguments)?).await,
            Name::ViewScreen => self.view_screen(args::parse(arguments)?).await,
            Name::AskForHelp => self.ask_for_help(args::parse(arguments)?).await,
            Name::WaitForHandback => self.wait_for_handback(args::parse(arguments)?).await,
            Name::Desktop => self.desktop(args::parse(arguments)?).await,
            Name::Cursor => self.cursor(args::parse(arguments)?).await,
            Name::ListWindows => self.list_windows(args::parse(arguments)?).await,
            Name::Window => {
                let a = args::parse_action::<crate::desk::WindowArgs, crate::desk::WindowVerb>(
                    arguments,
                )?;
                self.window(a).await
            }
            Name::GetClipboard => self.get_clipboard(args::parse(arguments)?).await,
            Name::SetClipboard => self.set_clipboard(args::parse(arguments)?).await,
            Name::AccessibilityTree => self.accessibility_tree(args::parse(arguments)?).await,
            Name::AccessibilityAct => self.accessibility_act(args::parse(arguments)?).await,
            Name::StartRecording => self.start_recording(args::parse(arguments)?).await,
            Name::StopRecording => self.stop_recording(args::parse(arguments)?).await,
            Name::ListRecordings => self.list_recordings(args::parse(arguments)?).await,
            Name::Exec => self.exec(args::parse(arguments)?).await,
            Name::ReadFile => self.read_file(args::parse(arguments)?).await,
            Name::WriteFile => self.write_file(args::parse(arguments)?).await,
            Name::ListFiles => self.list_files(args::parse(arguments)?).await,
            Name::ListTabs => {
                let a: TabsArgs = args::parse(arguments)?;
                args::check_box_id(&a.box_id)?;
                let tabs = self.client.boxed(&a.box_id).tabs().await.map_err(from_client)?;
                let summary = match tabs.iter().find(|t| t.current) {
                    Some(c) => {
                        format!("{} tab(s); the current one is {} at {}", tabs.len(), c.id, c.url)
                    }
                    None => format!("{} tab(s); none is current", tabs.len()),
                };
                Ok(json_result(Some(summary), json!({ "tabs": tabs })))
            }
            Name::Page => self.page(args::parse_page(arguments)?).await,
            Name::PageText => self.page_content(args::parse(arguments)?, false).await,
            Name::PageHtml => self.page_content(args::parse(arguments)?, true).await,
            Name::PageScreenshot => self.page_screenshot(args::parse(arguments)?).await,
            Name::SaveState => {
                let a: SaveStateArgs = args::parse(arguments)?;
                args::check_box_id(&a.box_id)?;
                // Cookies and storage are the user's data, not holm's secrets.
                let state = self.client.boxed(&a.box_id).save_state().await.map_err(from_client)?;
                let summary = format!(
                    "{} cookie(s) and the storage of {} origin(s); pass this object as \
                     load_state's state to put them into a box",
                    state.cookies.len(),
                    state.origins.len()
                );
                Ok(json_result(Some(summary), to_value(&state)))
            }
            Name::LoadState => {
                let a: LoadStateArgs = args::parse(arguments)?;
                args::check_box_id(&a.box_id)?;
                let done =
                    self.client.boxed(&a.box_id).load_state(&a.state).await.map_err(from_client)?;
                let summary = format!(
                    "set {} cookie(s) and the storage of {} origin(s); {} tab(s) left open to \
                     hold session storage",
                    done.cookies,
                    done.origins,
                    done.tabs_opened.len()
                );
                Ok(json_result(Some(summary), to_value(&done)))
            }
        }
    }

    /// The screen `index` of a box, and the scale of its screenshots.
    async fn screen(&self, b: &BoxClient, index: u8) -> Result<(Screen, f64), ApiError> {
        let screens = b.screens().await.map_err(from_client)?;
        let count = screens.len();
        let screen = screens.into_iter().find(|s| s.index == index).ok_or_else(|| {
            invalid(
                "screen",
                format!(
                    "the box has {count} screen{}, numbered from 0; there is no screen {index}",
                    if count == 1 { "" } else { "s" }
                ),
            )
        })?;
        let scale = scale_for(screen.width, screen.height);
        Ok((screen, scale))
    }

    async fn screenshot(&self, a: ScreenshotArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let b = self.client.boxed(&a.box_id);
        let (screen, scale) = self.screen(&b, a.screen).await?;
        let options = shot_options(a.format, scale, a.cursor);
        let shot = b.screenshot(a.screen, &options).await.map_err(from_client)?;
        Ok(image_result(&shot, &screen, scale, None))
    }

    async fn desktop(&self, a: DesktopArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        if a.actions.is_empty() {
            return Err(invalid("actions", "give at least one action".to_owned()));
        }
        let b = self.client.boxed(&a.box_id);
        let (screen, scale) = self.screen(&b, a.screen).await?;
        let mut request =
            InputRequest { actions: a.actions, sensitive: a.sensitive, ..InputRequest::default() };
        let count = request.actions.len();
        // The guest maps every point through this space: screen = point / scale.
        if a.coordinates == Coordinates::Screenshot && scale < 1.0 {
            request.coordinate_space = Some(CoordinateSpace { scale, x: 0, y: 0 });
        }
        if a.screenshot {
            if a.settle {
                request.settle = Some(Settle::default());
            }
            request.screenshot = Some(shot_options(ShotFormat::Png, scale, false));
            let shot = b.act_and_see(a.screen, &request).await.map_err(from_client)?;
            let done = match shot.settled {
                Some(true) => format!("ran {count} action(s); the screen settled"),
                Some(false) => {
                    format!("ran {count} action(s); the screen was still changing after 2 s")
                }
                None => format!("ran {count} action(s)"),
            };
            return Ok(image_result(&shot, &screen, scale, Some(done)));
        }
        let result = b.input(a.screen, &request).await.map_err(from_client)?;
        // On Wayland the pointer's position is unknown after another
        // device moved it: the cursor is then null.
        let cursor = result.cursor.map(|c| {
            let (x, y) = to_image(c.x, c.y, scale);
            json!({ "x": x, "y": y })
        });
        Ok(json_result(
            Some(format!("ran {} action(s)", result.performed)),
            json!({
                "performed": result.performed,
                "cursor": cursor,
                "screen_cursor": result.cursor,
                "scale": scale,
            }),
        ))
    }

    async fn view_screen(&self, a: args::ViewScreenArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let mode = if a.takeover { ViewerMode::Control } else { ViewerMode::View };
        let request =
            CreateViewer { screen: a.screen, mode: Some(mode), ..CreateViewer::default() };
        let g = self.client.create_viewer(&a.box_id, &request).await.map_err(from_client)?;
        let what = if a.takeover { "takeover" } else { "watch-only" };
        Ok(json_result(
            Some(format!(
                "a {what} link to screen {} of box {}, until {}",
                g.screen, a.box_id, g.expires_at
            )),
            json!({ "url": g.url, "screen": g.screen, "mode": g.mode, "expires_at": g.expires_at }),
        ))
    }

    async fn ask_for_help(&self, a: args::AskForHelpArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let request = AskForHelp { reason: a.reason, screen: a.screen, expires_after_secs: None };
        let h = self.client.ask_for_help(&a.box_id, &request).await.map_err(from_client)?;
        Ok(json_result(
            Some("send the takeover_url to a person, then call wait_for_handback".into()),
            json!({ "state": h.status.state, "takeover_url": h.takeover_url, "expires_at": h.expires_at }),
        ))
    }

    async fn wait_for_handback(
        &self,
        a: args::WaitForHandbackArgs,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let secs = a.wait_secs.unwrap_or(LAUNCH_WAIT_SECS);
        if !(1..=MAX_LAUNCH_WAIT_SECS).contains(&secs) {
            return Err(invalid(
                "wait_secs",
                format!("must be 1 to {MAX_LAUNCH_WAIT_SECS}, not {secs}"),
            ));
        }
        let h = self.client.handoff(&a.box_id, Some(secs)).await.map_err(from_client)?;
        Ok(json_result(Some(format!("the handoff is {}", h.status.state)), to_value(&h.status)))
    }

    async fn cursor(&self, a: CursorArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let b = self.client.boxed(&a.box_id);
        let (_, scale) = self.screen(&b, a.screen).await?;
        let c = b.cursor(a.screen).await.map_err(from_client)?;
        let (x, y) = to_image(c.x, c.y, scale);
        Ok(json_result(
            None,
            json!({ "screen": c.screen, "x": x, "y": y, "screen_x": c.x, "screen_y": c.y, "scale": scale }),
        ))
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

fn shot_options(format: ShotFormat, scale: f64, cursor: bool) -> ScreenshotOptions {
    ScreenshotOptions {
        format: Some(match format {
            ShotFormat::Png => ImageFormat::Png,
            ShotFormat::Jpeg => ImageFormat::Jpeg,
        }),
        scale: (scale < 1.0).then_some(scale),
        cursor: cursor.then_some(true),
        ..ScreenshotOptions::default()
    }
}

/// A screenshot as an image block and a line that says its size, the screen's
/// size, the scale and where the pointer is.
fn image_result(
    shot: &Screenshot,
    screen: &Screen,
    scale: f64,
    before: Option<String>,
) -> CallToolResult {
    let m = &shot.meta;
    let mut line = String::new();
    if let Some(b) = before {
        line.push_str(&b);
        line.push_str(". ");
    }
    line.push_str(&format!(
        "Screenshot of screen {}: image {}x{} pixels of a {}x{} screen, scale {} (screen pixels = image pixels / scale).",
        screen.index, m.width, m.height, screen.width, screen.height, scale
    ));
    if let Some((x, y)) = shot.cursor {
        let (ix, iy) = to_image(x, y, scale);
        line.push_str(&format!(" The pointer is at ({ix}, {iy}) in image pixels."));
    }
    line.push_str(" Give desktop image pixels.");
    CallToolResult::success(vec![
        ContentBlock::image(BASE64.encode(&shot.bytes), m.format.mime()),
        ContentBlock::text(line),
    ])
}

/// A JSON answer: an optional sentence, the JSON as text, and the same JSON
/// as `structuredContent`.
pub(crate) fn json_result(summary: Option<String>, value: Value) -> CallToolResult {
    let mut content = Vec::new();
    if let Some(s) = summary {
        content.push(ContentBlock::text(s));
    }
    content.push(ContentBlock::text(value.to_string()));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(value);
    result
}

pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub(crate) fn invalid(path: &str, problem: String) -> ApiError {
    ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem }])
}

pub(crate) fn screens_text(screens: &[Screen]) -> String {
    match screens {
        [] => "its screens not yet known".to_owned(),
        [one] => format!("1 screen ({}x{})", one.width, one.height),
        many => format!(
            "{} screens ({})",
            many.len(),
            many.iter()
                .map(|s| format!("{}: {}x{}", s.index, s.width, s.height))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::page::{char_boundary, evaluate_result};
    use super::*;

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

    fn text(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

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

    #[test]
    fn a_long_evaluated_value_is_cut_and_said_so() {
        let short =
            EvaluateResult { value: json!({"n": 2}), kind: "object".into(), unserializable: None };
        let r = evaluate_result(short);
        assert_eq!(r.structured_content, Some(json!({"value": {"n": 2}, "type": "object"})));
        // 'é' is two bytes: the cut never splits it.
        let long = "é".repeat(60_000);
        let r = evaluate_result(EvaluateResult {
            value: json!(long),
            kind: "string".into(),
            unserializable: None,
        });
        let s = r.structured_content.clone().unwrap();
        assert_eq!(s["truncated"], true);
        assert_eq!(s["bytes"], 120_002);
        let prefix = s["value_json"].as_str().unwrap();
        assert!(prefix.len() <= 100_000 && prefix.len() > 99_990, "{}", prefix.len());
        assert!(prefix.starts_with("\"éé"));
        assert!(text(&r).contains("value_json holds its first"), "{}", text(&r));
    }

    #[test]
    fn char_boundary_keeps_whole_characters() {
        assert_eq!(char_boundary("abc", 10), 3);
        assert_eq!(char_boundary("abc", 2), 2);
        assert_eq!(char_boundary("aé", 2), 1);
        assert_eq!(char_boundary("aé", 3), 3);
        assert_eq!(char_boundary("€", 2), 0);
    }
}
