//! The tool that runs commands: `exec`. Its output is cut to what a model
//! can read, and its wait to what an MCP client waits for.

use std::collections::BTreeMap;

use holm_proto::guest::CommandRequest;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{self, invalid};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `exec` keeps this many bytes of each output stream: enough for a model,
/// small enough for its context.
const EXEC_OUTPUT_LIMIT: u64 = 100_000;
/// Under the 60 s a typical MCP client waits for any answer.
const EXEC_TIMEOUT_SECS: u64 = 50;
const MAX_EXEC_TIMEOUT_SECS: u64 = 3600;
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

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&Exec];

/// `exec`.
#[derive(Debug)]
pub(crate) struct Exec;

impl Tool for Exec {
    const NAME: &'static str = "exec";
    const DESCRIPTION: &'static str = "Run a command in a box and wait for it: argv (no shell) or \
        command (run with bash -c). Answers exit_code (null when a signal ended it; then signal), \
        stdout and stderr (the first 100000 bytes of each; truncated says more was dropped), \
        timed_out and duration_ms. A non-zero exit code is a result, not a tool error. Commands \
        start in a clean environment with DISPLAY set to screen 0, so a GUI program shows on the \
        desktop; start long-running GUI programs in the background (command ending in &).";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Run a command",
        effect: Effect::Destructive { idempotent: false },
        open_world: true,
    };
    type Args = ExecArgs;

    async fn call(mcp: &HolmMcp, a: ExecArgs, _: Option<&Reporter>) -> Answer {
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
            sensitive: a.sensitive,
        };
        let result = mcp.client.boxed(&a.box_id).run(&request).await.map_err(from_client)?;
        let summary = match (result.exit_code, &result.signal, result.timed_out) {
            (_, _, true) => format!("timed out after {timeout} s and was killed"),
            (Some(code), _, _) => format!("exited with code {code}"),
            (None, Some(sig), _) => format!("ended by {sig}"),
            (None, None, _) => "ended".to_owned(),
        };
        Ok(json_result(Some(summary), to_value(&result)))
    }
}
