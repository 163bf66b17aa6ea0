//! Progress on long work: the stages a box goes through while it is made or
//! started (`GET /v1/boxes/{id}/progress`, NDJSON), and the build steps of
//! an image.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::BoxInfo;

/// A stage of bringing a box up, in the order they come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Its image is prepared (built, or found), or a fork's files copied.
    Image,
    /// Its machine (a container) is made on the runtime.
    Container,
    /// Its desktop starts: display server, window manager, viewer.
    Desktop,
    /// Its browser starts.
    Browser,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: &[Self] = &[Self::Image, Self::Container, Self::Desktop, Self::Browser];

    /// The stage's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Container => "container",
            Self::Desktop => "desktop",
            Self::Browser => "browser",
        }
    }

    /// Its place in [`Stage::ALL`], from 0.
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of `GET /v1/boxes/{id}/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BoxEvent {
    /// A stage began.
    Stage {
        /// Which.
        stage: Stage,
        /// What happens in it, for people.
        message: String,
    },
    /// A line of the image's build.
    Build {
        /// The line.
        message: String,
        /// The build's step, when the line begins one (`Step 3/12 : ...`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u32>,
        /// How many steps the build has.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steps: Option<u32>,
    },
    /// The box as it is now; always the last event: running, failed, or
    /// still on its way when the wait ended.
    Box {
        /// The box.
        #[serde(rename = "box")]
        info: Box<BoxInfo>,
    },
}

impl BoxEvent {
    /// A build line, with its step when it begins one.
    pub fn build(message: String) -> Self {
        let (step, steps) = build_step(&message).map_or((None, None), |(a, b)| (Some(a), Some(b)));
        Self::Build { message, step, steps }
    }
}

/// The query of `GET /v1/boxes/{id}/progress`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProgressQuery {
    /// Follow at most this many seconds (default and at most 900); the last
    /// event is the box as it is then.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The step a build line begins, as `(step, steps)`: the engine's builder
/// writes `Step 3/12 : RUN ...`.
pub fn build_step(line: &str) -> Option<(u32, u32)> {
    let rest = line.trim_start().strip_prefix("Step ")?;
    let (frac, _) = rest.split_once(' ').unwrap_or((rest, ""));
    let (a, b) = frac.split_once('/')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (a >= 1 && a <= b).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_steps_are_read_from_the_builders_lines() {
        assert_eq!(build_step("Step 3/12 : RUN apt-get update"), Some((3, 12)));
        assert_eq!(build_step("Step 12/12 : COPY holm-guest /"), Some((12, 12)));
        assert_eq!(build_step(" ---> Running in 4f2"), None);
        assert_eq!(build_step("Step 13/12 : x"), None);
        assert_eq!(build_step("Stepping"), None);
        let e = BoxEvent::build("Step 2/9 : RUN x".into());
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"type": "build", "message": "Step 2/9 : RUN x", "step": 2, "steps": 9})
        );
        let s = BoxEvent::Stage { stage: Stage::Desktop, message: "m".into() };
        assert_eq!(serde_json::to_value(&s).unwrap()["stage"], "desktop");
        assert_eq!(Stage::Browser.index(), 3);
    }
}
