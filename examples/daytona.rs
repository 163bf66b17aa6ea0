//! A box on Daytona, driven from Rust with no server.
//!
//! ```sh
//! DAYTONA_API_KEY=dtn_... cargo run --example daytona    # add --keep to leave it running
//! ```
//!
//! `DAYTONA_API_URL` and `DAYTONA_TARGET` choose another Daytona or region
//! (the tests point the URL at holm's stand-in). The first run builds the
//! box's Daytona snapshot from the bundled Dockerfile, which takes minutes;
//! later runs find it by its name.

use std::sync::Arc;

use holm::Computer;
use holm::runtime::daytona::Daytona;
use holm::runtime::remote::Remote;
use holm_examples::{Args, LIFETIME, run};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse()?;
    let daytona = Daytona::from_env().map_err(anyhow::Error::msg)?;
    let runtime = Arc::new(Remote::new("daytona", daytona));
    let computer = Computer::builder().machine(runtime).lifetime(LIFETIME).launch().await?;
    run(computer, "daytona", args).await
}
