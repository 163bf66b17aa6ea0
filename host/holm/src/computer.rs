//! [`Computer`]: a box driven from Rust with no server.
//!
//! ```no_run
//! # async fn demo() -> Result<(), holm::Error> {
//! let computer = holm::Computer::builder().runtime("docker").launch().await?;
//! let shot = computer.screenshot(0, &Default::default()).await?;
//! computer.click(0, 640, 400).await?;
//! computer.type_text(0, "hello\n").await?;
//! let out = computer.exec(&["uname", "-a"]).await?;
//! println!("{} bytes, {}", shot.bytes.len(), out.stdout);
//! computer.remove().await?;
//! # Ok(()) }
//! ```
//!
//! A `Computer` dereferences to [`holm_client::BoxClient`], so it has the same
//! desktop, command, process, file and page-tool methods as a box through
//! holmd. [`Computer::bridge`] tells how to connect Playwright or Puppeteer to
//! its Chromium.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::guest::Profile;
use holm_proto::host::{BoxSpec, BridgeAccess, Placement, Ready};

use crate::launch::{self, Launched};
use crate::runtime::{Endpoint, Runtime};
use crate::spec;
use crate::{Error, ids};

/// A running box.
pub struct Computer {
    runtime: Arc<dyn Runtime>,
    id: String,
    launched: Launched,
    client: BoxClient,
    bridge_secret: holm_proto::Secret,
}

impl std::fmt::Debug for Computer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Computer")
            .field("id", &self.id)
            .field("launched", &self.launched)
            .field("bridge_secret", &self.bridge_secret)
            .finish_non_exhaustive()
    }
}

impl Computer {
    /// Starts describing a box.
    pub fn builder() -> ComputerBuilder {
        ComputerBuilder::default()
    }

    /// The box's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The runtime's id of the machine (a container id on Docker).
    pub fn machine_id(&self) -> &str {
        &self.launched.machine.id
    }

    /// The guest's URL, for debugging with the secret (and the endpoint's
    /// headers, on a runtime whose proxy needs them: see [`Computer::guest`]).
    pub fn guest_url(&self) -> &str {
        self.launched.guest.url()
    }

    /// How the guest is reached, as the runtime answered.
    pub fn guest(&self) -> &Endpoint {
        &self.launched.guest
    }

    /// The box secret, for calling the guest directly. Do not log it.
    pub fn secret(&self) -> &str {
        self.launched.secret.expose()
    }

    /// The image the box runs.
    pub fn image(&self) -> &str {
        &self.launched.image
    }

    /// How to reach the box's Chromium from this host: the bridge's address,
    /// the header with its secret, and a ticket URL that opens one connection
    /// within `ttl_secs` (default 60) for clients that cannot send headers.
    pub async fn bridge(&self, ttl_secs: Option<u32>) -> Result<BridgeAccess, Error> {
        let bridge = self.launched.bridge.as_ref().ok_or_else(|| {
            Error::Client(holm_client::ClientError::Api(holm_proto::ApiError::new(
                holm_proto::ErrorCode::Unsupported,
                "the runtime answered no endpoint for the box's bridge port",
            )))
        })?;
        Ok(holm_client::bridge_access(&self.client, bridge, self.bridge_secret.expose(), ttl_secs)
            .await?)
    }

    /// Removes the box. A `Computer` that is dropped keeps running.
    pub async fn remove(self) -> Result<(), Error> {
        self.runtime.remove(&self.launched.machine.id).await?;
        Ok(())
    }
}

impl Deref for Computer {
    type Target = BoxClient;

    fn deref(&self) -> &BoxClient {
        &self.client
    }
}

/// Describes a box to launch.
#[derive(Debug, Clone)]
pub struct ComputerBuilder {
    runtime: String,
    /// A runtime given whole, which wins over `runtime`.
    machine: Option<Arc<dyn Runtime>>,
    spec: BoxSpec,
    placement: Placement,
    ready_timeout: Duration,
}

impl Default for ComputerBuilder {
    fn default() -> Self {
        Self {
            runtime: "docker".into(),
            machine: None,
            spec: BoxSpec::default(),
            placement: Placement::default(),
            ready_timeout: Duration::from_secs(120),
        }
    }
}

impl ComputerBuilder {
    /// The container engine: `docker` (the default) or `podman`.
    #[must_use]
    pub fn runtime(mut self, name: &str) -> Self {
        name.clone_into(&mut self.runtime);
        self
    }

    /// Launches on this runtime: any implementation of the runtime contract,
    /// such as a microVM's or a cloud vendor's adapter, or a Docker runtime
    /// on another context. Wins over [`ComputerBuilder::runtime`].
    #[must_use]
    pub fn machine(mut self, runtime: Arc<dyn Runtime>) -> Self {
        self.machine = Some(runtime);
        self
    }

    /// How many screens, 1 to 6.
    #[must_use]
    pub fn screens(mut self, n: u8) -> Self {
        self.spec.screens = Some(n);
        self
    }

    /// The size of every screen.
    #[must_use]
    pub fn screen_size(mut self, width: u32, height: u32) -> Self {
        self.spec.screen_size = Some(format!("{width}x{height}"));
        self
    }

    /// Adds an app from the catalogue.
    #[must_use]
    pub fn app(mut self, name: &str) -> Self {
        self.spec.apps.push(name.to_owned());
        self
    }

    /// Adds a Debian package.
    #[must_use]
    pub fn package(mut self, name: &str) -> Self {
        self.spec.packages.push(name.to_owned());
        self
    }

    /// Runs Chromium or not (default: runs it).
    #[must_use]
    pub fn browser(mut self, on: bool) -> Self {
        self.spec.browser = Some(on);
        self
    }

    /// The display server (default X11). A runtime that cannot run it
    /// refuses before any box starts.
    #[must_use]
    pub fn display(mut self, profile: Profile) -> Self {
        self.spec.display = Some(profile);
        self
    }

    /// A Wayland desktop (headless sway): `display(Profile::Wayland)`.
    #[must_use]
    pub fn wayland(self) -> Self {
        self.display(Profile::Wayland)
    }

    /// Keeps Chromium's user data in the named browser profile, which later
    /// boxes with the same profile reuse (container runtimes).
    #[must_use]
    pub fn profile(mut self, name: &str) -> Self {
        self.spec.profile = Some(name.to_owned());
        self
    }

    /// Memory, such as `4g`.
    #[must_use]
    pub fn memory(mut self, size: &str) -> Self {
        self.placement.memory = Some(size.to_owned());
        self
    }

    /// CPUs, such as `2.0`.
    #[must_use]
    pub fn cpus(mut self, cpus: f64) -> Self {
        self.placement.cpus = Some(cpus);
        self
    }

    /// How long the box lives (default one hour). On a runtime that ends
    /// machines itself (a cloud vendor), the vendor ends it then, whether
    /// or not this program still runs.
    #[must_use]
    pub fn lifetime(mut self, lifetime: Duration) -> Self {
        self.placement.expires_after_secs = Some(lifetime.as_secs());
        self
    }

    /// When the box counts as launched: [`Ready::Browser`] (the default)
    /// once Chromium answers too; [`Ready::Desktop`] once the desktop does,
    /// for an agent that starts with the screen, commands or files (page
    /// tools answer `not_ready` until Chromium is up).
    #[must_use]
    pub fn ready(mut self, when: Ready) -> Self {
        self.spec.ready = Some(when);
        self
    }

    /// How long to wait for the desktop (default two minutes; the first box
    /// with a new image also waits for its build).
    #[must_use]
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// Launches the box and waits until its desktop answers.
    pub async fn launch(self) -> Result<Computer, Error> {
        let runtime: Arc<dyn Runtime> = match (self.machine, self.runtime.as_str()) {
            (Some(runtime), _) => runtime,
            (None, name) => match crate::runtime::container_engine(name) {
                Some(engine) => Arc::new(engine?),
                None => {
                    return Err(Error::UnknownRuntime {
                        name: name.to_owned(),
                        known: crate::runtime::container_engines()
                            .into_iter()
                            .map(str::to_owned)
                            .collect(),
                    });
                }
            },
        };
        let resolved =
            spec::resolve(&self.spec, &self.placement, &runtime.can(), runtime.lifetimes().offered)
                .map_err(Error::Invalid)?;
        let id = ids::new_box_id();
        let secret = ids::new_secret();
        let spec_label = serde_json::to_string(&self.spec).unwrap_or_default();
        let mut progress =
            |p: crate::image::Progress| tracing::info!(target: "holm::image", "{p:?}");
        let launched =
            launch::launch(&*runtime, &id, &resolved, &spec_label, &secret, &mut progress).await?;
        let client = BoxClient::at(&launched.guest, &secret);
        let ready = self.spec.ready.unwrap_or_default();
        if let Err(e) = launch::wait_ready_for(&client, self.ready_timeout, ready).await {
            let _ = runtime.remove(&launched.machine.id).await;
            return Err(e.into());
        }
        // The bridge has its own secret, never the box secret.
        let bridge_secret = ids::new_secret();
        if let Err(e) = client.set_bridge_secret(&bridge_secret).await {
            let _ = runtime.remove(&launched.machine.id).await;
            return Err(e.into());
        }
        let bridge_secret = bridge_secret.into();
        Ok(Computer { runtime, id, launched, client, bridge_secret })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_desktop_is_part_of_the_spec_the_box_is_made_and_labelled_with() {
        assert_eq!(Computer::builder().spec.ready, None);
        let b = Computer::builder().ready(Ready::Desktop);
        assert_eq!(b.spec.ready, Some(Ready::Desktop));
        let label = serde_json::to_value(&b.spec).unwrap();
        assert_eq!(label["ready"], "desktop");
    }
}
