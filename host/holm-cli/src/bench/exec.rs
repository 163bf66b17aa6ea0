//! The exec-driven way: each action a `docker exec` of a classic X tool in
//! the box, as E2B Desktop and Anthropic's computer-use image do it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// One box's container, driven with `docker exec`.
#[derive(Debug, Clone)]
pub struct Exec {
    container: String,
    display: String,
}

impl Exec {
    /// Box `id`'s container, screen 0.
    pub fn new(box_id: &str) -> Self {
        Self { container: holm::runtime::docker::container_name(box_id), display: ":1".into() }
    }

    /// Runs `argv` in the box with `DISPLAY` set; answers how long the
    /// whole `docker exec` took and what it printed. Fails when it fails.
    pub async fn run(&self, argv: &[&str]) -> anyhow::Result<(Duration, Vec<u8>)> {
        let t = Instant::now();
        let out = tokio::process::Command::new("docker")
            .args(["exec", "-e"])
            .arg(format!("DISPLAY={}", self.display))
            .arg(&self.container)
            .args(argv)
            .stdin(Stdio::null())
            .output()
            .await
            .context("run docker (the exec baselines need the docker CLI)")?;
        let d = t.elapsed();
        if !out.status.success() {
            bail!(
                "docker exec {} {argv:?} failed ({}): {}",
                self.container,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok((d, out.stdout))
    }

    /// Runs a screenshot command and checks that it printed an image.
    pub async fn screenshot(&self, argv: &[&str]) -> anyhow::Result<Duration> {
        let (d, bytes) = self.run(argv).await?;
        if bytes.len() < 1000 {
            bail!("{argv:?} printed {} bytes, not an image", bytes.len());
        }
        Ok(d)
    }
}
