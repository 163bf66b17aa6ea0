//! Modal's gRPC API as holm speaks it: a subset of the `modal_proto` files
//! Modal publishes in its Python package (`modal` 1.6.4 on PyPI, the version
//! the stand-in's conformance test pins), with the same packages, messages,
//! field numbers and services. `proto/` holds the subset, rendered from the
//! file descriptors the package ships by `regen/emit.py`; `src/generated`
//! is tonic's and prost's code for it, checked in (regenerate with
//! `cargo build -p holm-modal-proto --features regen`, which needs protoc).
//!
//! Modal says its gRPC API is not public and can change without notice:
//! holm's runtime uses these types only inside `holm::runtime::modal::api`,
//! and the stand-in in `holm-standins` serves the same services.

#![allow(missing_docs, missing_debug_implementations, clippy::all, clippy::pedantic)]

/// Modal's packages.
pub mod modal {
    /// `modal.client`: the `ModalClient` service and its messages.
    pub mod client {
        include!("generated/modal.client.rs");
    }
    /// `modal.task_command_router`: a sandbox's command router.
    pub mod task_command_router {
        include!("generated/modal.task_command_router.rs");
    }
}

pub use modal::client as api;
pub use modal::task_command_router as router;

/// The `modal` Python package whose `modal_proto` the subset is taken from.
pub const MODAL_VERSION: &str = "1.6.4";

/// The subset's file descriptors (a `FileDescriptorSet`, with the files it
/// imports), written beside the generated code by the same regeneration:
/// what names a message's fields for a reader that has only its bytes (the
/// stand-in's contract trace). With the `descriptor` feature.
#[cfg(feature = "descriptor")]
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("generated/modal.fds");
