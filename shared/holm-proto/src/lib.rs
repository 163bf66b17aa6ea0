//! The wire types of holm, and nothing else: the guest API ([`guest`]), the
//! server API ([`host`]), the one error shape ([`error`]), the key-name table
//! ([`keys`]), and strict parsing that names every unknown field ([`strict`]).
//!
//! This crate does no IO and depends on no async runtime, so both the guest
//! and every host crate can use it.

#![warn(missing_docs)]

pub mod error;
pub mod guest;
pub mod host;
pub mod keys;
pub mod strict;

pub use error::{ApiError, ErrorBody, ErrorCode, Issue};
