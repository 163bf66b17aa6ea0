//! What a route is on a box's timeline, as its record says ([`Step`]):
//! the step's kind and name and where its parameters come from. holmd's
//! timeline is handed the record of each request and classifies by this
//! fact, reading only the request's body and query; a route without a
//! step (a read) stays in the traces only.

use crate::timeline::StepKind;

/// Where a step's parameters come from. Each route's path parameters but
/// the box's `{id}` are added after them (`screen` as a number), and, for
/// a route whose body is raw bytes ([`super::Body::Bytes`]), the body's
/// size as it streamed (`bytes`) last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    /// None of its own: only the path parameters.
    Path,
    /// The JSON body's fields, redacted.
    Body,
    /// Input actions' fields, redacted; the step is named after its one
    /// action's type (`click`, `type`, ...), or `actions` for several.
    Input,
    /// A command's: its argv or command line and working directory, the
    /// names of its environment's variables, the size of its standard
    /// input.
    Command,
    /// The query's parameters, a credential's value replaced.
    Query,
    /// Only the size of the JSON body (`bytes`): a browser state.
    BodySize,
    /// Only the length of the body's `text` (`chars`): the clipboard.
    TextChars,
}

/// A route's step on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Its kind.
    pub kind: StepKind,
    /// Its name (for input, the default when the body names no action).
    pub name: &'static str,
    /// Where its parameters come from.
    pub params: Params,
}

impl Step {
    /// A step of `kind` named `name`, its parameters from `params`.
    pub const fn new(kind: StepKind, name: &'static str, params: Params) -> Self {
        Self { kind, name, params }
    }
}
