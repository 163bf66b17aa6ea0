//! Launching a box on a runtime: prepare its image, create its machine with
//! the guest as entrypoint, and wait until its desktop answers. holmd and
//! [`crate::Computer`] both launch through here.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use holm_client::BoxClient;
use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT, Health, HealthStatus, Profile};

use crate::image::{ImageRequest, Progress};
use crate::runtime::{
    LABEL_CREATED, LABEL_RUNTIME, LABEL_SPEC, Machine, MachineSpec, PROFILE_DIR, Runtime,
    RuntimeError,
};
use crate::spec::Resolved;

/// A launched box: its machine, and how to reach its guest.
#[derive(Clone)]
pub struct Launched {
    /// The machine, as the runtime reports it.
    pub machine: Machine,
    /// The image it runs.
    pub image: String,
    /// The guest's URL on the host's loopback.
    pub guest_url: String,
    /// The Chromium bridge's URL on the host's loopback, when published.
    pub bridge_url: Option<String>,
    /// The box secret. Never log it.
    pub secret: String,
}

impl std::fmt::Debug for Launched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launched")
            .field("machine", &self.machine)
            .field("image", &self.image)
            .field("guest_url", &self.guest_url)
            .field("bridge_url", &self.bridge_url)
            .field("secret", &"<hidden>")
            .finish()
    }
}

/// What launching can fail with.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The machine runs but its guest port was not published.
    #[error("the box's guest port {0} was not published")]
    NoGuestPort(u16),
    /// The desktop did not come up in time.
    #[error("the desktop did not become ready in {secs} seconds: {detail}")]
    NotReady {
        /// How long we waited.
        secs: u64,
        /// The last health seen.
        detail: String,
    },
}

/// The environment variables the guest reads, for a resolved spec.
pub fn guest_env(spec: &Resolved, secret: &str) -> Vec<(String, String)> {
    let mut env = vec![
        (crate::runtime::ENV_SECRET.into(), secret.to_owned()),
        ("HOLM_PROFILE".into(), spec.display.to_string()),
        ("HOLM_SCREENS".into(), spec.screens.to_string()),
        ("HOLM_SCREEN_SIZES".into(), format!("{}x{}", spec.size.0, spec.size.1)),
        ("HOLM_CHROMIUM".into(), if spec.browser { "on" } else { "off" }.into()),
        ("HOLM_GUEST_ADDR".into(), format!("0.0.0.0:{DEFAULT_GUEST_PORT}")),
        ("HOLM_BRIDGE_ADDR".into(), format!("0.0.0.0:{BRIDGE_PORT}")),
    ];
    if spec.profile.is_some() {
        env.push(("HOLM_CHROMIUM_PROFILE".into(), PROFILE_DIR.into()));
    }
    env
}

/// Prepares the image, creates the machine and returns once it runs. Does
/// not wait for the desktop: see [`wait_ready`].
pub async fn launch(
    runtime: &dyn Runtime,
    box_id: &str,
    spec: &Resolved,
    spec_label: &str,
    secret: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Launched, LaunchError> {
    launch_with(runtime, box_id, spec, spec_label, secret, &Extra::default(), progress).await
}

/// What a server adds to a launch.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// More labels (never secrets), such as the server's name and deadlines.
    pub labels: BTreeMap<String, String>,
    /// Run this image instead of preparing one, such as a fork's copy.
    pub image: Option<String>,
    /// The creation time for [`LABEL_CREATED`] (default: now).
    pub created: Option<std::time::SystemTime>,
}

/// [`launch`], with labels and an image of the caller's.
pub async fn launch_with(
    runtime: &dyn Runtime,
    box_id: &str,
    spec: &Resolved,
    spec_label: &str,
    secret: &str,
    extra: &Extra,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Launched, LaunchError> {
    let image = match &extra.image {
        Some(image) => image.clone(),
        None => {
            let request = ImageRequest { apps: spec.apps.clone(), packages: spec.packages.clone() };
            runtime.prepare_image(&request, progress).await?
        }
    };
    let created = extra.created.unwrap_or_else(std::time::SystemTime::now);
    let mut labels = extra.labels.clone();
    labels.extend([
        (LABEL_RUNTIME.to_owned(), runtime.name().to_owned()),
        (LABEL_SPEC.to_owned(), spec_label.to_owned()),
        (LABEL_CREATED.to_owned(), humantime::format_rfc3339_seconds(created).to_string()),
    ]);
    let machine_spec = MachineSpec {
        box_id: box_id.to_owned(),
        image: image.clone(),
        env: guest_env(spec, secret),
        labels,
        ports: vec![DEFAULT_GUEST_PORT, BRIDGE_PORT],
        memory_bytes: spec.memory_bytes,
        nano_cpus: spec.nano_cpus,
        profile: spec.profile.clone(),
    };
    debug_assert!(spec.display == Profile::X11 || runtime.can().wayland);
    let machine = runtime.create(&machine_spec).await?;
    let Some(addr) = machine.ports.get(&DEFAULT_GUEST_PORT) else {
        let _ = runtime.remove(&machine.id).await;
        return Err(LaunchError::NoGuestPort(DEFAULT_GUEST_PORT));
    };
    let guest_url = format!("http://{addr}");
    let bridge_url = machine.ports.get(&BRIDGE_PORT).map(|a| format!("http://{a}"));
    Ok(Launched { machine, image, guest_url, bridge_url, secret: secret.to_owned() })
}

/// Waits until every component of the box's desktop is ready.
pub async fn wait_ready(guest: &BoxClient, timeout: Duration) -> Result<Health, LaunchError> {
    let deadline = Instant::now() + timeout;
    let mut interval = Duration::from_millis(5);
    loop {
        let last = match guest.health().await {
            Ok(h) if h.status == HealthStatus::Ready => return Ok(h),
            Ok(h) => h
                .components
                .iter()
                .map(|c| format!("{}[{}]={:?}", c.name, c.screen, c.state))
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(LaunchError::NotReady { secs: timeout.as_secs(), detail: last });
        }
        tokio::time::sleep(interval).await;
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}
