//! The arguments of each tool.
//!
//! Each type is both the tool's input schema (through `schemars`; the doc
//! comments are what a model reads) and its parser. Arguments are parsed
//! strictly with [`holm_proto::strict`]: an unknown field is refused, and one
//! answer names every wrong field, as REST does.

use std::collections::BTreeMap;

use holm_proto::guest::Action;
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

/// Checks a box id as holm makes them (`box_` and up to 32 lowercase letters
/// and digits), so a wrong one is refused with a useful answer before any call,
/// and nothing else can reach a URL path.
pub fn check_box_id(id: &str) -> Result<(), ApiError> {
    let ok = id.strip_prefix("box_").is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 32
            && rest.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    if ok {
        return Ok(());
    }
    Err(ApiError::invalid_fields(vec![Issue {
        path: "box_id".into(),
        problem: format!(
            "{id:?} is not a box id, such as \"box_7hq3k2m9x4ab\"; list_boxes lists them"
        ),
    }]))
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
