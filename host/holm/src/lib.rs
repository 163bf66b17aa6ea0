//! The holm library: boxes — Linux desktops for AI agents — on runtimes.
//!
//! - [`Computer::builder()`] launches a box and drives it with no server.
//! - [`runtime`] is the runtime contract and the Docker runtime.
//! - [`image`] builds the box image from the bundled Dockerfile and the guest.
//! - [`launch`] and [`spec`] are the steps holmd and `Computer` share.

pub mod computer;
pub mod ids;
pub mod image;
pub mod launch;
pub mod runtime;
pub mod spec;

pub use computer::{Computer, ComputerBuilder};
pub use holm_client::{BoxClient, ClientError, Screenshot};
pub use holm_proto as proto;

/// What the library's calls can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request was wrong; each issue names a field.
    #[error("invalid request: {}", .0.iter().map(|i| format!("{}: {}", i.path, i.problem)).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<holm_proto::Issue>),
    /// No runtime has this name.
    #[error("unknown runtime {name:?}; known: {}", known.join(", "))]
    UnknownRuntime {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: Vec<String>,
    },
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] runtime::RuntimeError),
    /// Launching failed.
    #[error(transparent)]
    Launch(#[from] launch::LaunchError),
    /// Talking to the box failed.
    #[error(transparent)]
    Client(#[from] holm_client::ClientError),
}
