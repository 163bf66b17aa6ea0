//! Commands run to the end, and background processes with their output.

use super::*;

// ---------------------------------------------------------------------------
// Commands

/// What to run: `argv` without a shell, or `command` under `bash -c`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandRequest {
    /// The program and its arguments, run without a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// A command line, run with `bash -c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The working directory (default: the home directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Text written to standard input, which is then closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Kill the command after this many milliseconds (default 60000, at most
    /// 86400000). A timeout is a result with `timed_out`, not an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Keep at most this many bytes of each of stdout and stderr (default
    /// 1048576); the rest is dropped and `truncated` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_limit: Option<u64>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// `POST /v1/commands/run`: how a command ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandResult {
    /// The exit code; `null` when a signal ended the command.
    pub exit_code: Option<i32>,
    /// The signal that ended the command, such as `SIGKILL`.
    #[serde(default)]
    pub signal: Option<String>,
    /// Standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// The command ran past its timeout and was killed.
    pub timed_out: bool,
    /// Output past `output_limit` was dropped.
    pub truncated: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// One line of `POST /v1/commands/stream` (NDJSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CommandEvent {
    /// The command started.
    Start {
        /// Its process id.
        pid: u32,
    },
    /// Some standard output.
    Stdout {
        /// The text.
        data: String,
    },
    /// Some standard error.
    Stderr {
        /// The text.
        data: String,
    },
    /// The command ended; always the last event.
    Exit {
        /// The exit code; `null` when a signal ended it.
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default)]
        signal: Option<String>,
        /// It ran past its timeout and was killed.
        timed_out: bool,
        /// Output past `output_limit` was dropped (only when the request
        /// gave one: a stream keeps everything by default).
        #[serde(default)]
        truncated: bool,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// The stream failed; always the last event.
    Error {
        /// What went wrong.
        error: crate::error::ApiError,
    },
}

// ---------------------------------------------------------------------------
// Background processes

/// `POST /v1/processes`: start a process in the background.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessStart {
    /// The program and its arguments, run without a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// A command line, run with `bash -c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The working directory (default: the home directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A name of your own to find the process by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// The query of `GET /v1/processes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessListQuery {
    /// Only the processes started with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only the processes in this state.
    #[serde(default)]
    pub state: Option<ProcessState>,
}

/// Whether a background process still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessState {
    /// It runs.
    Running,
    /// It ended.
    Exited,
}

/// A background process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessInfo {
    /// The guest's id for it, such as `p_3`.
    pub id: String,
    /// The process id.
    pub pid: u32,
    /// The tag given at start.
    pub tag: Option<String>,
    /// What runs, as a command line for people.
    pub command: String,
    /// Whether it still runs.
    pub state: ProcessState,
    /// The exit code, once it ended with one.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// When it started, in RFC 3339.
    pub started_at: String,
    /// The cursor after its newest output event.
    pub next_cursor: u64,
}

/// The query of `GET /v1/processes/{id}/output`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputQuery {
    /// Answer events after this cursor (default 0: from the start).
    #[serde(default)]
    pub cursor: Option<u64>,
    /// Stream events as NDJSON until the process ends.
    #[serde(default)]
    pub follow: Option<bool>,
    /// Without `follow`: wait up to this many milliseconds for a first event.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// One output event of a background process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputEvent {
    /// Pass this back as `cursor` to read what follows this event.
    pub cursor: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: OutputKind,
}

/// What an output event carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputKind {
    /// Standard output.
    Stdout {
        /// The text.
        data: String,
    },
    /// Standard error.
    Stderr {
        /// The text.
        data: String,
    },
    /// Older events were dropped to bound memory; this many are gone.
    Gap {
        /// How many events were dropped.
        missed: u64,
    },
    /// The process ended; the last event.
    Exit {
        /// The exit code.
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default)]
        signal: Option<String>,
    },
}

/// `GET /v1/processes/{id}/output` without `follow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputPage {
    /// The events after the cursor.
    pub data: Vec<OutputEvent>,
    /// Pass back as `cursor` to continue.
    pub next_cursor: u64,
    /// The process ended and every event has been read.
    pub done: bool,
}

/// The query of `POST /v1/processes/{id}/stdin`, whose body is the raw bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StdinQuery {
    /// Close standard input after writing.
    #[serde(default)]
    pub eof: Option<bool>,
}

/// `POST /v1/processes/{id}/signal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SignalRequest {
    /// `SIGTERM`, `TERM`, `KILL`, `INT`, `HUP`, `USR1`, ... or a number.
    pub signal: SignalName,
}

/// A signal by name or number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SignalName {
    /// By name, with or without `SIG`.
    Name(String),
    /// By number.
    Number(i32),
}
