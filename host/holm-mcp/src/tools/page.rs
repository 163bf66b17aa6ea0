//! The tools on the pages of a box's browser (Chromium on screen 0), through
//! DevTools: `list_tabs`, `page` (one action a call, by CSS selector),
//! `page_text`, `page_html` and `page_screenshot`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use holm_client::BoxClient;
use holm_proto::ApiError;
use holm_proto::guest::{
    Button, ClickRequest, ElementState, EvaluateRequest, EvaluateResult, FillRequest,
    NavigateRequest, OpenTab, PageImageFormat, PageResult, PageScreenshotOptions, PressRequest,
    TypeRequest, WaitRequest, WaitUntil,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{self, OneAction, invalid};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::files::READ_MAX_BYTES;
use crate::tools::screen::ShotFormat;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `page_text` and `page_html` answer this many bytes unless asked for more
/// (at most `READ_MAX_BYTES`); `evaluate` answers a value whose JSON is at
/// most this long whole.
const PAGE_DEFAULT_BYTES: u64 = 100_000;

/// `list_tabs`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TabsArgs {
    /// The box's id.
    pub box_id: String,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] =
    &[&ListTabs, &Page, &PageText, &PageHtml, &PageScreenshot];

/// `list_tabs`.
#[derive(Debug)]
pub(crate) struct ListTabs;

impl Tool for ListTabs {
    const NAME: &'static str = "list_tabs";
    const DESCRIPTION: &'static str = "List the tabs of the browser (Chromium on screen 0) of a \
        box: each tab's id (what page tools take as tab), url, title, and whether it is current \
        (page tools act on the current tab when no tab is given).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List browser tabs", effect: Effect::ReadOnly, open_world: false };
    type Args = TabsArgs;

    async fn call(mcp: &HolmMcp, a: TabsArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let tabs = mcp.client.boxed(&a.box_id).tabs().await.map_err(from_client)?;
        let summary = match tabs.iter().find(|t| t.current) {
            Some(c) => {
                format!("{} tab(s); the current one is {} at {}", tabs.len(), c.id, c.url)
            }
            None => format!("{} tab(s); none is current", tabs.len()),
        };
        Ok(json_result(Some(summary), json!({ "tabs": tabs })))
    }
}

/// What a `page` call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    /// Load url in the tab and wait for it.
    Navigate,
    /// Go back one page in the tab's history and wait for it to load.
    Back,
    /// Go forward one page in the tab's history and wait for it to load.
    Forward,
    /// Load the tab's page again and wait for it.
    Reload,
    /// Click the first visible element that matches selector.
    Click,
    /// Type text as key presses, into selector (focused first) or where the
    /// focus is.
    Type,
    /// Set the value of the field that matches selector at once.
    Fill,
    /// Press key, into selector (focused first) or where the focus is.
    Press,
    /// Wait until an element that matches selector is in state.
    Wait,
    /// Run the JavaScript expression in the page and answer its value.
    Evaluate,
    /// Open a new tab at url; it becomes the current tab.
    OpenTab,
    /// Close tab.
    CloseTab,
    /// Bring tab to the front and make it the current tab.
    ActivateTab,
}

impl PageAction {
    /// The action's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Navigate => "navigate",
            Self::Back => "back",
            Self::Forward => "forward",
            Self::Reload => "reload",
            Self::Click => "click",
            Self::Type => "type",
            Self::Fill => "fill",
            Self::Press => "press",
            Self::Wait => "wait",
            Self::Evaluate => "evaluate",
            Self::OpenTab => "open_tab",
            Self::CloseTab => "close_tab",
            Self::ActivateTab => "activate_tab",
        }
    }

    /// The fields the action needs, and the ones it also takes (besides
    /// `box_id` and `action`).
    pub fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Navigate => (&["url"], &["tab", "wait_until", "timeout_ms"]),
            Self::Back | Self::Forward | Self::Reload => (&[], &["tab"]),
            Self::Click => (&["selector"], &["tab", "button", "count", "timeout_ms"]),
            Self::Type => (&["text"], &["selector", "tab", "timeout_ms", "sensitive"]),
            Self::Fill => (&["selector", "value"], &["tab", "timeout_ms", "sensitive"]),
            Self::Press => (&["key"], &["selector", "tab", "timeout_ms"]),
            Self::Wait => (&["selector"], &["state", "tab", "timeout_ms"]),
            Self::Evaluate => (&["expression"], &["tab", "await_promise", "timeout_ms"]),
            Self::OpenTab => (&[], &["url", "wait_until", "timeout_ms"]),
            Self::CloseTab | Self::ActivateTab => (&["tab"], &[]),
        }
    }
}

/// `page`: one action on the box's browser (screen 0). Which fields an
/// action takes is checked by [`args::parse_action`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageArgs {
    /// The box's id.
    pub box_id: String,
    /// What to do: navigate {url}, back, forward, reload, click {selector}, type {text}, fill
    /// {selector,value}, press {key}, wait {selector}, evaluate {expression},
    /// open_tab {url}, close_tab {tab}, activate_tab {tab}.
    pub action: PageAction,
    /// The tab, as list_tabs answers its id (default: the current tab).
    /// Required by close_tab and activate_tab.
    #[serde(default)]
    pub tab: Option<String>,
    /// navigate, open_tab: the address, such as "http://127.0.0.1:8000/",
    /// "file:///root/page.html" or a data: URL (open_tab: default about:blank).
    #[serde(default)]
    pub url: Option<String>,
    /// click, fill, wait (and type, press: the element to focus first): a CSS
    /// selector; the first element that matches is used.
    #[serde(default)]
    pub selector: Option<String>,
    /// type: the text, any Unicode; \n presses Enter and \t Tab.
    #[serde(default)]
    pub text: Option<String>,
    /// fill: the field's new value.
    #[serde(default)]
    pub value: Option<String>,
    /// press: a key such as "Enter", "Escape", "ArrowDown", "a", or a chord
    /// with Control, Shift, Alt or Meta joined by +, such as "Control+a";
    /// the key names of the computer tool's key action work too.
    #[serde(default)]
    pub key: Option<String>,
    /// evaluate: a JavaScript expression, such as "document.title"; a promise
    /// is awaited unless await_promise is false.
    #[serde(default)]
    pub expression: Option<String>,
    /// evaluate: wait for a promise's value (default true).
    #[serde(default)]
    pub await_promise: Option<bool>,
    /// navigate, open_tab: how far loading must get before the answer: "load"
    /// (default), "dom_content_loaded" or "commit".
    #[serde(default)]
    pub wait_until: Option<WaitUntil>,
    /// wait: "visible" (default), "attached", "hidden" or "detached".
    #[serde(default)]
    pub state: Option<ElementState>,
    /// click: "left" (default), "middle" or "right".
    #[serde(default)]
    pub button: Option<Button>,
    /// click: 1 to 3 (default 1; 2 is a double click).
    #[serde(default)]
    pub count: Option<u8>,
    /// The longest wait in milliseconds: for the element (click, type, fill,
    /// press, wait: default 5000, at most 60000) or for loading and running
    /// (navigate, open_tab, evaluate: default 30000, at most 120000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// type, fill: keep the text out of every record (what one logs in
    /// with, say): holmd keeps it nowhere, not even its length (default
    /// false).
    #[serde(default)]
    pub sensitive: bool,
}

impl OneAction for PageAction {
    fn as_str(self) -> &'static str {
        Self::as_str(self)
    }
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        Self::fields(self)
    }
}

/// `page`.
#[derive(Debug)]
pub(crate) struct Page;

impl Tool for Page {
    const NAME: &'static str = "page";
    const DESCRIPTION: &'static str = "Act on a web page in the browser (Chromium on screen 0) of \
        a box, one action a call, through DevTools: elements are found by CSS selector, not by \
        pixels. Actions (field action): navigate {url}; back, forward (through the tab's history; \
        conflict when there is no page there); reload; click {selector,button,count}; type \
        {text,selector} (key presses); fill {selector,value} (sets a field's value at once); \
        press {key,selector}; wait {selector,state}; evaluate {expression} (answers its value as \
        JSON); open_tab {url}; close_tab {tab}; activate_tab {tab}. Actions act on the current \
        tab unless tab is given. Element actions wait up to timeout_ms for the element; one that \
        never shows is not_found (wait: timeout), and an exception in the page is page_error. \
        Answers the tab's id, url and title after the action (evaluate: the value). page_text, \
        page_html and page_screenshot read a page without acting; list_tabs lists the tabs.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Use a web page",
        effect: Effect::Destructive { idempotent: false },
        open_world: true,
    };
    type Args = PageArgs;

    fn parse(arguments: Option<JsonObject>) -> Result<PageArgs, ApiError> {
        args::parse_action::<PageArgs, PageAction>(arguments)
    }

    async fn call(mcp: &HolmMcp, a: PageArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        act(&mcp.client.boxed(&a.box_id), a).await
    }
}

/// A field `action` needs. `Page::parse` checked that the action has what
/// it needs; this only keeps a missing field an answer rather than a panic.
fn need(v: Option<String>, action: PageAction, field: &str) -> Result<String, ApiError> {
    v.ok_or_else(|| invalid(field, format!("{} needs {field}", action.as_str())))
}

/// Runs one `page` action; most answer the tab as it is after.
async fn act(b: &BoxClient, a: PageArgs) -> Answer {
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
        sensitive,
        ..
    } = a;
    let (did, result) = match action {
        PageAction::Navigate => {
            let url = need(url, action, "url")?;
            let request = NavigateRequest { url, tab, wait_until, timeout_ms };
            ("loaded the page".to_owned(), b.navigate_with(&request).await)
        }
        PageAction::Back => ("went back".to_owned(), b.page_back(tab.as_deref()).await),
        PageAction::Forward => ("went forward".to_owned(), b.page_forward(tab.as_deref()).await),
        PageAction::Reload => {
            ("loaded the page again".to_owned(), b.page_reload(tab.as_deref()).await)
        }
        PageAction::Click => {
            let selector = need(selector, action, "selector")?;
            let did = format!("clicked {selector}");
            let request = ClickRequest { selector, tab, button, count, timeout_ms };
            (did, b.page_click_with(&request).await)
        }
        PageAction::Type => {
            let text = need(text, action, "text")?;
            let did = format!("typed {} character(s)", text.chars().count());
            let request = TypeRequest { text, selector, tab, timeout_ms, sensitive };
            (did, b.page_type_with(&request).await)
        }
        PageAction::Fill => {
            let selector = need(selector, action, "selector")?;
            let value = need(value, action, "value")?;
            let did = format!("filled {selector}");
            let request = FillRequest { selector, value, tab, timeout_ms, sensitive };
            (did, b.page_fill_with(&request).await)
        }
        PageAction::Press => {
            let key = need(key, action, "key")?;
            let did = format!("pressed {key}");
            let request = PressRequest { key, selector, tab, timeout_ms };
            (did, b.page_press_with(&request).await)
        }
        PageAction::Wait => {
            let selector = need(selector, action, "selector")?;
            let did = format!("{selector} is {}", state.unwrap_or_default());
            let request = WaitRequest { selector, state, tab, timeout_ms };
            (did, b.page_wait_with(&request).await)
        }
        PageAction::Evaluate => {
            let expression = need(expression, action, "expression")?;
            let request = EvaluateRequest { expression, tab, await_promise, timeout_ms };
            let r = b.evaluate_with(&request).await.map_err(from_client)?;
            return Ok(evaluate_result(r));
        }
        PageAction::OpenTab => return open_tab(b, OpenTab { url, wait_until, timeout_ms }).await,
        PageAction::CloseTab | PageAction::ActivateTab => {
            return tab_action(b, action, need(tab, action, "tab")?).await;
        }
    };
    let r: PageResult = result.map_err(from_client)?;
    let summary = format!("{did}; tab {} is at {} ({:?})", r.tab, r.url, r.title);
    Ok(json_result(Some(summary), to_value(&r)))
}

/// `open_tab`: answers the new tab, which is the current one.
async fn open_tab(b: &BoxClient, request: OpenTab) -> Answer {
    let t = b.open_tab(&request).await.map_err(from_client)?;
    let summary =
        format!("opened tab {} at {} ({:?}); it is the current tab", t.id, t.url, t.title);
    Ok(json_result(Some(summary), to_value(&t)))
}

/// `close_tab` or `activate_tab` on `tab`.
async fn tab_action(b: &BoxClient, action: PageAction, tab: String) -> Answer {
    if action == PageAction::CloseTab {
        b.close_tab(&tab).await.map_err(from_client)?;
        return Ok(json_result(
            Some(format!("closed tab {tab}; list_tabs shows the current one")),
            json!({ "closed": tab }),
        ));
    }
    b.activate_tab(&tab).await.map_err(from_client)?;
    Ok(json_result(Some(format!("tab {tab} is in front and current")), json!({ "current": tab })))
}

/// `page_text` and `page_html`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageContentArgs {
    /// The box's id.
    pub box_id: String,
    /// The tab, as list_tabs answers its id (default: the current tab).
    #[serde(default)]
    pub tab: Option<String>,
    /// Answer at most this many bytes (default 100000, at most 10000000).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// `page_text`.
#[derive(Debug)]
pub(crate) struct PageText;

impl Tool for PageText {
    const NAME: &'static str = "page_text";
    const DESCRIPTION: &'static str = "The text a person sees on a page of a box's browser \
        (innerText of the body), with the tab's id, url and title; at most max_bytes (default \
        100000).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Read page text", effect: Effect::ReadOnly, open_world: false };
    type Args = PageContentArgs;

    async fn call(mcp: &HolmMcp, a: PageContentArgs, _: Option<&Reporter>) -> Answer {
        page_content(mcp, a, false).await
    }
}

/// `page_html`.
#[derive(Debug)]
pub(crate) struct PageHtml;

impl Tool for PageHtml {
    const NAME: &'static str = "page_html";
    const DESCRIPTION: &'static str = "The HTML of a page of a box's browser (the document as it \
        is now), with the tab's id, url and title; at most max_bytes (default 100000).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Read page HTML", effect: Effect::ReadOnly, open_world: false };
    type Args = PageContentArgs;

    async fn call(mcp: &HolmMcp, a: PageContentArgs, _: Option<&Reporter>) -> Answer {
        page_content(mcp, a, true).await
    }
}

/// `page_text` (the text a person sees) or `page_html`.
async fn page_content(mcp: &HolmMcp, a: PageContentArgs, html: bool) -> Answer {
    args::check_box_id(&a.box_id)?;
    let max = a.max_bytes.unwrap_or(PAGE_DEFAULT_BYTES);
    if !(1..=READ_MAX_BYTES).contains(&max) {
        return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
    }
    let b = mcp.client.boxed(&a.box_id);
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

/// `page_screenshot`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageScreenshotArgs {
    /// The box's id.
    pub box_id: String,
    /// The tab, as list_tabs answers its id (default: the current tab).
    #[serde(default)]
    pub tab: Option<String>,
    /// "png" (default) or "jpeg".
    #[serde(default)]
    pub format: ShotFormat,
    /// The whole page, not only what the window shows (default false).
    #[serde(default)]
    pub full_page: bool,
}

/// `page_screenshot`.
#[derive(Debug)]
pub(crate) struct PageScreenshot;

impl Tool for PageScreenshot {
    const NAME: &'static str = "page_screenshot";
    const DESCRIPTION: &'static str = "Take a screenshot of a page of a box's browser, brought to \
        the front: the window's viewport, or the whole page with full_page. Answers the image and \
        a line with its size. Its pixels are the page's, not the screen's: desktop takes what \
        screenshot shows, and page takes CSS selectors.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Page screenshot", effect: Effect::ReadOnly, open_world: false };
    type Args = PageScreenshotArgs;

    async fn call(mcp: &HolmMcp, a: PageScreenshotArgs, _: Option<&Reporter>) -> Answer {
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
            mcp.client.boxed(&a.box_id).page_screenshot(&options).await.map_err(from_client)?;
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

#[cfg(test)]
mod tests {
    use holm_proto::guest::EvaluateResult;
    use serde_json::json;

    use holm_proto::guest::ElementState;

    use super::{
        PageAction, PageArgs, PageContentArgs, PageScreenshotArgs, TabsArgs, char_boundary,
        evaluate_result,
    };
    use crate::args::parse;
    use crate::args::testing::{obj, paths};
    use crate::tools::Tool;
    use crate::tools::screen::ShotFormat;

    fn parse_page(
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<PageArgs, holm_proto::ApiError> {
        super::Page::parse(arguments)
    }

    use crate::args::testing::text;

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
    fn each_page_action_parses_with_what_it_needs() {
        let cases = [
            json!({"action": "navigate", "url": "http://127.0.0.1:8000/", "wait_until": "commit"}),
            json!({"action": "click", "selector": "#go", "button": "right", "count": 2}),
            json!({"action": "type", "text": "hi\n"}),
            json!({"action": "type", "text": "hi", "selector": "#name", "timeout_ms": 100}),
            json!({"action": "fill", "selector": "#name", "value": ""}),
            json!({"action": "press", "key": "Control+a", "selector": "#name"}),
            json!({"action": "wait", "selector": ".late", "state": "detached"}),
            json!({"action": "evaluate", "expression": "1 + 1", "await_promise": false}),
            json!({"action": "open_tab"}),
            json!({"action": "open_tab", "url": "about:blank"}),
            json!({"action": "close_tab", "tab": "ABC"}),
            json!({"action": "activate_tab", "tab": "ABC"}),
        ];
        for mut case in cases {
            case["box_id"] = json!("box_abc");
            let a = parse_page(obj(case.clone())).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(json!(a.action.as_str()), case["action"]);
        }
        let a = parse_page(obj(json!({
            "box_id": "box_abc", "action": "wait", "selector": "x", "state": "hidden", "tab": null
        })))
        .unwrap();
        assert_eq!(a.state, Some(ElementState::Hidden));
        assert_eq!(a.tab, None, "null is not given");
    }

    #[test]
    fn a_page_action_is_refused_fields_it_does_not_take_or_lacks_each_named() {
        let err = parse_page(obj(json!({
            "box_id": "box_abc", "action": "navigate", "selector": "#go", "text": "x", "urll": "y"
        })))
        .unwrap_err();
        let p = paths(&err);
        for want in ["selector", "text", "urll", "url"] {
            assert!(p.contains(&want.to_owned()), "{want} in {p:?}");
        }
        let issues = err.details.as_ref().unwrap()["issues"].to_string();
        assert!(issues.contains("navigate does not take selector; it takes url"), "{issues}");
        assert!(issues.contains("navigate needs url"), "{issues}");

        for (args, want) in [
            (json!({"action": "click"}), vec!["selector"]),
            (json!({"action": "fill", "selector": "#a"}), vec!["value"]),
            (json!({"action": "fill"}), vec!["selector", "value"]),
            (json!({"action": "press", "text": "a"}), vec!["key", "text"]),
            (json!({"action": "evaluate", "selector": "#a", "expression": "1"}), vec!["selector"]),
            (json!({"action": "close_tab"}), vec!["tab"]),
            (json!({"action": "activate_tab", "tab": "A", "url": "x"}), vec!["url"]),
            (json!({"action": "open_tab", "tab": "A"}), vec!["tab"]),
            (json!({"action": "click", "selector": "#a", "count": "two"}), vec!["count"]),
            (json!({"action": "wait", "selector": "#a", "state": "gone"}), vec!["state"]),
            (json!({"action": "scroll", "selector": "#a"}), vec!["action"]),
            (json!({"selector": "#a"}), vec!["action"]),
        ] {
            let mut args = args;
            args["box_id"] = json!("box_abc");
            let err = parse_page(obj(args.clone())).unwrap_err();
            let mut p = paths(&err);
            p.sort();
            assert_eq!(p, want, "{args}");
            assert_eq!(err.code, holm_proto::ErrorCode::InvalidRequest);
        }
    }

    #[test]
    fn every_page_field_is_taken_by_some_action() {
        let schema = holm_proto::strict::schema_of::<PageArgs>();
        let fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let actions = [
            PageAction::Navigate,
            PageAction::Back,
            PageAction::Forward,
            PageAction::Reload,
            PageAction::Click,
            PageAction::Type,
            PageAction::Fill,
            PageAction::Press,
            PageAction::Wait,
            PageAction::Evaluate,
            PageAction::OpenTab,
            PageAction::CloseTab,
            PageAction::ActivateTab,
        ];
        for f in fields {
            let taken = f == "box_id"
                || f == "action"
                || actions.iter().any(|a| {
                    let (needs, takes) = a.fields();
                    needs.contains(&f.as_str()) || takes.contains(&f.as_str())
                });
            assert!(taken, "{f} is taken by some action");
        }
        // And every field an action names is a field.
        for a in actions {
            let (needs, takes) = a.fields();
            for f in needs.iter().chain(takes) {
                assert!(schema["properties"].get(*f).is_some(), "{}: {f}", a.as_str());
            }
            let wire: PageAction = serde_json::from_value(json!(a.as_str())).unwrap();
            assert_eq!(wire, a);
        }
    }

    #[test]
    fn page_reads_parse_strictly() {
        let s: PageScreenshotArgs = parse(obj(json!({"box_id": "box_a"}))).unwrap();
        assert_eq!((s.format, s.full_page, s.tab), (ShotFormat::Png, false, None));
        let err = parse::<PageScreenshotArgs>(obj(json!({"box_id": "box_a", "fullPage": true})))
            .unwrap_err();
        assert_eq!(paths(&err), ["fullPage"]);
        let c: PageContentArgs = parse(obj(json!({"box_id": "box_a", "tab": "T"}))).unwrap();
        assert_eq!((c.tab.as_deref(), c.max_bytes), (Some("T"), None));
        let err = parse::<TabsArgs>(obj(json!({"box_id": "box_a", "all": true}))).unwrap_err();
        assert_eq!(paths(&err), ["all"]);
    }
}
