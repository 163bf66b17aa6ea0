//! The typed `details` of the errors whose next step names something a
//! frontend calls in its own terms (a route, a command, a tool).
//!
//! Such an error carries one of [`ErrorDetails`] as its `details`, tagged by
//! `details.kind`. Whoever made it (holmd's service, the guest) says what
//! happened and to what; it does not word the hint. Each frontend words the
//! next step ([`ErrorDetails::next`]) its own way: REST names routes
//! (`holm_http`, the `hint` on the wire), the CLI its commands, MCP its
//! tools. A client that does not know a kind (an older one, or a newer
//! server's kind) keeps the `hint` as REST wrote it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ApiError;
use crate::host::{BoxState, Can};

/// The `details` of an error a frontend words the next step of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorDetails {
    /// No box has this id (`not_found`).
    NoSuchBox {
        /// The id asked for.
        box_id: String,
    },
    /// The box is still coming up (`not_ready`).
    BoxStarting {
        /// The box.
        box_id: String,
    },
    /// The box is not running: stopped, paused, failed or removed
    /// (`not_running`); its reason, when it has one, is the hint.
    BoxNotRunning {
        /// The box.
        box_id: String,
        /// Its state.
        state: BoxState,
    },
    /// The box's state does not allow the change asked for (`conflict`).
    BoxRefused {
        /// The box.
        box_id: String,
        /// Its state.
        state: BoxState,
        /// The change asked for.
        request: BoxRequest,
    },
    /// The box has no machine yet (`conflict`).
    NoMachine {
        /// The box.
        box_id: String,
    },
    /// A part of the box (its agent, bridge or viewers) did not answer
    /// (`guest_unreachable`).
    GuestUnreachable {
        /// The box.
        box_id: String,
    },
    /// The box runs no browser (`not_ready`).
    NoBrowser,
    /// A screen's display server is starting or restarting (`not_ready`).
    ScreenStarting {
        /// The screen.
        screen: u8,
        /// How many of the request's actions ran before it stopped answering.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        performed: Option<usize>,
    },
    /// Chromium is starting or restarting (`not_ready`).
    BrowserStarting {
        /// When to try again, in milliseconds.
        retry_after_ms: u64,
    },
    /// No tab has this id (`not_found`).
    NoSuchTab {
        /// The id asked for.
        tab: String,
        /// The tabs there are, when they were listed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tabs: Option<Vec<String>>,
    },
    /// The box's runtime cannot do this (`unsupported`).
    RuntimeCannot {
        /// The runtime.
        runtime: String,
        /// What it can do.
        can: Can,
    },
    /// No runtime has this name (`unknown_runtime`); the hint names them.
    UnknownRuntime {
        /// The name asked for.
        runtime: String,
        /// The runtimes there are.
        known: Vec<String>,
    },
    /// No remote runtime has this name (`not_found`).
    NoSuchRemoteRuntime {
        /// The name asked for.
        runtime: String,
    },
    /// A runtime has this name already (`already_exists`).
    RuntimeExists {
        /// The name.
        runtime: String,
    },
}

/// A change to a box that its state may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoxRequest {
    /// Stop it, keeping its files.
    Stop,
    /// Start it again.
    Start,
    /// Pause it, keeping its memory.
    Pause,
    /// Resume it where it was.
    Resume,
    /// Copy it into a new box.
    Fork,
    /// Move its deadline later.
    Extend,
}

wire_names!(BoxRequest {
    Stop => "stop",
    Start => "start",
    Pause => "pause",
    Resume => "resume",
    Fork => "fork",
    Extend => "extend",
});

/// What to do next, before any frontend words it. Not `non_exhaustive`: a
/// new step fails to build every frontend until it words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep<'a> {
    /// List the boxes.
    ListBoxes,
    /// Look at the box: its state says why.
    ShowBox {
        /// The box.
        box_id: &'a str,
    },
    /// The box may be stopping: look at its state.
    CheckBox {
        /// The box.
        box_id: &'a str,
    },
    /// Wait until the box runs.
    WaitUntilRunning {
        /// The box.
        box_id: &'a str,
    },
    /// Resume the box first.
    ResumeFirst {
        /// The box.
        box_id: &'a str,
    },
    /// Make a new box.
    CreateBox,
    /// Ask for a box: a matching create takes one waiting in a warm pool.
    ClaimByCreate,
    /// Make a box with the browser on.
    CreateBoxWithBrowser,
    /// Try again in a moment: it is starting or restarting.
    RetrySoon,
    /// List the tabs.
    ListTabs,
    /// See what the runtime can do.
    ShowRuntime {
        /// The runtime.
        runtime: &'a str,
    },
    /// Add a remote runtime, or list them.
    AddRuntime,
    /// Change the runtime that has this name.
    ChangeRuntime {
        /// The runtime.
        runtime: &'a str,
    },
}

impl ErrorDetails {
    /// The details of `e`, when they are one of these kinds.
    pub fn of(e: &ApiError) -> Option<Self> {
        let details = e.details.as_ref()?;
        details.get("kind")?;
        serde_json::from_value(details.clone()).ok()
    }

    /// The next step, when there is one to name.
    pub fn next(&self) -> Option<NextStep<'_>> {
        use BoxRequest as R;
        use BoxState as S;
        Some(match self {
            Self::NoSuchBox { .. } => NextStep::ListBoxes,
            Self::BoxStarting { box_id } | Self::NoMachine { box_id } => {
                NextStep::WaitUntilRunning { box_id }
            }
            Self::GuestUnreachable { box_id } => NextStep::CheckBox { box_id },
            Self::BoxRefused { state: S::Pooled, .. } => NextStep::ClaimByCreate,
            Self::BoxRefused { box_id, request, state } => match (request, state) {
                (R::Stop, S::Paused) => NextStep::ResumeFirst { box_id },
                (R::Fork, _) => NextStep::WaitUntilRunning { box_id },
                (R::Extend, _) => NextStep::CreateBox,
                _ => NextStep::ShowBox { box_id },
            },
            Self::NoBrowser => NextStep::CreateBoxWithBrowser,
            Self::BrowserStarting { .. } | Self::ScreenStarting { .. } => NextStep::RetrySoon,
            Self::NoSuchTab { .. } => NextStep::ListTabs,
            Self::RuntimeCannot { runtime, .. } => NextStep::ShowRuntime { runtime },
            Self::NoSuchRemoteRuntime { .. } => NextStep::AddRuntime,
            Self::RuntimeExists { runtime } => NextStep::ChangeRuntime { runtime },
            Self::BoxNotRunning { .. } | Self::UnknownRuntime { .. } => return None,
        })
    }
}

impl ApiError {
    /// Adds typed details.
    #[must_use]
    pub fn with_kind(self, details: ErrorDetails) -> Self {
        // A derived `Serialize` of plain fields does not fail.
        self.with_details(serde_json::to_value(details).unwrap_or_default())
    }

    /// Puts `hint` in place of the hint the error came with, when the
    /// error's details are a kind whose next step `word` names.
    #[must_use]
    pub fn worded_by(mut self, word: impl Fn(NextStep<'_>) -> Option<String>) -> Self {
        let kind = ErrorDetails::of(&self);
        if let Some(hint) = kind.as_ref().and_then(ErrorDetails::next).and_then(word) {
            self.hint = Some(hint);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn details_keep_their_fields_and_add_the_kind() {
        let e = ApiError::new(ErrorCode::NotFound, "x")
            .with_kind(ErrorDetails::NoSuchBox { box_id: "box_x".into() });
        assert_eq!(e.details, Some(serde_json::json!({"kind": "no_such_box", "box_id": "box_x"})));
        assert_eq!(ErrorDetails::of(&e), Some(ErrorDetails::NoSuchBox { box_id: "box_x".into() }));
    }

    #[test]
    fn untyped_or_unknown_details_are_no_kind() {
        let issues = ApiError::invalid_fields(vec![]);
        assert_eq!(ErrorDetails::of(&issues), None);
        let newer = ApiError::new(ErrorCode::NotFound, "x")
            .with_details(serde_json::json!({"kind": "a_later_kind"}));
        assert_eq!(ErrorDetails::of(&newer), None);
        let kept = newer.with_hint("as REST said").worded_by(|_| Some("other".into()));
        assert_eq!(kept.hint.as_deref(), Some("as REST said"));
    }

    #[test]
    fn a_refusal_names_the_step_its_request_and_state_need() {
        let refused =
            |request, state| ErrorDetails::BoxRefused { box_id: "box_x".into(), state, request };
        let id = "box_x";
        for (request, state, step) in [
            (BoxRequest::Stop, BoxState::Paused, NextStep::ResumeFirst { box_id: id }),
            (BoxRequest::Start, BoxState::Paused, NextStep::ShowBox { box_id: id }),
            (BoxRequest::Fork, BoxState::Creating, NextStep::WaitUntilRunning { box_id: id }),
            (BoxRequest::Extend, BoxState::Failed, NextStep::CreateBox),
            (BoxRequest::Stop, BoxState::Pooled, NextStep::ClaimByCreate),
        ] {
            assert_eq!(refused(request, state).next(), Some(step), "{request} in {state}");
        }
    }
}
