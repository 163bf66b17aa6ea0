//! A box on Modal, driven from Rust with no server.
//!
//! ```sh
//! MODAL_TOKEN_ID=ak-... MODAL_TOKEN_SECRET=as-... cargo run --features modal --example modal
//! ```
//!
//! Add `-- --keep` to leave the box running. `MODAL_SERVER_URL` points it at
//! another Modal API (the tests point it at holm's stand-in) and
//! `MODAL_ENVIRONMENT` chooses the environment. The first run waits for
//! Modal to build the image from the bundled Dockerfile's lines, about a
//! minute; later runs get the image Modal kept for the same lines.

use std::sync::Arc;

use holm::Computer;
use holm::runtime::modal::Modal;
use holm::runtime::remote::Remote;
use holm_examples::{Args, LIFETIME, run};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse()?;
    let modal = Modal::from_env().map_err(anyhow::Error::msg)?;
    let runtime = Arc::new(Remote::new("modal", modal));
    let computer = Computer::builder().machine(runtime).lifetime(LIFETIME).launch().await?;
    run(computer, "modal", args).await
}
