//! A box on Vercel Sandbox, driven from Rust with no server.
//!
//! ```sh
//! VERCEL_TOKEN=... VERCEL_TEAM_ID=team_... VERCEL_PROJECT_ID=prj_... \
//!   cargo run --example vercel    # add --keep to leave it running
//! ```
//!
//! `VERCEL_API_URL` and `VERCEL_REGISTRY_URL` point it at another API and
//! registry (the tests point them at holm's stand-in). The first run builds
//! the box image on the local Docker engine and pushes it to Vercel
//! Container Registry, which takes minutes; later runs find its tag there.
//! Vercel ends the sandbox at the box's lifetime, with or without this
//! program.

use std::sync::Arc;

use holm::Computer;
use holm::runtime::remote::Remote;
use holm::runtime::vercel::Vercel;
use holm_examples::{Args, LIFETIME, run};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse()?;
    let vercel = Vercel::from_env().map_err(anyhow::Error::msg)?;
    let runtime = Arc::new(Remote::new("vercel", vercel));
    let computer = Computer::builder().machine(runtime).lifetime(LIFETIME).launch().await?;
    run(computer, "vercel", args).await
}
