//! The timeline of a box: every action through the server (input,
//! commands, page tools, file writes, who held control, lifecycle), each
//! with its time, its request id and the screenshot taken after it, as
//! `GET /v1/boxes/{id}/timeline` answers it and its export writes it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of action a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Mouse and keyboard on a screen.
    Input,
    /// A command run, streamed, or a background process started or
    /// signalled.
    Command,
    /// A page tool: navigate, click or type by selector, evaluate, tabs,
    /// browser state.
    Page,
    /// A file written, a directory made, a path removed or renamed.
    File,
    /// A window moved, focused or closed, or the clipboard set.
    Window,
    /// A screenshot of a screen or of a page, taken on its own.
    Screenshot,
    /// Who holds control: a person took or handed back a screen, a viewer
    /// URL was made or revoked, help was asked for.
    Control,
    /// The box itself: stop, start, pause, resume, fork, extend, remove.
    Lifecycle,
}

wire_names!(StepKind {
    Input => "input",
    Command => "command",
    Page => "page",
    File => "file",
    Window => "window",
    Screenshot => "screenshot",
    Control => "control",
    Lifecycle => "lifecycle",
});

/// What a request did, as its trace keeps it: never a secret, a token, a
/// file's content or a large body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepAction {
    /// Its kind.
    pub kind: StepKind,
    /// What it was, in a word or two: `click`, `type`, `run`, `write`,
    /// `navigate`, `taken`, `stop`, ...
    pub name: String,
    /// Its parameters, redacted: a command's environment keeps its names
    /// only, standard input and file contents their size only, long text
    /// is cut.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

/// An image the server kept with the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shot {
    /// Its id: the trace id of the request that answered it.
    pub id: String,
    /// `image/png`, `image/jpeg` or `image/webp`.
    pub media_type: String,
    /// Its size in bytes.
    pub bytes: u64,
}

impl Shot {
    /// The file name it has in an export: its id and its format's
    /// extension, such as `00001764671000000001.png`.
    pub fn file_name(&self) -> String {
        let ext = match self.media_type.as_str() {
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            _ => "png",
        };
        format!("{}.{ext}", self.id)
    }
}

/// One step of a box's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// Sorts in the order of the requests; pass the last as `cursor`.
    pub id: String,
    /// When the request came, in RFC 3339 with milliseconds.
    pub at: String,
    /// What it did.
    pub action: StepAction,
    /// The request: its method and path (without the query).
    pub method: String,
    /// The path, without its query.
    pub path: String,
    /// The status answered.
    pub status: u16,
    /// The error code, when the server refused or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Milliseconds until the answer's head.
    pub duration_ms: u64,
    /// The request id (empty for a change of control, which the box saw).
    pub request_id: String,
    /// The screenshot after it: the image its own answer carried, or the
    /// next screenshot taken before any other action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<StepScreenshot>,
    /// Where the step falls in a recording of its screen, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<RecordingOffset>,
}

/// The screenshot after a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepScreenshot {
    /// The image's id; `GET /v1/boxes/{id}/timeline/screenshots/{shot}`
    /// answers it while it is kept.
    pub id: String,
    /// When it was asked for, in RFC 3339 with milliseconds.
    pub at: String,
    /// The request that took it.
    pub request_id: String,
    /// `image/png`, `image/jpeg` or `image/webp`.
    pub media_type: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its file in an export (`screenshots/` + this).
    pub file: String,
    /// Whether the server still keeps it (the oldest are dropped past the
    /// server's bounds).
    pub kept: bool,
}

/// Where a step falls in a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordingOffset {
    /// The recorded screen.
    pub screen: u8,
    /// Seconds from the recording's start to the step.
    pub seconds: f64,
}

/// The query of `GET /v1/boxes/{id}/timeline`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineQuery {
    /// Where the previous page ended.
    #[serde(default)]
    pub cursor: Option<String>,
    /// 1 to 1000 (default 100).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// How a timeline is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// One self-contained HTML page, screenshots inline.
    Html,
    /// One JSON line per step, each naming its screenshot's file.
    Jsonl,
}

/// The query of `GET /v1/boxes/{id}/timeline/export`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExportQuery {
    /// `html` or `jsonl`.
    pub format: ExportFormat,
}

/// One line of the JSONL export: a step as a dataset keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DatasetLine {
    /// 0, 1, 2, ... in order.
    pub index: usize,
    /// When, in RFC 3339 with milliseconds.
    pub at: String,
    /// Seconds since the first step.
    pub t: f64,
    /// What it did.
    pub action: StepAction,
    /// The status answered.
    pub status: u16,
    /// The request id.
    pub request_id: String,
    /// The screenshot after it, as a path relative to the JSONL file
    /// (`screenshots/<id>.png`), when one was taken and is kept.
    #[serde(default)]
    pub screenshot: Option<String>,
    /// Where the step falls in a recording of its screen, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<RecordingOffset>,
}
