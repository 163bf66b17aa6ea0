//! The local Docker engine as a runtime with a twist.
//!
//! A test that needs boxes a little unlike the real ones (reached through a
//! proxy, or with a browser that waits for a signal) wraps Docker in
//! [`Twisted`] with a [`Twist`]: every call goes to Docker, and the twist
//! may change the image a box runs and the machine Docker answers. Nothing
//! in holmd knows of it.

use async_trait::async_trait;
use holm::image::{ImageRequest, Progress};
use holm::runtime::docker::DockerRuntime;
use holm::runtime::{ImageSource, Machine, MachineSpec, Result as RtResult, Runtime};
use holm_proto::host::{Can, Environment, Place};

/// What a [`Twisted`] runtime changes in Docker's answers.
#[async_trait]
pub trait Twist: Send + Sync + std::fmt::Debug + 'static {
    /// The runtime's name (its boxes' runtime label).
    fn name(&self) -> &'static str;
    /// The image a box runs, given the one Docker prepared.
    async fn image(&self, prepared: String) -> RtResult<String> {
        Ok(prepared)
    }
    /// A machine of this runtime, as holmd is to see it.
    async fn machine(&self, m: Machine) -> RtResult<Machine> {
        Ok(m)
    }
}

/// Docker, with `T`'s twist.
#[derive(Debug)]
pub struct Twisted<T> {
    docker: DockerRuntime,
    /// The twist.
    pub twist: T,
}

impl<T: Twist> Twisted<T> {
    /// The local engine with `twist`.
    pub fn with(twist: T) -> Self {
        Self { docker: DockerRuntime::connect(twist.name()).expect("docker"), twist }
    }
}

#[async_trait]
impl<T: Twist> Runtime for Twisted<T> {
    fn name(&self) -> &str {
        self.twist.name()
    }
    fn provider(&self) -> &str {
        "docker"
    }
    fn place(&self) -> Place {
        Place::Host
    }
    fn environment(&self) -> Environment {
        self.docker.environment()
    }
    fn can(&self) -> Can {
        self.docker.can()
    }
    async fn ping(&self) -> RtResult<()> {
        self.docker.ping().await
    }
    fn image_source(&self) -> ImageSource {
        self.docker.image_source()
    }
    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> RtResult<String> {
        let prepared = self.docker.prepare_image(request, progress).await?;
        self.twist.image(prepared).await
    }
    async fn create(&self, spec: &MachineSpec) -> RtResult<Machine> {
        let m = self.docker.create(spec).await?;
        self.twist.machine(m).await
    }
    async fn inspect(&self, id: &str) -> RtResult<Machine> {
        let m = self.docker.inspect(id).await?;
        self.twist.machine(m).await
    }
    async fn remove(&self, id: &str) -> RtResult<()> {
        self.docker.remove(id).await
    }
    async fn list(&self) -> RtResult<Vec<Machine>> {
        let mut out = Vec::new();
        for m in self.docker.list().await? {
            // Only this runtime's boxes have the twist.
            let ours = m.labels.get(holm::runtime::LABEL_RUNTIME).map(String::as_str);
            out.push(if ours == Some(self.name()) { self.twist.machine(m).await? } else { m });
        }
        Ok(out)
    }
    async fn start(&self, id: &str) -> RtResult<Machine> {
        let m = self.docker.start(id).await?;
        self.twist.machine(m).await
    }
    async fn stop(&self, id: &str) -> RtResult<()> {
        self.docker.stop(id).await
    }
    async fn prune_images(
        &self,
        policy: &holm::image::Prune,
    ) -> RtResult<Vec<holm::image::Pruned>> {
        self.docker.prune_images(policy).await
    }
}

/// The file whose appearance in a [`HeldBrowser`] box lets its Chromium start.
pub const RELEASE_BROWSER: &str = "/tmp/holm-release-browser";

/// Boxes whose Chromium does not start until the test writes
/// [`RELEASE_BROWSER`] into the box: the moment between the desktop being up
/// and Chromium being up lasts as long as the test wants, so what happens
/// in it is seen every time, not when a race is won. The box image is the
/// real one with a wrapper in front of Chromium (`HOLM_CHROMIUM_BIN`), not
/// listed among holm's images.
#[derive(Debug, Default)]
pub struct HeldBrowser;

#[async_trait]
impl Twist for HeldBrowser {
    fn name(&self) -> &'static str {
        "held"
    }

    async fn image(&self, prepared: String) -> RtResult<String> {
        let tag = prepared.rsplit(':').next().unwrap_or("latest");
        let image = format!("holm-held-browser:{tag}");
        let dockerfile = format!(
            "FROM {prepared}\n\
             RUN printf '#!/bin/sh\\nwhile [ ! -e {RELEASE_BROWSER} ]; do sleep 0.05; done\\nexec /usr/bin/chromium \"$@\"\\n' \
             > /usr/local/bin/held-chromium && chmod 755 /usr/local/bin/held-chromium\n\
             ENV HOLM_CHROMIUM_BIN=/usr/local/bin/held-chromium\n\
             LABEL holm.image=0\n"
        );
        let mut build = tokio::process::Command::new("docker")
            .args(["build", "-q", "-t", &image, "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| holm::runtime::RuntimeError::Engine(format!("docker build: {e}")))?;
        let mut stdin = build.stdin.take().expect("piped stdin");
        tokio::io::AsyncWriteExt::write_all(&mut stdin, dockerfile.as_bytes())
            .await
            .map_err(|e| holm::runtime::RuntimeError::Engine(format!("docker build: {e}")))?;
        drop(stdin);
        let out = build
            .wait_with_output()
            .await
            .map_err(|e| holm::runtime::RuntimeError::Engine(format!("docker build: {e}")))?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(holm::runtime::RuntimeError::Engine(format!(
                "docker build {image}: {why}"
            )));
        }
        Ok(image)
    }
}
