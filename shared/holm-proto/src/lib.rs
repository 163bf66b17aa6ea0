//! The wire types of holm, and nothing else: the API contract, every route
//! declared once ([`contract`]), the guest API ([`guest`]), the
//! credential that opens one box's guest from the host ([`agent`]), the
//! server API ([`host`]), the one error shape ([`error`]), the key-name table
//! ([`keys`]), box ids and secrets ([`ids`]), the terminal's frames ([`terminal`]), recordings ([`recording`]), progress on long work
//! ([`progress`]), strict parsing that names every unknown field
//! ([`strict`]), and the viewers' types ([`viewer`]).
//!
//! This crate does no IO and depends on no async runtime, so both the guest
//! and every host crate can use it.

#![warn(missing_docs)]

/// Gives a wire enum its wire name as `as_str` and `Display`, so users see
/// `running`, the word the API writes, never a Rust variant name.
macro_rules! wire_names {
    ($t:ident { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$v),+];

            /// The value as written on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$v => $s),+
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod accessibility;
pub mod agent;
pub mod contract;
pub mod desk;
pub mod docgen;
pub mod error;
pub mod guest;
pub mod host;
pub mod ids;
pub mod keys;
pub mod progress;
pub mod recording;
pub mod strict;
pub mod terminal;
pub mod timeline;
pub mod viewer;

pub use error::{ApiError, BoxRequest, ErrorBody, ErrorCode, ErrorDetails, Issue, NextStep};
pub use ids::{BoxId, NotABoxId, Secret};
