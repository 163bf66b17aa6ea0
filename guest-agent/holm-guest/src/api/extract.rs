//! Strict extractors; shared with holmd through `holm-http`.

pub use holm_http::extract::*;
