//! The terminal: a real pty in the box over a WebSocket.
//!
//! `GET /v1/terminal` (the guest) or `GET /v1/boxes/{id}/terminal` (holmd)
//! with `Upgrade: websocket` and the query [`TerminalQuery`] opens one.
//! Binary frames are the terminal's bytes both ways, as they are (UTF-8 or
//! not). Text frames are JSON: the client sends [`TerminalInput`]; the
//! server sends [`TerminalEvent`]s, first `ready`, last `exit`. A refusal
//! before the upgrade (a bad query, a missing program) is an HTTP answer in
//! the one error shape; a bad text frame afterwards is an `error` event, and
//! the terminal goes on unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The terminal's size when the query gives none.
pub const DEFAULT_COLS: u16 = 80;
/// The terminal's size when the query gives none.
pub const DEFAULT_ROWS: u16 = 24;
/// The largest width or height a terminal may have.
pub const MAX_SIZE: u16 = 1000;
/// `TERM` when the query gives none.
pub const DEFAULT_TERM: &str = "xterm-256color";

/// The query that opens a terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalQuery {
    /// Columns, 1 to 1000 (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// Rows, 1 to 1000 (default 24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// A command line, run with `bash -c` (default: a login shell, `bash -l`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The working directory (default: the home directory; a relative one is
    /// taken from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `TERM` for the programs in it (default `xterm-256color`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<String>,
}

/// A text frame from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TerminalInput {
    /// The window changed size: the programs in it get `SIGWINCH`.
    Resize {
        /// Columns, 1 to 1000.
        cols: u16,
        /// Rows, 1 to 1000.
        rows: u16,
    },
}

/// A text frame from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalEvent {
    /// The terminal runs; always the first frame.
    Ready {
        /// The process id of its program in the box (its session leader).
        pid: u32,
        /// Its size.
        cols: u16,
        /// Its size.
        rows: u16,
    },
    /// A text frame was refused; nothing changed and the terminal goes on.
    Error {
        /// What was wrong.
        error: crate::error::ApiError,
    },
    /// The program ended, after its last output; always the last frame.
    Exit {
        /// Its exit code; `null` when a signal ended it.
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
}

/// Checks a terminal size: each problem is named by its field.
pub fn check_size(cols: u16, rows: u16) -> Vec<crate::Issue> {
    let mut issues = Vec::new();
    for (field, v) in [("cols", cols), ("rows", rows)] {
        if v == 0 || v > MAX_SIZE {
            issues.push(crate::Issue {
                path: field.to_owned(),
                problem: format!("must be 1 to {MAX_SIZE}, not {v}"),
            });
        }
    }
    issues
}

/// Joins a program and its arguments into one command line for `command`
/// (run with `bash -c`), quoting each word a shell would split or expand,
/// so the program gets exactly these arguments.
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%".contains(&b));
            if plain { a.clone() } else { format!("'{}'", a.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_as_the_docs_write_them() {
        let r: TerminalInput =
            serde_json::from_str(r#"{"type":"resize","cols":120,"rows":40}"#).unwrap();
        assert_eq!(r, TerminalInput::Resize { cols: 120, rows: 40 });
        assert!(serde_json::from_str::<TerminalInput>(r#"{"type":"resize","cols":1}"#).is_err());
        assert!(
            serde_json::from_str::<TerminalInput>(r#"{"type":"resize","cols":1,"rows":1,"x":1}"#)
                .is_err()
        );
        let ready = serde_json::to_string(&TerminalEvent::Ready { pid: 7, cols: 80, rows: 24 });
        assert_eq!(ready.unwrap(), r#"{"type":"ready","pid":7,"cols":80,"rows":24}"#);
        let exit = TerminalEvent::Exit { exit_code: Some(3), signal: None };
        assert_eq!(serde_json::to_string(&exit).unwrap(), r#"{"type":"exit","exit_code":3}"#);
        assert!(check_size(80, 24).is_empty());
        let words =
            |w: &[&str]| command_line(&w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            words(&["vi", "/tmp/a b", "it's", "$HOME", ""]),
            r"vi '/tmp/a b' 'it'\''s' '$HOME' ''"
        );
        let issues = check_size(0, 1001);
        assert_eq!(issues.iter().map(|i| i.path.as_str()).collect::<Vec<_>>(), ["cols", "rows"]);
    }
}
