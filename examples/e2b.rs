//! A box on E2B, driven from Rust with no server.
//!
//! ```sh
//! E2B_API_KEY=e2b_... cargo run --example e2b            # add --keep to leave it running
//! ```
//!
//! `E2B_API_URL` and `E2B_SANDBOX_URL` point it at another E2B (the tests
//! point them at holm's stand-in). The first run builds the box's E2B
//! template from the bundled Dockerfile, which takes minutes; later runs
//! find it by its name and start in seconds.

use std::sync::Arc;

use holm::Computer;
use holm::runtime::e2b::E2b;
use holm::runtime::remote::Remote;
use holm_examples::{Args, LIFETIME, run};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse()?;
    let e2b = E2b::from_env().map_err(anyhow::Error::msg)?;
    let runtime = Arc::new(Remote::new("e2b", e2b));
    let computer = Computer::builder().machine(runtime).lifetime(LIFETIME).launch().await?;
    run(computer, "e2b", args).await
}
