//! The exec-driven way: each action a `docker exec` of a classic tool in the
//! box, as E2B Desktop and Anthropic's computer-use image do it: X tools on
//! X11, and `grim`, `wtype` and `swaymsg` on Wayland.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// One box's container, driven with `docker exec`.
#[derive(Debug, Clone)]
pub struct Exec {
    container: String,
    /// `NAME=VALUE` for each `-e`: how the tools find screen 0.
    env: Vec<String>,
}

/// The Wayland box's runtime directory (the guest's `HOLM_WAYLAND_DIR`
/// default for display base 1, as in every box).
pub const WAYLAND_DIR: &str = "/tmp/holm-wayland-1";

impl Exec {
    /// Box `id`'s container, screen 0 of an X11 box (`DISPLAY=:1`).
    pub fn new(box_id: &str) -> Self {
        Self {
            container: holm::runtime::docker::container_name(box_id),
            env: vec!["DISPLAY=:1".into()],
        }
    }

    /// Box `id`'s container, a Wayland box: the compositor's socket and
    /// sway's IPC, and a UTF-8 locale (wtype refuses text without one).
    pub fn wayland(box_id: &str) -> Self {
        Self {
            container: holm::runtime::docker::container_name(box_id),
            env: vec![
                format!("XDG_RUNTIME_DIR={WAYLAND_DIR}"),
                "WAYLAND_DISPLAY=wayland-1".into(),
                format!("SWAYSOCK={WAYLAND_DIR}/sway-ipc.sock"),
                "LANG=C.UTF-8".into(),
            ],
        }
    }

    /// Runs `argv` in the box with the display's variables set; answers how
    /// long the whole `docker exec` took and what it printed. Fails when it
    /// fails.
    pub async fn run(&self, argv: &[&str]) -> anyhow::Result<(Duration, Vec<u8>)> {
        let t = Instant::now();
        let mut cmd = tokio::process::Command::new("docker");
        cmd.arg("exec");
        for e in &self.env {
            cmd.args(["-e", e]);
        }
        let out = cmd
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
