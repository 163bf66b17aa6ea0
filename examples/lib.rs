//! What holm's examples share: a short tour of a box, the same on every
//! runtime, and the command line every example takes.
//!
//! Each example is a file beside this one (`e2b.rs`, `daytona.rs`, …),
//! run with `cargo run --example NAME`.

use std::time::Duration;

use holm::Computer;
use holm::proto::guest::ScreenshotOptions;

/// What the tour saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tour {
    /// The screenshot's width and height.
    pub screen: (u32, u32),
    /// The box's kernel, from `uname -sr`.
    pub kernel: String,
    /// What a file written into the box read back as.
    pub file: String,
}

/// Takes a screenshot, runs a command, and writes and reads a file.
pub async fn tour(computer: &Computer) -> anyhow::Result<Tour> {
    let shot = computer.screenshot(0, &ScreenshotOptions::default()).await?;
    let out = computer.exec(&["uname", "-sr"]).await?;
    anyhow::ensure!(out.exit_code == Some(0), "uname failed: {}", out.stderr);
    computer.write_file("/tmp/holm-example.txt", b"hello from holm".to_vec(), None).await?;
    let back = computer.read_file("/tmp/holm-example.txt").await?;
    Ok(Tour {
        screen: (shot.meta.width, shot.meta.height),
        kernel: out.stdout.trim().to_owned(),
        file: String::from_utf8_lossy(&back).into_owned(),
    })
}

/// The command line of an example: `--keep` leaves the box running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Args {
    /// Leave the box running (the vendor still ends it at its lifetime).
    pub keep: bool,
}

impl Args {
    /// Reads the command line; an unknown argument is an error.
    pub fn parse() -> anyhow::Result<Self> {
        let mut args = Self::default();
        for a in std::env::args().skip(1) {
            match a.as_str() {
                "--keep" => args.keep = true,
                other => anyhow::bail!("unknown argument {other:?}; the example takes --keep"),
            }
        }
        Ok(args)
    }
}

/// How long an example's box lives unless it is removed first.
pub const LIFETIME: Duration = Duration::from_secs(15 * 60);

/// Runs the tour on a launched computer, prints it, and removes the box
/// unless `args.keep`.
pub async fn run(computer: Computer, runtime: &str, args: Args) -> anyhow::Result<()> {
    println!("box {} runs on {runtime} (machine {})", computer.id(), computer.machine_id());
    let tour = tour(&computer).await?;
    println!("screenshot: {}x{}", tour.screen.0, tour.screen.1);
    println!("kernel: {}", tour.kernel);
    println!("file: {}", tour.file);
    if args.keep {
        println!("kept: guest {} (the vendor ends it at its lifetime)", computer.guest_url());
    } else {
        computer.remove().await?;
        println!("removed");
    }
    Ok(())
}
