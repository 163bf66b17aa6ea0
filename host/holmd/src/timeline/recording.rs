//! Where each step falls in a recording of its screen: seconds from the
//! recording's start to the step, for a recording that ran at the step's
//! time. A step names its screen (input, a screenshot) or, when it has none
//! (a command, a page tool), falls on whichever recording ran then (the
//! one started last).

use std::time::SystemTime;

use holm_proto::timeline::{RecordingOffset, Step};

/// One recording as the box lists it: its screen, when it started and,
/// once it stopped, when it ended (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The screen.
    pub screen: u8,
    /// When it started, RFC 3339.
    pub started_at: String,
    /// When it ended, RFC 3339; `None` while it runs.
    pub ended_at: Option<String>,
}

fn time(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(s).ok()
}

/// Sets each step's `recording` from `recordings`.
pub fn apply(steps: &mut [Step], recordings: &[Recorded]) {
    let spans: Vec<(u8, SystemTime, Option<SystemTime>)> = recordings
        .iter()
        .filter_map(|r| {
            Some((r.screen, time(&r.started_at)?, r.ended_at.as_deref().and_then(time)))
        })
        .collect();
    for step in steps {
        let Some(at) = time(&step.at) else { continue };
        let screen = step.action.params.get("screen").and_then(serde_json::Value::as_u64);
        step.recording = spans
            .iter()
            .filter(|(s, start, end)| {
                screen.is_none_or(|n| u64::from(*s) == n)
                    && *start <= at
                    && end.is_none_or(|e| at <= e)
            })
            // The latest started before the step; then the lowest screen.
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(s, start, _)| RecordingOffset {
                screen: *s,
                seconds: at.duration_since(*start).unwrap_or_default().as_secs_f64(),
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holm_proto::timeline::{StepAction, StepKind};
    use serde_json::json;

    fn step(at: &str, screen: Option<u8>) -> Step {
        let mut params = serde_json::Map::new();
        if let Some(s) = screen {
            params.insert("screen".into(), json!(s));
        }
        Step {
            id: "1".into(),
            at: at.into(),
            action: StepAction { kind: StepKind::Input, name: "click".into(), params },
            method: "POST".into(),
            path: String::new(),
            status: 200,
            code: None,
            duration_ms: 1,
            request_id: String::new(),
            screenshot: None,
            recording: None,
        }
    }

    #[test]
    fn a_step_gets_seconds_into_the_recording_of_its_screen() {
        let rec = |screen, started: &str, ended: Option<&str>| Recorded {
            screen,
            started_at: started.into(),
            ended_at: ended.map(Into::into),
        };
        let recordings = [
            rec(0, "2026-12-02T10:00:00.000Z", Some("2026-12-02T10:01:00.000Z")),
            rec(1, "2026-12-02T10:00:30.000Z", None),
        ];
        let mut steps = [
            step("2026-12-02T09:59:59.000Z", Some(0)),
            step("2026-12-02T10:00:10.500Z", Some(0)),
            step("2026-12-02T10:00:40.000Z", Some(1)),
            step("2026-12-02T10:00:40.000Z", None),
            step("2026-12-02T10:02:00.000Z", Some(0)),
        ];
        apply(&mut steps, &recordings);
        let got: Vec<Option<(u8, f64)>> =
            steps.iter().map(|s| s.recording.as_ref().map(|r| (r.screen, r.seconds))).collect();
        assert_eq!(got, [None, Some((0, 10.5)), Some((1, 10.0)), Some((1, 10.0)), None]);
    }
}
