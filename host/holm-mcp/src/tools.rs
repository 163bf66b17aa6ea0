//! The tools: names, descriptions for a model, input schemas and annotations.
//!
//! Descriptions are short and exact: they say the units and which coordinates
//! a tool takes. Annotations are truthful: read-only tools change nothing;
//! `desktop`, `exec` and `write_file` can change or destroy what is in a box,
//! so they are destructive; `openWorld` marks tools whose effects can reach
//! beyond holm (a cloud runtime, package mirrors, the web from the box).
//!
//! No tool adds a runtime (a vendor key given to an agent would pass through
//! its context) and no tool answers a secret: box secrets, bridge secrets and
//! the server token stay in holmd.

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;

use crate::args::{
    AskForHelpArgs, BoxArgs, BoxLifeArgs, CursorArgs, DesktopArgs, ExecArgs, LaunchBoxArgs,
    ListFilesArgs, LoadStateArgs, NoArgs, PageArgs, PageContentArgs, PageScreenshotArgs,
    ReadFileArgs, SaveStateArgs, ScreenshotArgs, TabsArgs, ViewScreenArgs, WaitForHandbackArgs,
    WriteFileArgs,
};

/// The tools by name, in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// `list_runtimes`
    ListRuntimes,
    /// `launch_box`
    LaunchBox,
    /// `list_boxes`
    ListBoxes,
    /// `box`
    Box,
    /// `remove_box`
    RemoveBox,
    /// `screenshot`
    Screenshot,
    /// `desktop`
    Desktop,
    /// `cursor`
    Cursor,
    /// `exec`
    Exec,
    /// `read_file`
    ReadFile,
    /// `write_file`
    WriteFile,
    /// `list_files`
    ListFiles,
    /// `list_tabs`
    ListTabs,
    /// `page`
    Page,
    /// `page_text`
    PageText,
    /// `page_html`
    PageHtml,
    /// `page_screenshot`
    PageScreenshot,
    /// `save_state`
    SaveState,
    /// `load_state`
    LoadState,
    /// `view_screen`
    ViewScreen,
    /// `ask_for_help`
    AskForHelp,
    /// `wait_for_handback`
    WaitForHandback,
    /// `list_windows`
    ListWindows,
    /// `window`
    Window,
    /// `get_clipboard`
    GetClipboard,
    /// `set_clipboard`
    SetClipboard,
    /// `accessibility_tree`
    AccessibilityTree,
    /// `accessibility_act`
    AccessibilityAct,
    /// `start_recording`
    StartRecording,
    /// `stop_recording`
    StopRecording,
    /// `list_recordings`
    ListRecordings,
}

/// Every tool, in the order `tools/list` answers them.
pub const ALL: &[Name] = &[
    Name::ListRuntimes,
    Name::LaunchBox,
    Name::ListBoxes,
    Name::Box,
    Name::RemoveBox,
    Name::Screenshot,
    Name::Desktop,
    Name::Cursor,
    Name::Exec,
    Name::ReadFile,
    Name::WriteFile,
    Name::ListFiles,
    Name::ListTabs,
    Name::Page,
    Name::PageText,
    Name::PageHtml,
    Name::PageScreenshot,
    Name::SaveState,
    Name::LoadState,
    Name::ViewScreen,
    Name::AskForHelp,
    Name::WaitForHandback,
    Name::ListWindows,
    Name::Window,
    Name::GetClipboard,
    Name::SetClipboard,
    Name::AccessibilityTree,
    Name::AccessibilityAct,
    Name::StartRecording,
    Name::StopRecording,
    Name::ListRecordings,
];

impl Name {
    /// The tool's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ListRuntimes => "list_runtimes",
            Self::LaunchBox => "launch_box",
            Self::ListBoxes => "list_boxes",
            Self::Box => "box",
            Self::RemoveBox => "remove_box",
            Self::Screenshot => "screenshot",
            Self::Desktop => "desktop",
            Self::Cursor => "cursor",
            Self::Exec => "exec",
            Self::ReadFile => "read_file",
            Self::WriteFile => "write_file",
            Self::ListFiles => "list_files",
            Self::ListTabs => "list_tabs",
            Self::Page => "page",
            Self::PageText => "page_text",
            Self::PageHtml => "page_html",
            Self::PageScreenshot => "page_screenshot",
            Self::SaveState => "save_state",
            Self::LoadState => "load_state",
            Self::ViewScreen => "view_screen",
            Self::AskForHelp => "ask_for_help",
            Self::WaitForHandback => "wait_for_handback",
            Self::ListWindows => "list_windows",
            Self::Window => "window",
            Self::GetClipboard => "get_clipboard",
            Self::SetClipboard => "set_clipboard",
            Self::AccessibilityTree => "accessibility_tree",
            Self::AccessibilityAct => "accessibility_act",
            Self::StartRecording => "start_recording",
            Self::StopRecording => "stop_recording",
            Self::ListRecordings => "list_recordings",
        }
    }

    /// The tool with this wire name.
    pub fn parse(name: &str) -> Option<Self> {
        ALL.iter().copied().find(|n| n.as_str() == name)
    }
}

/// What a tool does to the world, as its annotations say.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Effect {
    /// Changes nothing.
    ReadOnly,
    /// Adds, and never destroys.
    Additive,
    /// Can change or destroy; `idempotent` when repeating it changes nothing more.
    Destructive { idempotent: bool },
}

pub(crate) fn annotations(title: &str, effect: Effect, open_world: bool) -> ToolAnnotations {
    let a = ToolAnnotations::with_title(title).open_world(open_world);
    match effect {
        Effect::ReadOnly => a.read_only(true).destructive(false).idempotent(true),
        Effect::Additive => a.read_only(false).destructive(false).idempotent(false),
        Effect::Destructive { idempotent } => {
            a.read_only(false).destructive(true).idempotent(idempotent)
        }
    }
}

pub(crate) fn schema<T: JsonSchema + 'static>() -> Arc<rmcp::model::JsonObject> {
    // The argument types are plain structs whose schemas are objects; a test
    // checks every one, so this cannot fail at run time.
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_empty_input())
}

/// `desktop`'s schema. Its actions are the guest's own `Action` type, whose
/// description speaks of the REST request's `coordinate_space`; here it
/// says what a model needs instead.
fn desktop_schema() -> Arc<rmcp::model::JsonObject> {
    let mut schema = (*schema::<DesktopArgs>()).clone();
    if let Some(action) =
        schema.get_mut("$defs").and_then(|d| d.get_mut("Action")).and_then(|a| a.as_object_mut())
    {
        action.insert(
            "description".into(),
            "One action, chosen by `type`. x and y are in the pixels `coordinates` names \
             (screenshot pixels by default); when they are left out, the action happens where \
             the pointer is."
                .into(),
        );
    }
    Arc::new(schema)
}

const SCREEN_COORDINATES: &str = "Every screenshot of a screen has the same size: the screen \
downscaled, when it is larger than 1568 pixels on its long edge or 1.15 megapixels, by a scale \
that depends only on the screen's size. Points read off a screenshot are what desktop takes.";

/// The definition of one tool.
pub fn tool(name: Name) -> Tool {
    let (description, schema, annotations): (String, _, _) = match name {
        Name::ListRuntimes => (
            "List the runtimes this server can put boxes on: name, provider, state, whether it \
             is the default, what it can do (`can`: screens, pause, stop, fork, browser_profile), \
             and its default and longest box lifetime in seconds. Pass a name to launch_box as \
             `runtime`. Runtimes are configured on the server; no tool adds one."
                .into(),
            schema::<NoArgs>(),
            annotations("List runtimes", Effect::ReadOnly, false),
        ),
        Name::LaunchBox => (
            "Start a new box: a Linux desktop with a window manager and Chromium on each screen \
             (X11, or Wayland with display \"wayland\"). \
             Answers once its desktop runs (or after wait_secs) with its id (box_...), state, \
             screens (pixels) and expires_at (RFC 3339). The first box with a new set of apps and \
             packages waits for an image build (minutes); a call that asks for progress gets \
             MCP progress notifications for its stages (image with its build steps, container, \
             desktop, browser). Remove it with remove_box when done."
                .into(),
            schema::<LaunchBoxArgs>(),
            annotations("Launch a box", Effect::Additive, true),
        ),
        Name::ListBoxes => (
            "List the boxes that are not removed: id, runtime, state (creating, starting, \
             running, stopped, failed...), screens (pixels), created_at and expires_at (RFC 3339)."
                .into(),
            schema::<NoArgs>(),
            annotations("List boxes", Effect::ReadOnly, false),
        ),
        Name::Box => (
            "Change a box's life, one action a call (field action): stop (its files are kept, \
             its processes end); start a stopped box (a new desktop with the same files; \
             answers once it runs or after wait_secs); pause (its memory is kept; it takes no \
             commands); resume a paused box where it was; fork {name,ttl_minutes,idle_minutes} \
             (a new box on the same runtime with a copy of the files, not the memory; answers \
             the new box); extend {minutes} (move expires_at later, never past the runtime's \
             longest lifetime). list_runtimes says what each runtime can do (`can`): an action \
             it cannot do is refused as unsupported, and one the box's state does not allow as \
             conflict, before anything changes. Answers the box (or the fork) as it is after."
                .into(),
            schema::<BoxLifeArgs>(),
            annotations("Change a box's life", Effect::Destructive { idempotent: false }, true),
        ),
        Name::RemoveBox => (
            "Remove a box: its desktop, processes and files are gone for good. Removing a box \
             that is already removed answers it again."
                .into(),
            schema::<BoxArgs>(),
            annotations("Remove a box", Effect::Destructive { idempotent: true }, false),
        ),
        Name::Screenshot => (
            format!(
                "Take a screenshot of one screen of a box. Answers the image and a line with its \
                 size, the screen's size, the scale (image pixels per screen pixel) and the \
                 pointer's position in image pixels. {SCREEN_COORDINATES}"
            ),
            schema::<ScreenshotArgs>(),
            annotations("Screenshot", Effect::ReadOnly, false),
        ),
        Name::Desktop => (
            format!(
                "Use a box's screen like a person: run mouse and keyboard actions in order, then \
                 (by default) wait for the screen to settle and answer a screenshot. x and y are \
                 screenshot pixels (as screenshot shows them) unless coordinates is \"screen\"; \
                 when x and y are left out, an action happens where the pointer is. Actions \
                 (field `type`): move {{x,y}}; click {{x,y,button,count,modifiers}} (count 2 is a \
                 double click); mouse_down, mouse_up {{x,y,button}}; drag {{path:[{{x,y}},...]}}; \
                 scroll {{x,y,dy,dx}} (dy > 0 scrolls down, in wheel clicks); type {{text}} (any \
                 Unicode, whatever the keyboard layout; \\n is Enter); key {{key,repeat}} (a \
                 key or a chord joined with +, such as \"ctrl+l\", \"enter\", \"alt+f4\"; \
                 names: ctrl, shift, alt, super, enter, escape, backspace, tab, space, delete, \
                 home, end, page_up, page_down, up, down, left, right, f1-f12, or one \
                 character); key_down, key_up {{key}}; hold {{key,duration_ms}}; wait {{ms}}. \
                 Every action is checked first: one bad action refuses the call and none runs. \
                 {SCREEN_COORDINATES}"
            ),
            desktop_schema(),
            annotations("Use the desktop", Effect::Destructive { idempotent: false }, true),
        ),
        Name::Cursor => (
            "Where the mouse pointer is on a screen of a box: x and y in screenshot pixels \
             (what desktop takes), and screen_x and screen_y in screen pixels."
                .into(),
            schema::<CursorArgs>(),
            annotations("Pointer position", Effect::ReadOnly, false),
        ),
        Name::Exec => (
            "Run a command in a box and wait for it: argv (no shell) or command (run with bash \
             -c). Answers exit_code (null when a signal ended it; then signal), stdout and stderr \
             (the first 100000 bytes of each; truncated says more was dropped), timed_out and \
             duration_ms. A non-zero exit code is a result, not a tool error. Commands start in a \
             clean environment with DISPLAY set to screen 0, so a GUI program shows on the \
             desktop; start long-running GUI programs in the background (command ending in &)."
                .into(),
            schema::<ExecArgs>(),
            annotations("Run a command", Effect::Destructive { idempotent: false }, true),
        ),
        Name::ReadFile => (
            "Read a file in a box by absolute path. Answers its content as text (the file must \
             be UTF-8), or as base64 with encoding \"base64\", then a line saying how many bytes \
             were read and whether the file is longer than max_bytes."
                .into(),
            schema::<ReadFileArgs>(),
            annotations("Read a file", Effect::ReadOnly, false),
        ),
        Name::WriteFile => (
            "Write a whole file in a box by absolute path, replacing it atomically (a reader \
             never sees half a file) and making missing directories. content is text, or base64 \
             with encoding \"base64\". Answers the file's path, size in bytes, mode and \
             modification time."
                .into(),
            schema::<WriteFileArgs>(),
            annotations("Write a file", Effect::Destructive { idempotent: true }, false),
        ),
        Name::ListFiles => (
            "List a directory in a box by absolute path, depth levels down: each entry's path, \
             type (file, dir, symlink, other), size in bytes, mode in octal and modification \
             time (RFC 3339). At most 1000 entries are answered."
                .into(),
            schema::<ListFilesArgs>(),
            annotations("List files", Effect::ReadOnly, false),
        ),
        Name::ListTabs => (
            "List the tabs of the browser (Chromium on screen 0) of a box: each tab's id (what \
             page tools take as tab), url, title, and whether it is current (page tools act on \
             the current tab when no tab is given)."
                .into(),
            schema::<TabsArgs>(),
            annotations("List browser tabs", Effect::ReadOnly, false),
        ),
        Name::Page => (
            "Act on a web page in the browser (Chromium on screen 0) of a box, one action a \
             call, through DevTools: elements are found by CSS selector, not by pixels. \
             Actions (field action): navigate {url}; click {selector,button,count}; type \
             {text,selector} (key presses); fill {selector,value} (sets a field's value \
             at once); press {key,selector}; wait {selector,state}; evaluate \
             {expression} (answers its value as JSON); open_tab {url}; close_tab {tab}; \
             activate_tab {tab}. Actions act on the current tab unless tab is given. Element \
             actions wait up to timeout_ms for the element; one that never shows is \
             not_found (wait: timeout), and an exception in the page is page_error. \
             Answers the tab's id, url and title after the action (evaluate: the value). \
             page_text, page_html \
             and page_screenshot read a page without acting; list_tabs lists the tabs."
                .into(),
            schema::<PageArgs>(),
            annotations("Use a web page", Effect::Destructive { idempotent: false }, true),
        ),
        Name::PageText => (
            "The text a person sees on a page of a box's browser (innerText of the body), \
             with the tab's id, url and title; at most max_bytes (default 100000)."
                .into(),
            schema::<PageContentArgs>(),
            annotations("Read page text", Effect::ReadOnly, false),
        ),
        Name::PageHtml => (
            "The HTML of a page of a box's browser (the document as it is now), with the \
             tab's id, url and title; at most max_bytes (default 100000)."
                .into(),
            schema::<PageContentArgs>(),
            annotations("Read page HTML", Effect::ReadOnly, false),
        ),
        Name::PageScreenshot => (
            "Take a screenshot of a page of a box's browser, brought to the front: the \
             window's viewport, or the whole page with full_page. Answers the image and a \
             line with its size. Its pixels are the page's, not the screen's: desktop takes \
             what screenshot shows, and page takes CSS selectors."
                .into(),
            schema::<PageScreenshotArgs>(),
            annotations("Page screenshot", Effect::ReadOnly, false),
        ),
        Name::SaveState => (
            "Read the browser state of a box: every cookie of its browser, and the local and \
             session storage of each http(s) origin open in a tab. Pass the answer as \
             load_state's state to carry a login to another box (or back to this one later)."
                .into(),
            schema::<SaveStateArgs>(),
            annotations("Save browser state", Effect::ReadOnly, false),
        ),
        Name::LoadState => (
            "Put cookies and storage that save_state answered into a box's browser: sets the \
             cookies, and each origin's local and session storage without loading anything \
             from the site (a tab is left open on each origin that has session storage). \
             Answers how many cookies and origins were set and the tabs opened. Open the \
             site with page afterwards."
                .into(),
            schema::<LoadStateArgs>(),
            annotations("Load browser state", Effect::Destructive { idempotent: false }, false),
        ),
        Name::ViewScreen => (
            "A link a person opens in a plain browser to watch one screen of a box live (or, with \
             takeover, to use its mouse, keyboard and clipboard). Give it only to the person it \
             is for: it works on its own for an hour. While a person uses a takeover link, your \
             desktop and page actions are refused (human_in_control) until they hand back."
                .into(),
            schema::<ViewScreenArgs>(),
            annotations("Viewer link", Effect::Additive, false),
        ),
        Name::AskForHelp => (
            "Ask a person for help with a box (a captcha, a login, a decision): answers a \
             takeover link whose page shows your reason. Send it to the person; then call \
             wait_for_handback. While they are in control your desktop and page actions are \
             refused; screenshot keeps working."
                .into(),
            schema::<AskForHelpArgs>(),
            annotations("Ask a person for help", Effect::Additive, false),
        ),
        Name::WaitForHandback => (
            "Wait (at most wait_secs) until no person is in control of a box and no request for \
             help waits. Answers state: handed_back (with how: released or disconnected), \
             waiting (nobody took control yet), human_in_control (still working) or none."
                .into(),
            schema::<WaitForHandbackArgs>(),
            annotations("Wait for a person", Effect::ReadOnly, false),
        ),
        Name::ListWindows | Name::Window | Name::GetClipboard | Name::SetClipboard => {
            crate::desk::tool(name)
        }
        Name::AccessibilityTree | Name::AccessibilityAct => crate::accessibility::tool(name),
        Name::StartRecording | Name::StopRecording | Name::ListRecordings => {
            crate::record::tool(name)
        }
    };
    let mut tool = Tool::new(name.as_str(), description, schema);
    if matches!(name, Name::Screenshot | Name::Desktop) {
        // MCP Apps hosts show the box's screen live beside the result.
        tool.meta = Some(crate::live::tool_meta());
    }
    tool.title = annotations.title.clone();
    tool.annotations = Some(annotations);
    tool
}

/// Every tool's definition, made once.
pub fn all() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| ALL.iter().map(|n| tool(*n)).collect())
}

/// The definition of the tool named `name`.
pub fn find(name: &str) -> Option<Tool> {
    Name::parse(name).map(tool)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    /// Every `$ref` in `schema` points at a definition that exists.
    fn refs_resolve(root: &Value, node: &Value) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let pointer =
                        r.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {r}"));
                    assert!(root.pointer(pointer).is_some(), "$ref {r} resolves");
                }
                map.values().for_each(|v| refs_resolve(root, v));
            }
            Value::Array(items) => items.iter().for_each(|v| refs_resolve(root, v)),
            _ => {}
        }
    }

    /// The JSON Schema keywords a schema may hold, for a structural check:
    /// every object that is a schema uses only known keywords and valid types.
    fn check_schema(node: &Value, path: &str) {
        let Value::Object(map) = node else {
            assert!(node.is_boolean(), "{path}: a schema is an object or a boolean");
            return;
        };
        const KEYWORDS: &[&str] = &[
            "$schema",
            "$ref",
            "$defs",
            "type",
            "properties",
            "required",
            "items",
            "enum",
            "const",
            "oneOf",
            "anyOf",
            "allOf",
            "description",
            "title",
            "default",
            "format",
            "minimum",
            "maximum",
            "additionalProperties",
            "minItems",
            "maxItems",
            "examples",
        ];
        for (k, v) in map {
            assert!(KEYWORDS.contains(&k.as_str()), "{path}: unknown keyword {k}");
            match k.as_str() {
                "type" => {
                    let types: Vec<&str> = match v {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => panic!("{path}: type is a string or an array"),
                    };
                    for t in types {
                        assert!(
                            ["object", "array", "string", "integer", "number", "boolean", "null"]
                                .contains(&t),
                            "{path}: type {t}"
                        );
                    }
                }
                "properties" | "$defs" => {
                    for (name, sub) in v.as_object().unwrap_or_else(|| panic!("{path}.{k}")) {
                        check_schema(sub, &format!("{path}.{k}.{name}"));
                    }
                }
                "items" | "additionalProperties" => check_schema(v, &format!("{path}.{k}")),
                "oneOf" | "anyOf" | "allOf" => {
                    for (i, sub) in
                        v.as_array().unwrap_or_else(|| panic!("{path}.{k}")).iter().enumerate()
                    {
                        check_schema(sub, &format!("{path}.{k}[{i}]"));
                    }
                }
                "required" => {
                    let props = map.get("properties").and_then(Value::as_object);
                    for r in v.as_array().unwrap_or_else(|| panic!("{path}.required")) {
                        let r = r.as_str().unwrap_or_else(|| panic!("{path}.required"));
                        assert!(
                            props.is_some_and(|p| p.contains_key(r)),
                            "{path}: required {r} is a property"
                        );
                    }
                }
                "description" => assert!(v.is_string(), "{path}.description"),
                _ => {}
            }
        }
    }

    #[test]
    fn the_tools_are_exactly_these() {
        let names: Vec<&str> = all().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "list_runtimes",
                "launch_box",
                "list_boxes",
                "box",
                "remove_box",
                "screenshot",
                "desktop",
                "cursor",
                "exec",
                "read_file",
                "write_file",
                "list_files",
                "list_tabs",
                "page",
                "page_text",
                "page_html",
                "page_screenshot",
                "save_state",
                "load_state",
                "view_screen",
                "ask_for_help",
                "wait_for_handback",
                "list_windows",
                "window",
                "get_clipboard",
                "set_clipboard",
                "accessibility_tree",
                "accessibility_act",
                "start_recording",
                "stop_recording",
                "list_recordings"
            ]
        );
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len());
        for n in ALL {
            assert_eq!(Name::parse(n.as_str()), Some(*n));
            assert_eq!(find(n.as_str()).map(|t| t.name), Some(n.as_str().into()));
        }
        assert_eq!(Name::parse("add_runtime"), None);
    }

    #[test]
    fn no_tool_adds_a_runtime_or_speaks_of_secrets() {
        for t in all() {
            let name = t.name.to_lowercase();
            assert!(!name.contains("runtime") || name.starts_with("list_"), "{name}");
            assert!(
                !name.contains("secret") && !name.contains("token") && !name.contains("key"),
                "{name}"
            );
            let schema = serde_json::to_string(&t.input_schema).unwrap().to_lowercase();
            for word in ["secret", "token", "api_key", "password", "credential"] {
                assert!(!schema.contains(word), "{name}'s schema mentions {word}");
            }
        }
    }

    #[test]
    fn every_input_schema_is_a_valid_object_schema() {
        for t in all() {
            let schema = Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert!(
                schema["properties"].is_object()
                    || t.name == "list_runtimes"
                    || t.name == "list_boxes",
                "{}",
                t.name
            );
            assert_eq!(
                schema["additionalProperties"], false,
                "{}: unknown fields are refused",
                t.name
            );
            refs_resolve(&schema, &schema);
            check_schema(&schema, t.name.as_ref());
            // Every argument is described for the model.
            if let Some(props) = schema["properties"].as_object() {
                for (field, sub) in props {
                    let described = sub.get("description").is_some()
                        || sub.get("$ref").is_some()
                        || sub.get("allOf").is_some();
                    assert!(described, "{}.{field} has a description", t.name);
                }
            }
        }
    }

    #[test]
    fn box_tools_require_a_box_id() {
        for t in all() {
            let schema = Value::Object((*t.input_schema).clone());
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let box_tool =
                !matches!(t.name.as_ref(), "list_runtimes" | "launch_box" | "list_boxes");
            assert_eq!(required.contains(&"box_id"), box_tool, "{}", t.name);
        }
    }

    #[test]
    fn the_desktop_schema_lists_every_action() {
        let t = find("desktop").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        for action in [
            "move",
            "click",
            "mouse_down",
            "mouse_up",
            "drag",
            "scroll",
            "type",
            "key",
            "key_down",
            "key_up",
            "hold",
            "wait",
        ] {
            assert!(
                s.contains(&format!("\"const\":\"{action}\"")),
                "desktop's schema has {action}"
            );
            assert!(t.description.as_deref().unwrap().contains(action), "desktop says {action}");
        }
        let action = &Value::Object((*t.input_schema).clone())["$defs"]["Action"]["description"];
        assert!(action.as_str().unwrap().contains("screenshot pixels"), "{action}");
    }

    #[test]
    fn annotations_are_truthful() {
        let get = |n: &str| find(n).unwrap().annotations.unwrap();
        for n in [
            "list_runtimes",
            "list_boxes",
            "screenshot",
            "cursor",
            "read_file",
            "list_files",
            "list_tabs",
            "page_text",
            "page_html",
            "page_screenshot",
            "save_state",
            "wait_for_handback",
        ] {
            let a = get(n);
            assert_eq!(a.read_only_hint, Some(true), "{n} is read-only");
            assert_eq!(a.destructive_hint, Some(false), "{n}");
        }
        for n in ["remove_box", "box", "desktop", "exec", "write_file", "page", "load_state"] {
            let a = get(n);
            assert_eq!(a.read_only_hint, Some(false), "{n}");
            assert_eq!(a.destructive_hint, Some(true), "{n} is destructive");
        }
        let launch = get("launch_box");
        assert_eq!(
            (launch.read_only_hint, launch.destructive_hint, launch.idempotent_hint),
            (Some(false), Some(false), Some(false))
        );
        assert_eq!(get("remove_box").idempotent_hint, Some(true));
        assert_eq!(get("write_file").idempotent_hint, Some(true));
        assert_eq!(get("desktop").idempotent_hint, Some(false));
        assert_eq!(get("exec").idempotent_hint, Some(false));
        // A fork makes a box each time; an extend moves the deadline each time.
        assert_eq!(get("box").idempotent_hint, Some(false));
        // A page action can submit a form or run any script; loading a state
        // again opens more tabs.
        assert_eq!(get("page").idempotent_hint, Some(false));
        assert_eq!(get("load_state").idempotent_hint, Some(false));
        assert_eq!(get("page").open_world_hint, Some(true), "navigate reaches the web");
        assert_eq!(get("load_state").open_world_hint, Some(false), "it fetches nothing");
        for t in all() {
            let a = t.annotations.as_ref().unwrap();
            assert!(a.title.is_some() && a.open_world_hint.is_some(), "{}", t.name);
            assert_eq!(t.title, a.title);
        }
    }

    #[test]
    fn the_page_schema_and_description_list_every_action() {
        let t = find("page").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        let d = t.description.as_deref().unwrap();
        for action in [
            "navigate",
            "click",
            "type",
            "fill",
            "press",
            "wait",
            "evaluate",
            "open_tab",
            "close_tab",
            "activate_tab",
        ] {
            assert!(s.contains(&format!("\"{action}\"")), "page's schema has {action}");
            assert!(d.contains(&format!("{action} {{")), "page says {action}");
        }
        let schema = Value::Object((*t.input_schema).clone());
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(required, ["box_id", "action"]);
    }

    #[test]
    fn the_box_tool_lists_every_action_and_its_fields() {
        use crate::args::{BoxAction, OneAction};
        let t = find("box").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        let d = t.description.as_deref().unwrap();
        for a in BoxAction::ALL {
            let name = a.as_str();
            assert!(s.contains(&format!("\"{name}\"")), "box's schema has {name}");
            assert!(d.contains(name), "box says {name}");
            let (needs, takes) = a.fields();
            for field in needs.iter().chain(takes) {
                assert!(s.contains(&format!("\"{field}\"")), "box's schema has {field}");
            }
        }
        for word in ["unsupported", "conflict", "can"] {
            assert!(d.contains(word), "box says {word}");
        }
        let schema = Value::Object((*t.input_schema).clone());
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(required, ["box_id", "action"]);
    }

    #[test]
    fn descriptions_are_short_and_say_their_coordinates() {
        for t in all() {
            let d = t.description.as_deref().unwrap();
            assert!(d.len() <= 1600, "{}: {} characters", t.name, d.len());
            assert!(!d.contains("  "), "{}: no double spaces", t.name);
        }
        for n in ["screenshot", "desktop", "cursor"] {
            let d = find(n).unwrap().description.unwrap();
            assert!(d.contains("screenshot pixels") || d.contains("image pixels"), "{n}: {d}");
        }
        // A page screenshot's pixels are not what desktop takes, and it says so.
        let d = find("page_screenshot").unwrap().description.unwrap();
        assert!(d.contains("not the screen's"), "{d}");
    }
}
