//! A box on Runtime Cloud, driven from Rust with no server.
//!
//! ```sh
//! RUNTIME_API_KEY=... cargo run --example runtime-cloud    # add --keep to leave it running
//! ```
//!
//! `RUNTIME_API_URL` points it at another API origin (the tests point it at
//! holm's stand-in). The first run builds the box's Runtime Cloud image
//! from the bundled Dockerfile, which takes minutes; later runs find it by
//! its name. The sandbox's lease is renewed while this program runs, up to
//! the box's lifetime; without it, Runtime Cloud stops the sandbox when its
//! lease ends.

use std::sync::Arc;

use holm::Computer;
use holm::runtime::remote::Remote;
use holm::runtime::runtime_cloud::RuntimeCloud;
use holm_examples::{Args, LIFETIME, run};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse()?;
    let cloud = RuntimeCloud::from_env().map_err(anyhow::Error::msg)?;
    let runtime = Arc::new(Remote::new("runtime-cloud", cloud));
    let computer = Computer::builder().machine(runtime).lifetime(LIFETIME).launch().await?;
    run(computer, "runtime-cloud", args).await
}
