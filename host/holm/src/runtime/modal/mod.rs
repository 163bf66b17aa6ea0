//! The Modal runtime: boxes as Modal sandboxes (gVisor containers), over
//! Modal's gRPC API ([`api`], the one module that names Modal's messages).
//!
//! - **The token pair**: the ID (`ak-...`) is the runtime's `token_id`
//!   field (`MODAL_TOKEN_ID`), the secret (`as-...`) its key
//!   (`MODAL_TOKEN_SECRET`); both go with every call as Modal's clients
//!   send them.
//! - **Images** are the bundled Dockerfile sent as lines
//!   (`ImageGetOrCreate`), waited for through `ImageJoinStreaming`; Modal
//!   keeps each image by its recipe, so a later box with the same lines
//!   gets the image that exists. The guest binary is the one file the
//!   Dockerfile copies: it goes in the build's context mount, as Modal's
//!   client sends a build context (`MountPutFile`, and through blob storage
//!   as every file of 4 MiB or more: the guest is 12 MB, which Modal does
//!   not take inline), and a `RUN chmod` after its `COPY` makes it
//!   executable. The builder version is the environment's
//!   (`EnvironmentGetOrCreate`), where Modal's client reads it.
//! - **Sandboxes** run the guest as their command (Modal does not run an
//!   image's `ENTRYPOINT`), with the guest's environment as an ephemeral
//!   Secret owned by the app (Modal keeps a V1 sandbox's environment only
//!   from Secrets, as its clients send it), holm's labels as tags (listed
//!   with `SandboxList` by the `holm.runtime` tag), 2 CPUs and 4 GB unless
//!   the box asks, and the box's deadline as the sandbox's timeout, which
//!   Modal caps at 24 hours. A box with an idle timeout gets Modal's own
//!   (`idle_timeout_secs`) and the end of its lifetime as the timeout, so
//!   a box in use is not ended `idle` seconds after it started. Modal
//!   cannot move a sandbox's timeout later: a deadline moved later stays
//!   the one the sandbox was made with at Modal (holmd still ends the box
//!   at its own), and a deadline moved earlier is holmd's to keep.
//! - **Ports** are Modal's tunnels (`SandboxGetTunnels`), public HTTPS URLs
//!   with no gate of their own: the guest refuses requests without the box
//!   secret, the bridge without its secret.
//! - **Commands and files** go to the guest through its tunnel, as on every
//!   runtime, not through Modal's command router: the guest runs them the
//!   same way everywhere (exit codes, streams, process groups, atomic file
//!   writes, the same errors), and holm needs no second channel with a
//!   short-lived token.
//!
//! Against a Modal whose `server_url` is plain `http://` on a loopback
//! address (a stand-in), the tunnels are reached over `http://` too, as
//! Modal's own client does with its command router for such a server.

pub mod api;
mod channel;

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use tokio::sync::OnceCell;

use self::api::{Built, ModalApi, SandboxDefinition};
use super::remote::{
    Addresses, GUEST_PATH, Key, MODAL, NewSandbox, Recipe, Sandbox, VResult, Vendor, VendorError,
    VendorFacts,
};
use super::{Endpoint, LABEL_RUNTIME, MachineState};
use crate::image::Progress;

/// Modal's API, as its clients default to (`MODAL_SERVER_URL`).
pub const DEFAULT_SERVER_URL: &str = "https://api.modal.com";
/// The app every box of a runtime goes in.
pub const APP_NAME: &str = "holm";
/// The longest a sandbox is waited for to be scheduled and its tunnels.
const START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// A Modal account's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The API (`MODAL_SERVER_URL`); default [`DEFAULT_SERVER_URL`].
    pub server_url: Option<String>,
    /// The environment sandboxes go in (`MODAL_ENVIRONMENT`); default the
    /// workspace's.
    pub environment: Option<String>,
    /// Which addresses its API and the endpoints it answers may be at:
    /// public only unless allowed ([`holm_client::address`]).
    pub addresses: Addresses,
}

/// The Modal adapter.
pub struct Modal {
    api: ModalApi,
    options: Options,
    /// Tunnels over plain HTTP (a loopback stand-in).
    plain: bool,
    app: OnceCell<String>,
    builder_version: OnceCell<String>,
    /// Each sandbox's endpoints, from its tunnels.
    tunnels: Mutex<BTreeMap<String, BTreeMap<u16, String>>>,
}

impl std::fmt::Debug for Modal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Modal").field("options", &self.options).finish_non_exhaustive()
    }
}

/// Whether `url` is plain HTTP to a loopback address.
fn loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else { return false };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

impl Modal {
    /// An account with the token pair.
    pub fn new(token_id: &str, token_secret: &str, options: Options) -> Result<Self, String> {
        if token_id.is_empty() {
            return Err(
                "the Modal runtime needs its token ID (the token_id field, MODAL_TOKEN_ID)".into(),
            );
        }
        let url = options.server_url.clone().unwrap_or_else(|| DEFAULT_SERVER_URL.to_owned());
        holm_client::address::check_url(&url, options.addresses)
            .map_err(|e| format!("server_url: {e}"))?;
        let api = ModalApi::new(&url, token_id, Key::new(token_secret), options.addresses)?;
        Ok(Self {
            api,
            plain: loopback_http(&url),
            options,
            app: OnceCell::new(),
            builder_version: OnceCell::new(),
            tunnels: Mutex::default(),
        })
    }

    /// An account from `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET`,
    /// `MODAL_SERVER_URL` and `MODAL_ENVIRONMENT`.
    pub fn from_env() -> Result<Self, String> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let id = var("MODAL_TOKEN_ID").ok_or("MODAL_TOKEN_ID is not set")?;
        let secret = var("MODAL_TOKEN_SECRET").ok_or("MODAL_TOKEN_SECRET is not set")?;
        Self::new(
            &id,
            &secret,
            Options {
                server_url: var("MODAL_SERVER_URL"),
                environment: var("MODAL_ENVIRONMENT"),
                addresses: super::remote::addresses_from_env(),
            },
        )
    }

    fn environment(&self) -> &str {
        self.options.environment.as_deref().unwrap_or_default()
    }

    async fn app(&self) -> VResult<&str> {
        self.app
            .get_or_try_init(|| self.api.app(APP_NAME, self.environment()))
            .await
            .map(String::as_str)
    }

    async fn builder_version(&self) -> VResult<&str> {
        self.builder_version
            .get_or_try_init(|| self.api.builder_version(self.environment()))
            .await
            .map(String::as_str)
    }

    /// Waits until the sandbox has a task and its tunnels, and keeps them.
    async fn wait_ready(&self, id: &str) -> VResult<()> {
        let started = std::time::Instant::now();
        loop {
            let (task, ended) = self.api.task(id, 10.0).await?;
            if ended {
                return Err(VendorError::answer(
                    "modal",
                    "start a sandbox",
                    "it ended as it started",
                ));
            }
            if task.is_some() {
                break;
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(VendorError::answer(
                    "modal",
                    "start a sandbox",
                    "it was not scheduled in ten minutes",
                ));
            }
        }
        loop {
            if let Some(t) = self.api.tunnels(id, 10.0).await? {
                self.keep_tunnels(id, t);
                return Ok(());
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(VendorError::answer(
                    "modal",
                    "start a sandbox",
                    "its tunnels did not open in ten minutes",
                ));
            }
        }
    }

    fn keep_tunnels(&self, id: &str, tunnels: Vec<api::Tunnel>) {
        let scheme = if self.plain { "http" } else { "https" };
        let urls = tunnels
            .into_iter()
            .map(|t| {
                let url = if t.port == 443 && !self.plain {
                    format!("{scheme}://{}", t.host)
                } else {
                    format!("{scheme}://{}:{}", t.host, t.port)
                };
                (t.container_port, url)
            })
            .collect();
        self.tunnels.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned(), urls);
    }

    fn sandbox(id: String, labels: BTreeMap<String, String>, ended: bool) -> Sandbox {
        let state = if ended { MachineState::Gone } else { MachineState::Running };
        Sandbox { id, state, labels, ends_at: None }
    }
}

/// The Dockerfile's instructions as Modal's lines: the guest's `COPY` kept
/// (its file goes as the build's context) and made executable after.
fn dockerfile_lines(recipe: &Recipe) -> Vec<String> {
    let mut out = Vec::new();
    for i in recipe.instructions() {
        let line = format!("{} {}", i.keyword, i.args);
        let guest = i.keyword == "COPY" && i.args.ends_with(GUEST_PATH);
        out.push(line);
        if guest {
            out.push(format!("RUN chmod 0755 {GUEST_PATH}"));
        }
    }
    out
}

#[async_trait]
impl Vendor for Modal {
    fn facts(&self) -> &'static VendorFacts {
        &MODAL
    }

    fn addresses(&self) -> Addresses {
        self.options.addresses
    }

    fn key(&self) -> &Key {
        self.api.key()
    }

    async fn ping(&self) -> VResult<()> {
        self.api.hello().await
    }

    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        let app = self.app().await?.to_owned();
        let version = self.builder_version().await?.to_owned();
        let lines = dockerfile_lines(recipe);
        let files = [("holm-guest".to_owned(), recipe.guest().to_vec(), 0o755)];
        let mount = self.api.context_mount(&app, &files).await?;
        let (image_id, done) = self.api.image(&app, lines, mount, &version).await?;
        let done = match done {
            Some(d) => {
                progress(Progress::Reused { tag: image_id.clone() });
                return match d {
                    Built::Ready => Ok(image_id),
                    Built::Failed(why) => Err(VendorError::answer("modal", "build the image", why)),
                };
            }
            None => {
                progress(Progress::Status(format!(
                    "building Modal image {image_id}; the first box waits for it"
                )));
                let mut log = |line: &str| progress(Progress::Status(line.to_owned()));
                self.api.join_image(&image_id, &mut log).await?
            }
        };
        match done {
            Built::Ready => {
                progress(Progress::Built { tag: image_id.clone() });
                Ok(image_id)
            }
            Built::Failed(why) => Err(VendorError::answer("modal", "build the image", why)),
        }
    }

    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox> {
        let app = self.app().await?.to_owned();
        let ports = super::remote::ports_of(&new.labels);
        let env: BTreeMap<String, String> = new.env.iter().cloned().collect();
        let secret = self.api.secret(&app, self.environment(), &env).await?;
        let secs = |s: u64| u32::try_from(s).unwrap_or(u32::MAX);
        let d = SandboxDefinition {
            entrypoint: vec![GUEST_PATH.to_owned()],
            image_id: new.image.clone(),
            secret_ids: vec![secret],
            memory_mib: u32::try_from(new.resources.memory_mib).unwrap_or(u32::MAX),
            milli_cpu: new.resources.cpus.saturating_mul(1000),
            timeout_secs: secs(new.idle.map_or(new.deadline_secs, |i| i.lifetime_secs)),
            idle_timeout_secs: new.idle.map(|i| secs(i.idle_secs)),
            ports,
            tags: new.labels.clone(),
        };
        let id = self.api.create(&app, &d).await?;
        if let Err(e) = self.wait_ready(&id).await {
            let _ = self.api.terminate(&id).await;
            return Err(e);
        }
        Ok(Self::sandbox(id, new.labels.clone(), false))
    }

    async fn get(&self, id: &str) -> VResult<Sandbox> {
        let labels = self.api.tags(id).await?;
        let ended = self.api.ended(id).await?;
        Ok(Self::sandbox(id.to_owned(), labels, ended))
    }

    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>> {
        let app = self.app().await?.to_owned();
        let all = self.api.list(&app, LABEL_RUNTIME, runtime).await?;
        Ok(all
            .into_iter()
            .filter(|s| !s.finished)
            .map(|s| Self::sandbox(s.id, s.tags, false))
            .collect())
    }

    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()> {
        // Modal has no call that moves a sandbox's timeout (see the module's
        // documentation): the one it was made with stands. What can be
        // known is that the sandbox is still there to keep its deadline.
        if self.api.ended(id).await? {
            return Err(VendorError::answer(
                "modal",
                "keep a sandbox's deadline",
                format!("sandbox {id} has ended"),
            )
            .with_status(404));
        }
        tracing::debug!(vendor = "modal", sandbox = %id, secs, "Modal keeps the sandbox's timeout");
        Ok(())
    }

    async fn delete(&self, id: &str) -> VResult<()> {
        self.tunnels.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        self.api.terminate(id).await
    }

    async fn endpoints(
        &self,
        sandbox: &Sandbox,
        ports: &[u16],
    ) -> VResult<BTreeMap<u16, Endpoint>> {
        let known =
            self.tunnels.lock().unwrap_or_else(|e| e.into_inner()).get(&sandbox.id).cloned();
        let urls = match known {
            Some(u) => u,
            None => {
                let t = self.api.tunnels(&sandbox.id, 10.0).await?.ok_or_else(|| {
                    VendorError::answer(
                        "modal",
                        "read a sandbox's tunnels",
                        "its tunnels are not open yet",
                    )
                })?;
                self.keep_tunnels(&sandbox.id, t);
                self.tunnels
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&sandbox.id)
                    .cloned()
                    .unwrap_or_default()
            }
        };
        let mut out = BTreeMap::new();
        for &port in ports {
            let url = urls.get(&port).ok_or_else(|| {
                VendorError::answer(
                    "modal",
                    "reach a sandbox port",
                    format!("port {port} has no tunnel"),
                )
            })?;
            let e = Endpoint::new(url)
                .map_err(|e| VendorError::answer("modal", "reach a sandbox port", e.to_string()))?;
            out.insert(port, e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::ImageRequest;

    #[test]
    fn the_guest_is_copied_from_the_context_and_made_executable() {
        let r = Recipe::new(&ImageRequest::default(), 4096, 2).unwrap();
        let lines = dockerfile_lines(&r);
        assert!(lines[0].starts_with("FROM "), "{:?}", &lines[0]);
        let i = lines.iter().position(|l| l == &format!("COPY holm-guest {GUEST_PATH}")).unwrap();
        assert_eq!(lines[i + 1], format!("RUN chmod 0755 {GUEST_PATH}"));
        assert!(lines.iter().all(|l| !l.contains('\n')));
    }

    #[test]
    fn only_loopback_http_is_plain() {
        assert!(loopback_http("http://127.0.0.1:5000"));
        assert!(loopback_http("http://localhost:5000/"));
        assert!(!loopback_http("https://api.modal.com"));
        assert!(!loopback_http("http://example.com:80"));
    }
}
