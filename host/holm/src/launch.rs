//! Launching a box on a runtime: prepare its image, create its machine with
//! the guest as entrypoint, and wait until its desktop answers. holmd and
//! [`crate::Computer`] both launch through here.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use holm_client::BoxClient;
use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT, Health, HealthStatus, Profile};
use holm_proto::host::Ready;
use holm_proto::viewer::{VIEWER_PORT, ViewerBind};

use crate::image::{ImageRequest, Progress};
use crate::runtime::{
    Endpoint, LABEL_CREATED, LABEL_RUNTIME, LABEL_SPEC, Machine, MachineSpec, PROFILE_DIR, Runtime,
    RuntimeError,
};
use crate::spec::Resolved;

/// A launched box: its machine, and how to reach its guest.
#[derive(Debug, Clone)]
pub struct Launched {
    /// The machine, as the runtime reports it.
    pub machine: Machine,
    /// The image it runs.
    pub image: String,
    /// How the guest's API is reached, as the runtime answered.
    pub guest: Endpoint,
    /// How the Chromium bridge is reached, when the runtime answered it.
    pub bridge: Option<Endpoint>,
    /// How the viewers are reached, when the runtime answered it.
    pub viewer: Option<Endpoint>,
    /// The box secret; `Debug` hides it.
    pub secret: holm_proto::Secret,
}

/// What launching can fail with.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The machine runs but its runtime answered no endpoint for the guest.
    #[error("the runtime answered no endpoint for the box's guest port {0}")]
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
        (crate::runtime::ENV_SECRET_SHA256.into(), crate::ids::secret_digest(secret)),
        ("HOLM_PROFILE".into(), spec.display.to_string()),
        ("HOLM_SCREENS".into(), spec.screens.to_string()),
        ("HOLM_SCREEN_SIZES".into(), format!("{}x{}", spec.size.0, spec.size.1)),
        ("HOLM_CHROMIUM".into(), if spec.browser { "on" } else { "off" }.into()),
        ("HOLM_GUEST_ADDR".into(), format!("0.0.0.0:{DEFAULT_GUEST_PORT}")),
        ("HOLM_BRIDGE_ADDR".into(), format!("0.0.0.0:{BRIDGE_PORT}")),
        ("HOLM_VIEWER_ADDR".into(), format!("0.0.0.0:{VIEWER_PORT}")),
    ];
    if spec.profile.is_some() {
        env.push(("HOLM_CHROMIUM_PROFILE".into(), PROFILE_DIR.into()));
    }
    if spec.record {
        env.push(("HOLM_RECORD".into(), "on".into()));
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
    /// When the box ends, for a runtime that ends machines itself (default:
    /// the box's lifetime from now).
    pub deadline: Option<std::time::SystemTime>,
    /// When the box's lifetime ends, ignoring its idle timeout (default:
    /// the box's lifetime from now).
    pub expires_at: Option<std::time::SystemTime>,
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
            let request = ImageRequest {
                apps: spec.apps.clone(),
                packages: spec.packages.clone(),
                display: spec.display,
            };
            runtime.prepare_image_for(&request, spec, progress).await?
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
        ports: vec![DEFAULT_GUEST_PORT, BRIDGE_PORT, VIEWER_PORT],
        public_ports: if spec.viewer_bind == ViewerBind::Any {
            vec![VIEWER_PORT]
        } else {
            Vec::new()
        },
        memory_bytes: spec.memory_bytes,
        nano_cpus: spec.nano_cpus,
        pids_limit: spec.pids_limit,
        profile: spec.profile.clone(),
        deadline: Some(extra.deadline.unwrap_or_else(|| {
            let secs =
                spec.idle_timeout_secs.map_or(spec.lifetime_secs, |i| i.min(spec.lifetime_secs));
            std::time::SystemTime::now() + std::time::Duration::from_secs(secs)
        })),
        idle_timeout_secs: spec.idle_timeout_secs,
        expires_at: Some(extra.expires_at.unwrap_or_else(|| {
            std::time::SystemTime::now() + std::time::Duration::from_secs(spec.lifetime_secs)
        })),
    };
    debug_assert!(spec.display == Profile::X11 || runtime.can().wayland);
    let machine = runtime.create(&machine_spec).await?;
    let Some(guest) = machine.guest().cloned() else {
        let _ = runtime.remove(&machine.id).await;
        return Err(LaunchError::NoGuestPort(DEFAULT_GUEST_PORT));
    };
    let bridge = machine.bridge().cloned();
    let viewer = machine.viewer().cloned();
    Ok(Launched { machine, image, guest, bridge, viewer, secret: secret.into() })
}

/// How long one readiness probe may take before it is given up and asked
/// again.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a new machine's guest may take to give its first answer (any
/// health at all, ready or not). The guest answers within a second or two
/// of its machine starting, and in under 20 s under gVisor's ptrace
/// platform on a loaded machine of two cores; a machine whose guest has
/// not answered by then has hung in its own start (seen once in CI: a
/// gVisor sandbox whose guest never answered in ten minutes), and holmd
/// restarts it once rather than wait the rest of its readiness deadline.
pub const FIRST_ANSWER_TIMEOUT: Duration = Duration::from_secs(90);

/// Waits until the guest answers `/health` at all (whatever it says), or
/// `timeout` passes; answers the last error when it never did.
pub async fn wait_answer(guest: &BoxClient, timeout: Duration) -> Result<(), String> {
    probe_until(guest, timeout, &|_| true, &mut |_| {}).await.map(drop)
}

/// Waits until every component of the box's desktop is ready.
pub async fn wait_ready(guest: &BoxClient, timeout: Duration) -> Result<Health, LaunchError> {
    wait_ready_for(guest, timeout, Ready::Browser).await
}

/// Waits until the guest is usable as `ready` asks: with
/// [`Ready::Desktop`], once every component but Chromium is up.
pub async fn wait_ready_for(
    guest: &BoxClient,
    timeout: Duration,
    ready: Ready,
) -> Result<Health, LaunchError> {
    wait_ready_with(guest, timeout, ready, &mut |_| {}).await
}

/// [`wait_ready_for`], showing `seen` each health the guest answers on the
/// way (to report which components are still starting).
pub async fn wait_ready_with(
    guest: &BoxClient,
    timeout: Duration,
    ready: Ready,
    seen: &mut (dyn FnMut(&Health) + Send),
) -> Result<Health, LaunchError> {
    let usable = |h: &Health| match ready {
        Ready::Browser => h.status == HealthStatus::Ready,
        Ready::Desktop => {
            h.components.iter().filter(|c| c.name != "chromium").all(|c| c.state.settled())
        }
    };
    probe_until(guest, timeout, &usable, seen)
        .await
        .map_err(|detail| LaunchError::NotReady { secs: timeout.as_secs(), detail })
}

/// Asks the guest's health until an answer is `enough`, showing `seen`
/// each answer; when `timeout` passes first, answers the last error or the
/// components still starting.
async fn probe_until(
    guest: &BoxClient,
    timeout: Duration,
    enough: &(dyn Fn(&Health) -> bool + Sync),
    seen: &mut (dyn FnMut(&Health) + Send),
) -> Result<Health, String> {
    let deadline = Instant::now() + timeout;
    let mut interval = Duration::from_millis(5);
    loop {
        // One probe that hangs (a port whose forwarder accepted and then
        // never answered) must not hold the whole wait: it is asked again.
        let left = deadline.saturating_duration_since(Instant::now());
        let health = match tokio::time::timeout(PROBE_TIMEOUT.min(left), guest.health()).await {
            Ok(answer) => answer.map_err(|e| e.to_string()),
            Err(_) => Err("the guest took its connection and did not answer /health".to_owned()),
        };
        if let Ok(h) = &health {
            seen(h);
        }
        let last = match health {
            Ok(h) if enough(&h) => return Ok(h),
            Ok(h) => h
                .components
                .iter()
                .map(|c| format!("{}[{}]={:?}", c.name, c.screen, c.state))
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => e,
        };
        if Instant::now() >= deadline {
            return Err(last);
        }
        tokio::time::sleep(interval).await;
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forwarder that takes the connection and never answers (as a
    /// published port can while its box starts) gives a clear `NotReady`
    /// when the wait ends, not a wait that never ends.
    #[tokio::test]
    async fn a_guest_that_never_answers_ends_the_wait_with_not_ready() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut kept = Vec::new();
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                kept.push(socket);
            }
        });
        let guest = BoxClient::guest(&url, "secret");
        let wait = wait_ready(&guest, Duration::from_secs(1));
        let outcome = tokio::time::timeout(Duration::from_secs(60), wait).await;
        held.abort();
        match outcome.expect("the wait ended") {
            Err(LaunchError::NotReady { detail, .. }) => {
                assert!(detail.contains("did not answer /health"), "{detail}");
            }
            other => panic!("expected NotReady, got {other:?}"),
        }
    }
}
