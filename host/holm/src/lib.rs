//! holm (to come).

pub mod image;
