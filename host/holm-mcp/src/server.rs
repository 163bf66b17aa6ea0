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
use holm_proto::host::{BoxState, CreateBox};
use holm_proto::{ApiError, ErrorCode, Issue};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::args::{
    self, BoxArgs, Coordinates, CursorArgs, DesktopArgs, Encoding, ExecArgs, LaunchBoxArgs,
    ListFilesArgs, LoadStateArgs, PageAction, PageArgs, PageContentArgs, PageScreenshotArgs,
    ReadFileArgs, SaveStateArgs, ScreenshotArgs, ShotFormat, TabsArgs, WriteFileArgs,
};
use crate::errors::{from_client, new_request_id, tool_error};
use crate::scale::{scale_for, to_image};
use crate::tools::{self, Name};

/// How long `launch_box` waits for the desktop by default: under the 60 s a
/// typical MCP client waits for any answer.
const LAUNCH_WAIT_SECS: u64 = 50;
/// The longest `launch_box` wait (holmd's own limit).
const MAX_LAUNCH_WAIT_SECS: u64 = 900;
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
    client: Client,
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
        Self { client }
    }

    /// Runs the tool `name`: its result, or its failure as a tool result.
    /// `None` when no tool has that name.
    pub async fn call(&self, name: &str, arguments: Option<JsonObject>) -> Option<CallToolResult> {
        let tool = Name::parse(name)?;
        let started = Instant::now();
        let outcome = self.dispatch(tool, arguments).await;
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
    ) -> Result<CallToolResult, ApiError> {
        match tool {
            Name::ListRuntimes => {
                args::no_args(arguments)?;
                let runtimes = self.client.runtimes().await.map_err(from_client)?;
                Ok(json_result(None, json!({ "runtimes": runtimes })))
            }
            Name::LaunchBox => self.launch_box(args::parse(arguments)?).await,
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
            Name::Desktop => self.desktop(args::parse(arguments)?).await,
            Name::Cursor => self.cursor(args::parse(arguments)?).await,
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

    async fn launch_box(&self, a: LaunchBoxArgs) -> Result<CallToolResult, ApiError> {
        let wait = a.wait_secs.unwrap_or(LAUNCH_WAIT_SECS);
        if wait > MAX_LAUNCH_WAIT_SECS {
            return Err(invalid(
                "wait_secs",
                format!("must be at most {MAX_LAUNCH_WAIT_SECS}, not {wait}"),
            ));
        }
        let request = create_request(&a)?;
        let info = self
            .client
            .create_box(&request, Some(wait))
            .await
            .map_err(|e| launch_fields(from_client(e)))?;
        match info.state {
            BoxState::Running => {
                let summary = format!(
                    "box {} is running on {} with {}; use its id with the other tools",
                    info.id,
                    info.runtime,
                    screens_text(&info.screens)
                );
                Ok(json_result(Some(summary), to_value(&info)))
            }
            BoxState::Creating | BoxState::Starting => {
                let summary = format!(
                    "box {} is still {} after {wait} s (the first box of a new image waits for \
                     its build); list_boxes shows when it is running, and tools on it answer \
                     not_ready until then",
                    info.id,
                    state_name(info.state)
                );
                Ok(json_result(Some(summary), to_value(&info)))
            }
            other => Err(ApiError::new(
                ErrorCode::Unavailable,
                format!(
                    "box {} is {}: {}",
                    info.id,
                    state_name(other),
                    info.reason.as_deref().unwrap_or("no reason was given")
                ),
            )
            .with_hint("launch_box again; if it fails the same way, the reason says what to change")
            .with_details(json!({ "box": info }))),
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
        let mut request = InputRequest { actions: a.actions, ..InputRequest::default() };
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
        let (x, y) = to_image(result.cursor.x, result.cursor.y, scale);
        Ok(json_result(
            Some(format!("ran {} action(s)", result.performed)),
            json!({
                "performed": result.performed,
                "cursor": { "x": x, "y": y },
                "screen_cursor": result.cursor,
                "scale": scale,
            }),
        ))
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

    async fn exec(&self, a: ExecArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let timeout = a.timeout_secs.unwrap_or(EXEC_TIMEOUT_SECS);
        if !(1..=MAX_EXEC_TIMEOUT_SECS).contains(&timeout) {
            return Err(invalid(
                "timeout_secs",
                format!("must be 1 to {MAX_EXEC_TIMEOUT_SECS}, not {timeout}"),
            ));
        }
        let request = CommandRequest {
            argv: a.argv,
            command: a.command,
            cwd: a.cwd,
            env: a.env,
            stdin: a.stdin,
            timeout_ms: Some(timeout * 1000),
            output_limit: Some(EXEC_OUTPUT_LIMIT),
        };
        let result = self.client.boxed(&a.box_id).run(&request).await.map_err(from_client)?;
        let summary = match (result.exit_code, &result.signal, result.timed_out) {
            (_, _, true) => format!("timed out after {timeout} s and was killed"),
            (Some(code), _, _) => format!("exited with code {code}"),
            (None, Some(sig), _) => format!("ended by {sig}"),
            (None, None, _) => "ended".to_owned(),
        };
        Ok(json_result(Some(summary), to_value(&result)))
    }

    async fn read_file(&self, a: ReadFileArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let max = a.max_bytes.unwrap_or(READ_DEFAULT_BYTES);
        if !(1..=READ_MAX_BYTES).contains(&max) {
            return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
        }
        let max = max as usize;
        let mut stream =
            self.client.boxed(&a.box_id).read_file_stream(&a.path).await.map_err(from_client)?;
        // Read one byte past the limit, to know whether the file is longer,
        // and no further: a huge file costs no more than the limit.
        let mut bytes = Vec::new();
        while bytes.len() <= max {
            match stream.next().await {
                Some(chunk) => bytes.extend_from_slice(&chunk.map_err(from_client)?),
                None => break,
            }
        }
        drop(stream);
        let truncated = bytes.len() > max;
        bytes.truncate(max);
        let content = match a.encoding {
            Encoding::Base64 => BASE64.encode(&bytes),
            Encoding::Text => {
                // A limit can cut a character in two: keep the whole ones.
                let text = match std::str::from_utf8(&bytes) {
                    Ok(t) => t,
                    Err(e) if truncated && e.error_len().is_none() => {
                        std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
                    }
                    Err(_) => {
                        return Err(ApiError::invalid_fields(vec![Issue {
                            path: "encoding".into(),
                            problem: format!(
                                "{} is not UTF-8 text; read it with encoding \"base64\"",
                                a.path
                            ),
                        }]));
                    }
                };
                let text = text.to_owned();
                bytes.truncate(text.len());
                text
            }
        };
        let encoding = match a.encoding {
            Encoding::Text => "text",
            Encoding::Base64 => "base64",
        };
        let about = json!({ "path": a.path, "bytes": bytes.len(), "truncated": truncated, "encoding": encoding });
        Ok(CallToolResult::success(vec![
            ContentBlock::text(content),
            ContentBlock::text(about.to_string()),
        ]))
    }

    async fn write_file(&self, a: WriteFileArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let body = match a.encoding {
            Encoding::Text => a.content.into_bytes(),
            Encoding::Base64 => BASE64
                .decode(a.content.trim())
                .map_err(|e| invalid("content", format!("is not valid base64: {e}")))?,
        };
        let info = self
            .client
            .boxed(&a.box_id)
            .write_file(&a.path, body, a.mode.as_deref())
            .await
            .map_err(from_client)?;
        Ok(json_result(
            Some(format!("wrote {} bytes to {}", info.size, info.path)),
            to_value(&info),
        ))
    }

    async fn list_files(&self, a: ListFilesArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let mut entries = self
            .client
            .boxed(&a.box_id)
            .list(&a.path, a.depth.unwrap_or(1))
            .await
            .map_err(from_client)?;
        let total = entries.len();
        entries.truncate(LIST_MAX_ENTRIES);
        let summary = if total > LIST_MAX_ENTRIES {
            format!(
                "the first {LIST_MAX_ENTRIES} of {total} entries; list a deeper directory for the rest"
            )
        } else {
            format!("{total} entries")
        };
        Ok(json_result(Some(summary), json!({ "entries": entries })))
    }

    async fn page(&self, a: PageArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let b = self.client.boxed(&a.box_id);
        let PageArgs {
            action,
            tab,
            url,
            selector,
            text,
            value,
            key,
            expression,
            await_promise,
            wait_until,
            state,
            button,
            count,
            timeout_ms,
            ..
        } = a;
        // `parse_page` checked that the action has what it needs; this only
        // keeps a missing field an answer rather than a panic.
        let need = |v: Option<String>, field: &str| {
            v.ok_or_else(|| invalid(field, format!("{} needs {field}", action.as_str())))
        };
        let (did, result) = match action {
            PageAction::Navigate => {
                let url = need(url, "url")?;
                let request = NavigateRequest { url, tab, wait_until, timeout_ms };
                ("loaded the page".to_owned(), b.navigate_with(&request).await)
            }
            PageAction::Click => {
                let selector = need(selector, "selector")?;
                let did = format!("clicked {selector}");
                let request = ClickRequest { selector, tab, button, count, timeout_ms };
                (did, b.page_click_with(&request).await)
            }
            PageAction::Type => {
                let text = need(text, "text")?;
                let did = format!("typed {} character(s)", text.chars().count());
                let request = TypeRequest { text, selector, tab, timeout_ms };
                (did, b.page_type_with(&request).await)
            }
            PageAction::Fill => {
                let selector = need(selector, "selector")?;
                let value = need(value, "value")?;
                let did = format!("filled {selector}");
                let request = FillRequest { selector, value, tab, timeout_ms };
                (did, b.page_fill_with(&request).await)
            }
            PageAction::Press => {
                let key = need(key, "key")?;
                let did = format!("pressed {key}");
                let request = PressRequest { key, selector, tab, timeout_ms };
                (did, b.page_press_with(&request).await)
            }
            PageAction::Wait => {
                let selector = need(selector, "selector")?;
                let did = format!("{selector} is {}", state_word(state.unwrap_or_default()));
                let request = WaitRequest { selector, state, tab, timeout_ms };
                (did, b.page_wait_with(&request).await)
            }
            PageAction::Evaluate => {
                let expression = need(expression, "expression")?;
                let request = EvaluateRequest { expression, tab, await_promise, timeout_ms };
                let r = b.evaluate_with(&request).await.map_err(from_client)?;
                return Ok(evaluate_result(r));
            }
            PageAction::OpenTab => {
                let t = b
                    .open_tab(&OpenTab { url, wait_until, timeout_ms })
                    .await
                    .map_err(from_client)?;
                let summary = format!(
                    "opened tab {} at {} ({:?}); it is the current tab",
                    t.id, t.url, t.title
                );
                return Ok(json_result(Some(summary), to_value(&t)));
            }
            PageAction::CloseTab => {
                let tab = need(tab, "tab")?;
                b.close_tab(&tab).await.map_err(from_client)?;
                return Ok(json_result(
                    Some(format!("closed tab {tab}; list_tabs shows the current one")),
                    json!({ "closed": tab }),
                ));
            }
            PageAction::ActivateTab => {
                let tab = need(tab, "tab")?;
                b.activate_tab(&tab).await.map_err(from_client)?;
                return Ok(json_result(
                    Some(format!("tab {tab} is in front and current")),
                    json!({ "current": tab }),
                ));
            }
        };
        let r: PageResult = result.map_err(from_client)?;
        let summary = format!("{did}; tab {} is at {} ({:?})", r.tab, r.url, r.title);
        Ok(json_result(Some(summary), to_value(&r)))
    }

    async fn page_content(
        &self,
        a: PageContentArgs,
        html: bool,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let max = a.max_bytes.unwrap_or(PAGE_DEFAULT_BYTES);
        if !(1..=READ_MAX_BYTES).contains(&max) {
            return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
        }
        let b = self.client.boxed(&a.box_id);
        let page = if html {
            b.page_html(a.tab.as_deref()).await
        } else {
            b.page_text(a.tab.as_deref()).await
        }
        .map_err(from_client)?;
        let mut content = page.content;
        let whole = content.len();
        let truncated = whole > max as usize;
        content.truncate(char_boundary(&content, max as usize));
        let about = json!({
            "tab": page.tab,
            "url": page.url,
            "title": page.title,
            "bytes": content.len(),
            "total_bytes": whole,
            "truncated": truncated,
        });
        Ok(CallToolResult::success(vec![
            ContentBlock::text(content),
            ContentBlock::text(about.to_string()),
        ]))
    }

    async fn page_screenshot(&self, a: PageScreenshotArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let options = PageScreenshotOptions {
            tab: a.tab,
            format: Some(match a.format {
                ShotFormat::Png => PageImageFormat::Png,
                ShotFormat::Jpeg => PageImageFormat::Jpeg,
            }),
            quality: None,
            full_page: a.full_page.then_some(true),
        };
        let shot =
            self.client.boxed(&a.box_id).page_screenshot(&options).await.map_err(from_client)?;
        let mime = match shot.format {
            PageImageFormat::Png => "image/png",
            PageImageFormat::Jpeg => "image/jpeg",
        };
        let what = if a.full_page { "the whole page" } else { "the viewport" };
        let line = format!(
            "Page screenshot of {what}: image {}x{} pixels. Its pixels are the page's, not the \
             screen's: page takes CSS selectors, and desktop takes what screenshot shows.",
            shot.width, shot.height
        );
        Ok(CallToolResult::success(vec![
            ContentBlock::image(BASE64.encode(&shot.bytes), mime),
            ContentBlock::text(line),
        ]))
    }
}

/// An evaluated value: whole, or (when its JSON is longer than a model
/// should read) the first `PAGE_DEFAULT_BYTES` of its JSON, said so.
fn evaluate_result(r: EvaluateResult) -> CallToolResult {
    let json_text = r.value.to_string();
    let limit = PAGE_DEFAULT_BYTES as usize;
    if json_text.len() <= limit {
        return json_result(None, to_value(&r));
    }
    let prefix = &json_text[..char_boundary(&json_text, limit)];
    let summary = format!(
        "the value's JSON is {} bytes; value_json holds its first {}; evaluate a smaller part \
         of it for the rest",
        json_text.len(),
        prefix.len()
    );
    json_result(
        Some(summary),
        json!({ "type": r.kind, "truncated": true, "bytes": json_text.len(), "value_json": prefix }),
    )
}

/// The largest index at most `max` that is a character boundary of `s`.
fn char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

fn state_word(state: holm_proto::guest::ElementState) -> String {
    serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

impl ServerHandler for HolmMcp {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
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

    /// An unknown tool name is a protocol error (-32602), as the MCP
    /// specification lists it; everything a tool refuses is a tool result.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        // A cancelled call drops its REST request, and holmd and the guest
        // stop what it started (a command's process group is killed).
        let outcome = tokio::select! {
            r = self.call(&name, request.arguments) => r,
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

/// The REST request for `launch_box`, parsed by the REST type's own strict
/// parser, so a field REST does not take is refused here exactly as REST
/// would refuse it.
fn create_request(a: &LaunchBoxArgs) -> Result<CreateBox, ApiError> {
    let mut issues = Vec::new();
    let mut minutes = |field: &str, value: Option<u64>| {
        value.and_then(|m| {
            let secs = m.checked_mul(60);
            if secs.is_none() {
                issues.push(Issue { path: field.to_owned(), problem: format!("{m} is too large") });
            }
            secs
        })
    };
    let expires = minutes("ttl_minutes", a.ttl_minutes);
    let idle = minutes("idle_minutes", a.idle_minutes);
    if !issues.is_empty() {
        return Err(ApiError::invalid_fields(issues));
    }
    let mut spec = serde_json::Map::new();
    let mut placement = serde_json::Map::new();
    let put = |map: &mut serde_json::Map<String, Value>, key: &str, value: Value| {
        if !value.is_null() && value != json!([]) {
            map.insert(key.to_owned(), value);
        }
    };
    put(&mut spec, "screens", json!(a.screens));
    put(&mut spec, "screen_size", json!(a.screen_size));
    put(&mut spec, "apps", json!(a.apps));
    put(&mut spec, "packages", json!(a.packages));
    put(&mut spec, "profile", json!(a.profile));
    put(&mut placement, "runtime", json!(a.runtime));
    put(&mut placement, "expires_after_secs", json!(expires));
    put(&mut placement, "idle_timeout_secs", json!(idle));
    let body = json!({ "spec": spec, "placement": placement });
    holm_proto::strict::from_value::<CreateBox>(body)
        .map_err(|issues| launch_fields(ApiError::invalid_fields(issues)))
}

/// Names REST's fields as `launch_box` calls them, in a refusal of the create.
fn launch_fields(e: ApiError) -> ApiError {
    let Some(issues) = e.details.as_ref().and_then(|d| d.get("issues")).cloned() else {
        return e;
    };
    let Ok(issues) = serde_json::from_value::<Vec<Issue>>(issues) else { return e };
    let renamed: Vec<Issue> = issues
        .into_iter()
        .map(|i| {
            let (path, note) = match i.path.as_str() {
                "placement.expires_after_secs" => {
                    ("ttl_minutes".to_owned(), " (ttl_minutes is sent as seconds, times 60)")
                }
                "placement.idle_timeout_secs" => {
                    ("idle_minutes".to_owned(), " (idle_minutes is sent as seconds, times 60)")
                }
                p => (
                    p.strip_prefix("spec.")
                        .or_else(|| p.strip_prefix("placement."))
                        .unwrap_or(p)
                        .to_owned(),
                    "",
                ),
            };
            Issue { path, problem: format!("{}{note}", i.problem) }
        })
        .collect();
    let mut out = ApiError::invalid_fields(renamed);
    out.code = e.code;
    out.request_id = e.request_id;
    out
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
fn json_result(summary: Option<String>, value: Value) -> CallToolResult {
    let mut content = Vec::new();
    if let Some(s) = summary {
        content.push(ContentBlock::text(s));
    }
    content.push(ContentBlock::text(value.to_string()));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(value);
    result
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn invalid(path: &str, problem: String) -> ApiError {
    ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem }])
}

fn state_name(state: BoxState) -> String {
    serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn screens_text(screens: &[Screen]) -> String {
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

    #[test]
    fn launch_arguments_become_the_rest_request() {
        let a = LaunchBoxArgs {
            runtime: Some("docker".into()),
            ttl_minutes: Some(10),
            idle_minutes: Some(5),
            screens: Some(2),
            screen_size: Some("1920x1080".into()),
            apps: vec!["vscode".into()],
            packages: vec!["jq".into()],
            ..LaunchBoxArgs::default()
        };
        let r = create_request(&a).unwrap();
        assert_eq!(r.placement.runtime.as_deref(), Some("docker"));
        assert_eq!(r.placement.expires_after_secs, Some(600));
        assert_eq!(r.placement.idle_timeout_secs, Some(300));
        assert_eq!(r.spec.screens, Some(2));
        assert_eq!(r.spec.screen_size.as_deref(), Some("1920x1080"));
        assert_eq!(r.spec.apps, ["vscode"]);
        assert_eq!(r.spec.packages, ["jq"]);
        let r = create_request(&LaunchBoxArgs::default()).unwrap();
        assert_eq!(r, CreateBox::default());
    }

    #[test]
    fn a_profile_goes_to_rest() {
        let a = LaunchBoxArgs { profile: Some("work".into()), ..LaunchBoxArgs::default() };
        let r = create_request(&a).unwrap();
        assert_eq!(to_value(&r)["spec"]["profile"], "work");
    }

    #[test]
    fn rest_refusals_name_launch_box_fields() {
        let e = ApiError::invalid_fields(vec![
            Issue {
                path: "placement.expires_after_secs".into(),
                problem: "must be at least 60 seconds, not 0".into(),
            },
            Issue {
                path: "spec.screens".into(),
                problem: "must be 1 to 6 on this runtime, not 9".into(),
            },
            Issue { path: "placement.runtime".into(), problem: "unknown".into() },
        ])
        .with_request_id("req_1");
        let e = launch_fields(e);
        let t = crate::errors::describe(&e);
        assert!(t.contains("\n  ttl_minutes: must be at least 60 seconds, not 0 (ttl_minutes is sent as seconds"), "{t}");
        assert!(t.contains("\n  screens: must be 1 to 6"), "{t}");
        assert!(t.contains("\n  runtime: unknown"), "{t}");
        assert!(t.contains("request_id: req_1"), "{t}");
        assert!(e.message.contains("ttl_minutes"), "{}", e.message);
    }
}
