//! The guest's error type; shared with holmd through `holm-http`.

pub use holm_http::error::*;
