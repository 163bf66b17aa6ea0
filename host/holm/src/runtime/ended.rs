//! Why a box's guest ended, in the words a start fails with: the exit code
//! and the last lines the guest wrote ([`Runtime::guest_ended`]).
//!
//! [`Runtime::guest_ended`]: super::Runtime::guest_ended

use bollard::Docker;
use bollard::models::ContainerStateStatusEnum;
use bollard::query_parameters::{InspectContainerOptions, LogsOptions};
use futures_util::StreamExt as _;

/// How many of the guest's last log lines a reason carries.
const LINES: usize = 20;

/// The last lines of a log, on one line (`|` between lines), without
/// terminal colours.
pub fn log_tail(log: &[u8]) -> String {
    let text = strip_colours(&String::from_utf8_lossy(log));
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(LINES)..].join(" | ");
    if tail.is_empty() { "its log is empty".to_owned() } else { tail }
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
fn strip_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// On a container engine, where the guest is the container's first
/// process: why it ended (the container's exit code and log), once the
/// container no longer runs; `None` while it does, or when the engine
/// cannot say.
pub async fn in_container(docker: &Docker, id: &str) -> Option<String> {
    let c = docker.inspect_container(id, None::<InspectContainerOptions>).await.ok()?;
    let state = c.state?;
    if matches!(
        state.status,
        Some(
            ContainerStateStatusEnum::CREATED
                | ContainerStateStatusEnum::RUNNING
                | ContainerStateStatusEnum::RESTARTING
                | ContainerStateStatusEnum::PAUSED
        )
    ) {
        return None;
    }
    let options =
        LogsOptions { stdout: true, stderr: true, tail: LINES.to_string(), ..Default::default() };
    let mut log = Vec::new();
    let mut chunks = docker.logs(id, Some(options));
    while let Some(Ok(chunk)) = chunks.next().await {
        log.extend_from_slice(&chunk.into_bytes());
    }
    let code =
        state.exit_code.map_or_else(|| "no exit code".to_owned(), |c| format!("exit code {c}"));
    Some(format!("the guest ended ({code}): {}", log_tail(&log)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_last_lines_without_colours() {
        let log: String = (1..=25).map(|n| format!("\u{1b}[2mline\u{1b}[0m {n}\n")).collect();
        let tail = log_tail(log.as_bytes());
        assert!(tail.starts_with("line 6 | line 7"), "{tail}");
        assert!(tail.ends_with("line 25"), "{tail}");
        assert_eq!(log_tail(b"\n\n"), "its log is empty");
    }
}
