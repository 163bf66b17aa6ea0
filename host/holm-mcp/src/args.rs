//! The arguments of each tool.
//!
//! Each type is both the tool's input schema (through `schemars`; the doc
//! comments are what a model reads) and its parser. Arguments are parsed
//! strictly with [`holm_proto::strict`]: an unknown field is refused, and one
//! answer names every wrong field, as REST does.

use std::collections::BTreeMap;

use holm_proto::guest::{Action, Button, ElementState, StorageState, WaitUntil};
use holm_proto::{ApiError, Issue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// No arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NoArgs {}

/// `launch_box`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LaunchBoxArgs {
    /// The runtime, as list_runtimes names it (default: the server's default).
    #[serde(default)]
    pub runtime: Option<String>,
    /// Remove the box this many minutes after it starts (default: the
    /// runtime's lifetime, usually 60).
    #[serde(default)]
    pub ttl_minutes: Option<u64>,
    /// Remove the box when no tool acted on it for this many minutes.
    /// Screenshots and cursor reads do not count as acting.
    #[serde(default)]
    pub idle_minutes: Option<u64>,
    /// How many screens, 1 to 6 (default 1).
    #[serde(default)]
    pub screens: Option<u8>,
    /// The size of every screen in pixels, WIDTHxHEIGHT (default 1280x800).
    #[serde(default)]
    pub screen_size: Option<String>,
    /// The display server: "x11" (default) or "wayland" (headless sway). The
    /// tools are the same; on Wayland the cursor tool cannot say where the
    /// pointer is after a person moved it, until you move it again.
    #[serde(default)]
    pub display: Option<holm_proto::guest::Profile>,
    /// Apps from the server's catalogue, such as "vscode".
    #[serde(default)]
    pub apps: Vec<String>,
    /// Debian packages to install, such as "jq".
    #[serde(default)]
    pub packages: Vec<String>,
    /// Keep Chromium's profile under this name, so a later box with the same
    /// profile finds its logins. Only runtimes that can keep a browser profile
    /// accept it.
    #[serde(default)]
    pub profile: Option<String>,
    /// Wait at most this many seconds for the desktop (default 50, at most
    /// 900). A box still starting then is answered as it is.
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `remove_box`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BoxArgs {
    /// The box's id, such as "box_7hq3k2m9x4ab".
    pub box_id: String,
}

/// An image format for screenshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShotFormat {
    /// Lossless; sharp text.
    #[default]
    Png,
    /// Lossy and smaller.
    Jpeg,
}

/// `screenshot`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// "png" (default) or "jpeg".
    #[serde(default)]
    pub format: ShotFormat,
    /// Draw the mouse pointer into the image (default false).
    #[serde(default)]
    pub cursor: bool,
}

/// Which coordinates a `desktop` call gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Coordinates {
    /// Pixels of this screen's screenshots (what `screenshot` shows).
    #[default]
    Screenshot,
    /// Pixels of the screen itself.
    Screen,
}

/// `desktop`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DesktopArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// The actions, run in order; all are checked before any runs.
    pub actions: Vec<Action>,
    /// What x and y mean: "screenshot" pixels (default) or "screen" pixels.
    #[serde(default)]
    pub coordinates: Coordinates,
    /// Answer with a screenshot taken after the actions (default true).
    #[serde(default = "yes")]
    pub screenshot: bool,
    /// Before that screenshot, wait until the screen stops changing, at most
    /// 2 seconds (default true).
    #[serde(default = "yes")]
    pub settle: bool,
    /// Keep the typed text out of every record (what one logs in with,
    /// say): holmd keeps it nowhere, not even its length (default false).
    #[serde(default)]
    pub sensitive: bool,
}

/// `cursor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CursorArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
}

/// `view_screen`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ViewScreenArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// A takeover link (mouse, keyboard and clipboard) rather than watch only (default false).
    #[serde(default)]
    pub takeover: bool,
}

/// `ask_for_help`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AskForHelpArgs {
    /// The box's id.
    pub box_id: String,
    /// Why a person is needed, shown to them on the takeover page (1 to 500 characters).
    pub reason: String,
    /// The screen the person should take, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
}

/// `wait_for_handback`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WaitForHandbackArgs {
    /// The box's id.
    pub box_id: String,
    /// The longest wait in seconds, 1 to 900 (default 50).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `exec`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExecArgs {
    /// The box's id.
    pub box_id: String,
    /// The program and its arguments, run without a shell. Give this or
    /// `command`.
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    /// A command line, run with `bash -c`. Give this or `argv`.
    #[serde(default)]
    pub command: Option<String>,
    /// The working directory, an absolute path (default: the home directory).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables added to the environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Text written to standard input, which is then closed.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Kill the command after this many seconds (default 50, at most 3600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Keep argv, command, env and stdin out of every record: holmd records
    /// the command only as "[sensitive]" (default false).
    #[serde(default)]
    pub sensitive: bool,
}

/// How file content travels in a tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// UTF-8 text.
    #[default]
    Text,
    /// Base64 of the raw bytes, for binary files.
    Base64,
}

/// `read_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path in the box.
    pub path: String,
    /// "text" (default; the file must be UTF-8) or "base64".
    #[serde(default)]
    pub encoding: Encoding,
    /// Read at most this many bytes (default 100000, at most 10000000).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// `write_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path in the box; missing directories are made.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
    /// How `content` is written: "text" (default) or "base64".
    #[serde(default)]
    pub encoding: Encoding,
    /// Permission bits in octal, such as "755" (default "644" for a new file;
    /// an existing file keeps its own).
    #[serde(default)]
    pub mode: Option<String>,
}

/// `list_files`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path to a directory in the box.
    pub path: String,
    /// How many levels to descend, 1 to 32 (default 1).
    #[serde(default)]
    pub depth: Option<u32>,
}

/// What a `page` call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    /// Load url in the tab and wait for it.
    Navigate,
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
/// action takes is checked by [`parse_page`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageArgs {
    /// The box's id.
    pub box_id: String,
    /// What to do: navigate {url}, click {selector}, type {text}, fill
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

/// A tool whose calls are one action each, named by an `action` field, and
/// whose other fields depend on the action (`page`, `box`).
pub trait OneAction: DeserializeOwned + Copy {
    /// The action's name on the wire.
    fn as_str(self) -> &'static str;
    /// The fields the action needs, and the ones it also takes (besides
    /// `box_id` and `action`).
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]);
}

impl OneAction for PageAction {
    fn as_str(self) -> &'static str {
        Self::as_str(self)
    }
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        Self::fields(self)
    }
}

/// Parses `page`'s arguments strictly, and checks that each field is one the
/// action takes and that the action has the fields it needs: one answer
/// names every wrong field.
pub fn parse_page(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<PageArgs, ApiError> {
    parse_action::<PageArgs, PageAction>(arguments)
}

/// Parses the arguments of a tool of [`OneAction`]s strictly, and checks
/// each field against the action: one answer names every wrong field.
pub fn parse_action<T: DeserializeOwned + JsonSchema + 'static, A: OneAction>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ApiError> {
    let arguments = arguments.unwrap_or_default();
    let mut issues = action_field_issues::<T, A>(&arguments);
    match holm_proto::strict::from_value::<T>(serde_json::Value::Object(arguments)) {
        Ok(args) if issues.is_empty() => Ok(args),
        Ok(_) => Err(ApiError::invalid_fields(issues)),
        Err(strict) => {
            for issue in strict {
                if !issues.iter().any(|i| i.path == issue.path) {
                    issues.push(issue);
                }
            }
            Err(ApiError::invalid_fields(issues))
        }
    }
}

/// The fields given that `action` does not take, and the ones it needs that
/// are missing (nothing when the action itself is missing or unknown: the
/// strict parse names it).
fn action_field_issues<T: JsonSchema + 'static, A: OneAction>(
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Vec<Issue> {
    let Some(action) =
        arguments.get("action").and_then(|a| serde_json::from_value::<A>(a.clone()).ok())
    else {
        return Vec::new();
    };
    let (needs, takes) = action.fields();
    let name = action.as_str();
    let mut issues = Vec::new();
    let known = holm_proto::strict::schema_of::<T>();
    let known = known.get("properties").and_then(|p| p.as_object());
    for (field, value) in arguments {
        let is_known = known.is_some_and(|k| k.contains_key(field));
        let common = field == "box_id" || field == "action";
        if is_known
            && !common
            && !needs.contains(&field.as_str())
            && !takes.contains(&field.as_str())
        {
            // An explicit null is "not given".
            if value.is_null() {
                continue;
            }
            let all: Vec<&str> = needs.iter().chain(takes).copied().collect();
            let problem = if all.is_empty() {
                format!("{name} does not take {field}")
            } else {
                format!("{name} does not take {field}; it takes {}", all.join(", "))
            };
            issues.push(Issue { path: field.clone(), problem });
        }
    }
    for field in needs {
        if arguments.get(*field).is_none_or(serde_json::Value::is_null) {
            issues.push(Issue {
                path: (*field).to_owned(),
                problem: format!("{name} needs {field}"),
            });
        }
    }
    issues
}

/// What a `box` call does to a box's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoxAction {
    /// Stop the box: its files are kept, its processes end.
    Stop,
    /// Start a stopped box: a new desktop with the same files.
    Start,
    /// Pause a running box: its memory is kept; it takes no commands.
    Pause,
    /// Resume a paused box where it was.
    Resume,
    /// A new box with a copy of this box's files (not its memory).
    Fork,
    /// Move the end of the box's lifetime later by minutes.
    Extend,
}

impl BoxAction {
    /// Every action, in the order the description lists them.
    pub const ALL: &[Self] =
        &[Self::Stop, Self::Start, Self::Pause, Self::Resume, Self::Fork, Self::Extend];
}

impl OneAction for BoxAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Start => "start",
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Fork => "fork",
            Self::Extend => "extend",
        }
    }

    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Stop | Self::Pause | Self::Resume => (&[], &[]),
            Self::Start => (&[], &["wait_secs"]),
            Self::Fork => (&[], &["name", "ttl_minutes", "idle_minutes", "wait_secs"]),
            Self::Extend => (&["minutes"], &[]),
        }
    }
}

/// `box`: one change to a box's life. Which fields an action takes is
/// checked by [`parse_action`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BoxLifeArgs {
    /// The box's id.
    pub box_id: String,
    /// What to do: stop, start {wait_secs}, pause, resume, fork {name,
    /// ttl_minutes, idle_minutes, wait_secs}, extend {minutes}.
    pub action: BoxAction,
    /// extend: how many minutes to add to the box's lifetime (never past the
    /// runtime's longest lifetime, counted from the box's creation).
    #[serde(default)]
    pub minutes: Option<u64>,
    /// fork: a name of your own for the copy.
    #[serde(default)]
    pub name: Option<String>,
    /// fork: remove the copy this many minutes after it starts (default: the
    /// runtime's lifetime, usually 60).
    #[serde(default)]
    pub ttl_minutes: Option<u64>,
    /// fork: remove the copy when no tool acted on it for this many minutes
    /// (default: the original's).
    #[serde(default)]
    pub idle_minutes: Option<u64>,
    /// start, fork: wait at most this many seconds for the desktop (default
    /// 50, at most 900). A box still starting then is answered as it is.
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `list_tabs`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TabsArgs {
    /// The box's id.
    pub box_id: String,
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

/// `save_state`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SaveStateArgs {
    /// The box's id.
    pub box_id: String,
}

/// `load_state`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoadStateArgs {
    /// The box's id.
    pub box_id: String,
    /// The object save_state answered (of this box or another): cookies and
    /// origins.
    pub state: StorageState,
}

fn yes() -> bool {
    true
}

/// Parses a tool's arguments strictly; missing arguments are `{}`.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ApiError> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    holm_proto::strict::from_value(value).map_err(ApiError::invalid_fields)
}

/// Refuses any argument, naming each, for a tool that takes none. (The
/// schema walk of `strict` sees no properties to hold fields against in an
/// empty object schema, so this is done here.)
pub fn no_args(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<NoArgs, ApiError> {
    let issues: Vec<Issue> = arguments
        .unwrap_or_default()
        .keys()
        .map(|k| Issue {
            path: k.clone(),
            problem: "unknown field; this tool takes no arguments".into(),
        })
        .collect();
    if issues.is_empty() { Ok(NoArgs {}) } else { Err(ApiError::invalid_fields(issues)) }
}

/// Checks a box id against the one grammar ([`holm_proto::BoxId`]), so a
/// wrong one is refused with a useful answer before any call, and nothing
/// else can reach a URL path.
pub fn check_box_id(id: &str) -> Result<holm_proto::BoxId, ApiError> {
    holm_proto::BoxId::parse(id).map_err(|e| {
        ApiError::invalid_fields(vec![Issue {
            path: "box_id".into(),
            problem: format!("{e}; list_boxes lists them"),
        }])
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The problems of the issues named in `e`'s details, one per line.
    fn problems(e: &ApiError) -> String {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(String::new, |issues| {
            issues
                .iter()
                .map(|i| i["problem"].as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    fn paths(e: &ApiError) -> Vec<String> {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(Vec::new, |issues| {
            issues.iter().map(|i| i["path"].as_str().unwrap_or_default().to_owned()).collect()
        })
    }

    #[test]
    fn missing_arguments_are_an_empty_object() {
        no_args(None).unwrap();
        no_args(obj(json!({}))).unwrap();
        let a: LaunchBoxArgs = parse(None).unwrap();
        assert!(a.runtime.is_none() && a.apps.is_empty());
    }

    #[test]
    fn defaults_are_what_the_descriptions_say() {
        let d: DesktopArgs = parse(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "click", "x": 1, "y": 2}]
        })))
        .unwrap();
        assert_eq!(d.screen, 0);
        assert_eq!(d.coordinates, Coordinates::Screenshot);
        assert!(d.screenshot && d.settle);
        let s: ScreenshotArgs = parse(obj(json!({"box_id": "box_abc"}))).unwrap();
        assert_eq!((s.screen, s.format, s.cursor), (0, ShotFormat::Png, false));
        let r: ReadFileArgs = parse(obj(json!({"box_id": "box_abc", "path": "/x"}))).unwrap();
        assert_eq!(r.encoding, Encoding::Text);
    }

    #[test]
    fn every_unknown_field_is_named_even_inside_actions() {
        let err = parse::<DesktopArgs>(obj(json!({
            "box_id": "box_abc",
            "actions": [{"type": "click", "x": 1, "y": 2, "buton": "left"}, {"type": "type", "txt": "a"}],
            "scren": 1,
        })))
        .unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"actions[0].buton".to_owned()), "{p:?}");
        assert!(p.contains(&"actions[1].txt".to_owned()), "{p:?}");
        assert!(p.contains(&"scren".to_owned()), "{p:?}");
        assert_eq!(err.code, holm_proto::ErrorCode::InvalidRequest);
    }

    #[test]
    fn wrong_types_and_missing_fields_are_named() {
        let err =
            parse::<ExecArgs>(obj(json!({"box_id": "box_a", "timeout_secs": "ten"}))).unwrap_err();
        assert_eq!(paths(&err), ["timeout_secs"]);
        let err = parse::<BoxArgs>(obj(json!({}))).unwrap_err();
        assert_eq!(paths(&err), ["box_id"]);
        let err =
            parse::<ReadFileArgs>(obj(json!({"box_id": "box_a", "path": "/x", "encoding": "hex"})))
                .unwrap_err();
        assert_eq!(paths(&err), ["encoding"]);
        let err = no_args(obj(json!({"all": true, "secret": 1}))).unwrap_err();
        assert_eq!(paths(&err), ["all", "secret"]);
    }

    #[test]
    fn an_unknown_action_type_is_refused() {
        let err = parse::<DesktopArgs>(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "teleport"}]
        })))
        .unwrap_err();
        assert!(
            err.message.contains("teleport") || format!("{:?}", err.details).contains("teleport")
        );
    }

    #[test]
    fn sensitive_is_taken_where_a_secret_is_sent_and_defaults_to_false() {
        let d: DesktopArgs = parse(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "type", "text": "pw"}], "sensitive": true
        })))
        .unwrap();
        assert!(d.sensitive);
        let e: ExecArgs = parse(obj(json!({"box_id": "box_abc", "argv": ["true"]}))).unwrap();
        assert!(!e.sensitive, "false unless asked");
        for action in [
            json!({"action": "type", "text": "pw"}),
            json!({"action": "fill", "selector": "#pw", "value": "pw"}),
        ] {
            let mut case = action;
            case["box_id"] = json!("box_abc");
            case["sensitive"] = json!(true);
            assert!(parse_page(obj(case)).unwrap().sensitive);
        }
        // An action that sends no secret does not take it.
        let err = parse_page(obj(json!({
            "box_id": "box_abc", "action": "navigate", "url": "about:blank", "sensitive": true
        })))
        .unwrap_err();
        assert_eq!(paths(&err), ["sensitive"], "{err:?}");
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
    fn each_box_action_takes_its_own_fields_and_is_refused_others_each_named() {
        let parse = |v: serde_json::Value| parse_action::<BoxLifeArgs, BoxAction>(obj(v));
        for ok in [
            json!({"box_id": "box_a", "action": "stop"}),
            json!({"box_id": "box_a", "action": "start", "wait_secs": 10}),
            json!({"box_id": "box_a", "action": "pause"}),
            json!({"box_id": "box_a", "action": "resume", "minutes": null}),
            json!({"box_id": "box_a", "action": "fork", "name": "copy", "ttl_minutes": 5, "idle_minutes": 2}),
            json!({"box_id": "box_a", "action": "extend", "minutes": 30}),
        ] {
            let a = parse(ok.clone()).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(json!(a.action.as_str()), ok["action"]);
        }
        let err =
            parse(json!({"box_id": "box_a", "action": "pause", "minutes": 3, "wait_secs": 1}))
                .unwrap_err();
        assert_eq!(paths(&err), ["minutes", "wait_secs"]);
        assert!(problems(&err).contains("pause does not take minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "extend", "name": "x"})).unwrap_err();
        assert_eq!(paths(&err), ["name", "minutes"]);
        assert!(problems(&err).contains("extend needs minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "reboot", "colour": 1})).unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"action".to_owned()) && p.contains(&"colour".to_owned()), "{p:?}");
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
    fn page_reads_and_state_parse_strictly() {
        let s: PageScreenshotArgs = parse(obj(json!({"box_id": "box_a"}))).unwrap();
        assert_eq!((s.format, s.full_page, s.tab), (ShotFormat::Png, false, None));
        let err = parse::<PageScreenshotArgs>(obj(json!({"box_id": "box_a", "fullPage": true})))
            .unwrap_err();
        assert_eq!(paths(&err), ["fullPage"]);
        let c: PageContentArgs = parse(obj(json!({"box_id": "box_a", "tab": "T"}))).unwrap();
        assert_eq!((c.tab.as_deref(), c.max_bytes), (Some("T"), None));
        let err = parse::<TabsArgs>(obj(json!({"box_id": "box_a", "all": true}))).unwrap_err();
        assert_eq!(paths(&err), ["all"]);
        let err =
            parse::<SaveStateArgs>(obj(json!({"box_id": "box_a", "path": "/x"}))).unwrap_err();
        assert_eq!(paths(&err), ["path"]);

        let state = json!({
            "cookies": [{"name": "s", "value": "v", "domain": "127.0.0.1", "path": "/",
                         "expires": -1, "http_only": false, "secure": false, "same_site": "Lax"}],
            "origins": [{"origin": "http://127.0.0.1:8000",
                         "local_storage": [{"name": "user", "value": "alice"}]}]
        });
        let l: LoadStateArgs =
            parse(obj(json!({"box_id": "box_a", "state": state.clone()}))).unwrap();
        assert_eq!(l.state.cookies[0].name, "s");
        assert!(l.state.origins[0].session_storage.is_empty());
        // Playwright's camelCase is refused, every wrong field named, inside the state.
        let mut playwright = state;
        playwright["cookies"][0]["httpOnly"] = json!(false);
        playwright["origins"][0]["localStorage"] = json!([]);
        let err = parse::<LoadStateArgs>(obj(json!({"box_id": "box_a", "state": playwright})))
            .unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"state.cookies[0].httpOnly".to_owned()), "{p:?}");
        assert!(p.contains(&"state.origins[0].localStorage".to_owned()), "{p:?}");
        let err = parse::<LoadStateArgs>(obj(json!({"box_id": "box_a"}))).unwrap_err();
        assert_eq!(paths(&err), ["state"]);
    }

    #[test]
    fn box_ids_are_checked_like_holm_makes_them() {
        for _ in 0..100 {
            let id = holm::ids::new_box_id();
            check_box_id(&id).unwrap();
        }
        for bad in [
            "",
            "box_",
            "box_ABC",
            "box_../x",
            "box_a/b",
            "container",
            "box_a b",
            &format!("box_{}", "a".repeat(33)),
        ] {
            assert_eq!(check_box_id(bad).is_ok(), holm::ids::is_box_id(bad), "{bad:?}");
            let err = check_box_id(bad).unwrap_err();
            assert_eq!(paths(&err), ["box_id"]);
            assert!(err.message.contains("list_boxes"), "{}", err.message);
        }
    }
}
