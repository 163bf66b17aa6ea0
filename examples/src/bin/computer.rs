//! `Computer::builder()` with no server: the library starts a box on the
//! local Docker engine itself, drives it, and removes it.
//!
//! ```sh
//! cargo run -p holm-examples --bin computer -- shot.png
//! ```

use anyhow::Context;
use holm::Computer;
use holm_proto::guest::ScreenshotOptions;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "shot.png".to_owned());
    let computer = Computer::builder().runtime("docker").browser(false).launch().await?;
    println!("box {}", computer.id());
    let outcome = async {
        let shot = computer.screenshot(0, &ScreenshotOptions::default()).await?;
        std::fs::write(&out, &shot.bytes).with_context(|| format!("write {out}"))?;
        println!("screenshot {}x{} in {out}", shot.meta.width, shot.meta.height);
        computer.type_text(0, "hello").await?;
        let r = computer.exec(&["uname", "-sr"]).await?;
        print!("uname: {}", r.stdout);
        anyhow::Ok(())
    }
    .await;
    computer.remove().await?;
    outcome
}
