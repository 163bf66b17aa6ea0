//! Typed async clients of holm.
//!
//! - [`Client`] talks to `holmd`: runtimes, boxes, images.
//! - [`BoxClient`] drives one box: screens, input, commands, processes,
//!   files, a terminal ([`Terminal`]), and the page tools and browser state
//!   of its Chromium. The same client works through holmd (`Client::boxed`) and straight
//!   against a box's guest ([`BoxClient::guest`]), because holmd forwards its
//!   box routes to the guest path for path.

pub mod address;

mod accessibility;
mod agent;
mod boxes;
mod browser;
mod desk;
mod endpoint;
mod error;
mod recordings;
mod route;
mod server;
mod terminal;
mod timeline;
mod viewers;

pub use agent::agent_access;
pub use boxes::{BoxClient, Screenshot};
pub use browser::{PageScreenshot, bridge_access};
pub use endpoint::{Endpoint, EndpointError, WebSockets};
pub use error::{ClientError, Result};
pub use holm_proto as proto;
pub use server::Client;
pub use terminal::{Terminal, TerminalOutput, TerminalReader, TerminalWriter};

use std::sync::Once;

/// What every HTTP client in holm calls itself (`User-Agent`): vendors see
/// holm's calls as holm's, and the contract traces tell them from the
/// vendors' SDKs' calls by it.
pub const USER_AGENT: &str = concat!("holm/", env!("CARGO_PKG_VERSION"));

/// A `reqwest` client builder with TLS ready (the `ring` provider) and
/// holm's [`USER_AGENT`], for every HTTP client in holm.
pub fn client_builder() -> reqwest::ClientBuilder {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        // Another part of the process may have chosen a provider already.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder().user_agent(USER_AGENT)
}

/// Builds the HTTP client every holm client uses.
pub(crate) fn http() -> reqwest::Client {
    http_for(address::Addresses::Any)
}

/// Builds the HTTP client every holm client uses, connecting only to
/// `addresses` ([`address::client_builder`]).
pub(crate) fn http_for(addresses: address::Addresses) -> reqwest::Client {
    address::client_builder(addresses)
        .pool_idle_timeout(std::time::Duration::from_secs(60))
        .tcp_nodelay(true)
        .build()
        .expect("a TLS provider is installed")
}
