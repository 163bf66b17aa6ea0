//! The Vercel Sandbox runtime (`vercel`): boxes as Vercel sandboxes
//! (Firecracker microVMs), over Vercel's REST API (`https://vercel.com/api`,
//! the token as `Authorization: Bearer`, `?teamId=` on every call, the
//! project as `projectId`), as `@vercel/sandbox` 3.1.0 calls it.
//!
//! - **Images** are pushed to Vercel Container Registry ([`image`]): built
//!   on the local Docker engine, pushed as
//!   `<team-slug>/<project-slug>/holm-box:<name>`, found again by that tag
//!   (`GET /v1/vcr/repository/holm-box/tags/<name>`) and used once `ready`.
//! - **Sandboxes** are made with `POST /v3/sandboxes`: `name` is the box
//!   id, `image` the tag, `ports` the box's (at most 14: Vercel answers 500
//!   at 15), `timeout` the box's deadline in milliseconds (at most 24
//!   hours), `resources.vcpus` (memory is 2048 MB per vCPU),
//!   `persistent: false` (a stopped sandbox is gone), and holm's labels as
//!   tags (Vercel keeps at most five, so `holm.runtime` and `holm.box` are
//!   one each, listed with `tags=holm.runtime:<name>`, and the others are
//!   one JSON tag, `holm.labels`).
//! - **The guest** is started by a command (`POST
//!   /v2/sandboxes/sessions/<id>/cmd` with `wait`, as the image's user: root): a Vercel
//!   sandbox's first process is Vercel's own, not the image's entrypoint.
//! - **The deadline** is the session's timeout, moved later with
//!   `extend-timeout` (it only adds; a deadline moved earlier is kept by
//!   holmd, which removes the box then).
//! - **Ports** have public URLs (`routes`), reached directly; the guest's
//!   viewer and takeover tokens gate them.

mod image;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::{Method, RequestBuilder};
use serde::Deserialize;
use serde_json::json;

use super::remote::{
    Addresses, Auth, Key, NewSandbox, Recipe, Rest, Retry, Sandbox, VERCEL, VResult, Vendor,
    VendorError, VendorFacts, plain_message, start_script,
};
use super::{Endpoint, LABEL_BOX, LABEL_RUNTIME, MachineState};
use crate::image::Progress;

/// The provider name.
const VENDOR: &str = "vercel";
/// Vercel's API, as `@vercel/sandbox` defaults to.
pub const DEFAULT_API_URL: &str = "https://vercel.com/api";
/// Vercel Container Registry.
pub const DEFAULT_REGISTRY_URL: &str = "https://vcr.vercel.com";
/// The most ports a sandbox publishes: the API takes 15 but answers 500 at
/// exactly 15 (vercel/sandbox#292).
pub const MAX_PORTS: usize = 14;
/// The longest a sandbox lives on the Hobby plan (`@vercel/sandbox`'s README;
/// Pro and Enterprise: 24 hours).
pub const HOBBY_MAX_SECS: u64 = 45 * 60;
/// The tag holm lists its sandboxes by.
const RUNTIME_TAG: &str = LABEL_RUNTIME;
/// The labels kept as tags of their own; the others are in [`LABELS_TAG`].
const OWN_TAGS: &[&str] = &[LABEL_RUNTIME, LABEL_BOX];
/// The tag holding holm's other labels, as JSON.
pub const LABELS_TAG: &str = "holm.labels";
/// The longest a sandbox start is waited for.
const START_TIMEOUT: Duration = Duration::from_secs(600);

/// A Vercel account's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The team (`team_id`, `VERCEL_TEAM_ID`).
    pub team_id: String,
    /// The project (`project_id`, `VERCEL_PROJECT_ID`).
    pub project_id: String,
    /// The API (`api_url`); default [`DEFAULT_API_URL`].
    pub api_url: Option<String>,
    /// The registry (`registry_url`); default [`DEFAULT_REGISTRY_URL`].
    pub registry_url: Option<String>,
    /// Which addresses its API and the endpoints it answers may be at:
    /// public only unless allowed ([`holm_client::address`]).
    pub addresses: Addresses,
}

/// The Vercel adapter.
pub struct Vercel {
    rest: Rest,
    options: Options,
    /// Each sandbox's current session and the URL of each port.
    known: Mutex<HashMap<String, Known>>,
}

#[derive(Debug, Clone, Default)]
struct Known {
    session: String,
    routes: BTreeMap<u16, String>,
}

impl std::fmt::Debug for Vercel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vercel")
            .field("api", &self.rest.base())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Vercel's error shape: `{"error": {code, message}}`.
fn error_body(status: u16, body: &[u8]) -> (Option<String>, String) {
    #[derive(Deserialize)]
    struct Outer {
        error: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        code: Option<String>,
        message: Option<String>,
    }
    match serde_json::from_slice::<Outer>(body) {
        Ok(Outer { error: Inner { code, message: Some(m) } }) => (code, m),
        _ => (None, plain_message(status, body)),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SandboxJson {
    name: String,
    status: String,
    current_session_id: Option<String>,
    #[serde(default)]
    tags: BTreeMap<String, String>,
    expires_at: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionJson {
    id: String,
    status: String,
    timeout: u64,
    requested_at: u64,
    started_at: Option<u64>,
}

impl SessionJson {
    /// When the session ends, in milliseconds since the epoch.
    fn ends_ms(&self) -> u64 {
        self.started_at.unwrap_or(self.requested_at) + self.timeout
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Route {
    url: String,
    port: u16,
}

#[derive(Debug, Deserialize)]
struct Full {
    sandbox: SandboxJson,
    session: SessionJson,
    #[serde(default)]
    routes: Vec<Route>,
}

#[derive(Debug, Deserialize)]
struct SessionAnswer {
    session: SessionJson,
}

#[derive(Debug, Deserialize)]
struct Pagination {
    next: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Listed {
    sandboxes: Vec<SandboxJson>,
    pagination: Pagination,
}

/// A Vercel status in holm's terms. A stopped sandbox is gone: holm makes
/// none persistent.
fn state_of(status: &str) -> MachineState {
    match status {
        "running" => MachineState::Running,
        "stopping" | "stopped" | "failed" | "aborted" => MachineState::Gone,
        _ => MachineState::Created,
    }
}

/// holm's labels as three tags (Vercel keeps five): `holm.runtime` and
/// `holm.box` as they are, the rest as JSON in `holm.labels`.
fn tags_of(labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut rest = labels.clone();
    let mut tags = BTreeMap::new();
    for own in OWN_TAGS {
        if let Some(v) = rest.remove(*own) {
            tags.insert((*own).to_owned(), v);
        }
    }
    tags.insert(LABELS_TAG.to_owned(), serde_json::to_string(&rest).unwrap_or_default());
    tags
}

/// holm's labels from a sandbox's tags.
fn labels_of(tags: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> =
        tags.get(LABELS_TAG).and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
    for own in OWN_TAGS {
        if let Some(v) = tags.get(*own) {
            labels.insert((*own).to_owned(), v.clone());
        }
    }
    labels
}

/// The host (and port) of a registry URL, as Docker names registries.
fn registry_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.trim_end_matches('/').to_owned()
}

impl Vercel {
    /// An account with `token`.
    pub fn new(token: &str, options: Options) -> Result<Self, String> {
        if options.team_id.is_empty() || options.project_id.is_empty() {
            return Err("a Vercel runtime needs team_id and project_id".into());
        }
        let api = options.api_url.clone().unwrap_or_else(|| DEFAULT_API_URL.to_owned());
        reqwest::Url::parse(&api).map_err(|e| format!("api_url {api:?} is not a URL: {e}"))?;
        if let Some(r) = &options.registry_url {
            reqwest::Url::parse(r).map_err(|e| format!("registry_url {r:?} is not a URL: {e}"))?;
            // The engine pushes there and resolves a name itself: an
            // address is checked here, once.
            holm_client::address::check_url(r, options.addresses)
                .map_err(|e| format!("registry_url: {e}"))?;
        }
        let addresses = options.addresses;
        let rest = Rest::new(VENDOR, &api, Key::new(token), Auth::Bearer, error_body, addresses);
        Ok(Self { rest, options, known: Mutex::default() })
    }

    /// An account from `VERCEL_TOKEN`, `VERCEL_TEAM_ID`, `VERCEL_PROJECT_ID`,
    /// and `VERCEL_API_URL` and `VERCEL_REGISTRY_URL` where set.
    pub fn from_env() -> Result<Self, String> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let token = var("VERCEL_TOKEN").ok_or("VERCEL_TOKEN is not set")?;
        let options = Options {
            team_id: var("VERCEL_TEAM_ID").ok_or("VERCEL_TEAM_ID is not set")?,
            project_id: var("VERCEL_PROJECT_ID").ok_or("VERCEL_PROJECT_ID is not set")?,
            api_url: var("VERCEL_API_URL"),
            registry_url: var("VERCEL_REGISTRY_URL"),
            addresses: super::remote::addresses_from_env(),
        };
        Self::new(&token, options)
    }

    fn registry_host(&self) -> String {
        registry_host(self.options.registry_url.as_deref().unwrap_or(DEFAULT_REGISTRY_URL))
    }

    /// `rb` with the team, as every call carries it.
    fn scoped(&self, rb: RequestBuilder) -> RequestBuilder {
        rb.query(&[("teamId", self.options.team_id.as_str())])
    }

    fn call(&self, method: Method, path: &str) -> RequestBuilder {
        self.scoped(self.rest.request(method, path))
    }

    fn remember(&self, name: &str, session: &str, routes: &[Route]) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let k = known.entry(name.to_owned()).or_default();
        if k.session != session {
            k.routes.clear();
        }
        k.session = session.to_owned();
        k.routes.extend(routes.iter().map(|r| (r.port, r.url.clone())));
    }

    fn sandbox(s: &SandboxJson, session: Option<&SessionJson>) -> Sandbox {
        let status = session.map_or(s.status.as_str(), |x| x.status.as_str());
        let ends_at = session.map(|x| x.ends_ms() / 1000).or(s.expires_at.map(|ms| ms / 1000));
        Sandbox { id: s.name.clone(), state: state_of(status), labels: labels_of(&s.tags), ends_at }
    }

    /// A sandbox with its current session and routes.
    async fn full(&self, name: &str) -> VResult<Full> {
        let project = self.options.project_id.clone();
        let full: Full = self
            .rest
            .json("read a sandbox", Retry::Idempotent, |_| {
                self.call(Method::GET, &format!("/v2/sandboxes/{name}"))
                    .query(&[("projectId", project.as_str())])
            })
            .await?;
        self.remember(name, &full.session.id, &full.routes);
        Ok(full)
    }

    /// The current session of a sandbox.
    async fn session_of(&self, name: &str) -> VResult<String> {
        let cached = self.known.lock().unwrap_or_else(|e| e.into_inner()).get(name).cloned();
        match cached {
            Some(k) if !k.session.is_empty() => Ok(k.session),
            _ => Ok(self.full(name).await?.session.id),
        }
    }

    /// Waits until a new session runs.
    async fn wait_running(&self, mut session: SessionJson) -> VResult<SessionJson> {
        let started = Instant::now();
        loop {
            match session.status.as_str() {
                "running" => return Ok(session),
                "pending" if started.elapsed() < START_TIMEOUT => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                "pending" => {
                    return Err(VendorError::answer(
                        VENDOR,
                        "start a sandbox",
                        "it did not start in ten minutes",
                    ));
                }
                other => {
                    return Err(VendorError::answer(
                        VENDOR,
                        "start a sandbox",
                        format!("it ended before it ran ({other})"),
                    ));
                }
            }
            let id = session.id.clone();
            let answer: SessionAnswer = self
                .rest
                .json("read a session", Retry::Idempotent, |_| {
                    self.call(Method::GET, &format!("/v2/sandboxes/sessions/{id}"))
                })
                .await?;
            session = answer.session;
        }
    }

    /// Runs a command as the image's user, root in holm's image, and waits
    /// for it; its exit code and output. Without `sudo`: Vercel documents
    /// it for its managed images (which ship sudo with `!env_reset`), and
    /// holm's image has no sudo and already runs as root.
    async fn run_root(
        &self,
        session: &str,
        script: &str,
        env: &BTreeMap<&str, &str>,
    ) -> VResult<(i64, String)> {
        let what = "run a command";
        let body = json!({
            "command": "/bin/sh",
            "args": ["-c", script],
            "env": env,
            "wait": true,
            "logs": true,
        });
        let r = self
            .rest
            .send(what, Retry::Never, |_| {
                self.call(Method::POST, &format!("/v2/sandboxes/sessions/{session}/cmd"))
                    .json(&body)
            })
            .await?;
        let text = r.text().await.map_err(|e| VendorError::transport(VENDOR, what, &e))?;
        let (mut code, mut output) = (None, String::new());
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                VendorError::answer(VENDOR, what, format!("a line of its stream is not JSON: {e}"))
            })?;
            if let Some(c) = v.get("command") {
                code = c.get("exitCode").and_then(serde_json::Value::as_i64).or(code);
            } else if v.get("stream").and_then(|s| s.as_str()) == Some("error") {
                let m = v["data"]["message"].as_str().unwrap_or("the command failed");
                return Err(VendorError::answer(VENDOR, what, m.to_owned()));
            } else if let Some(d) = v.get("data").and_then(|d| d.as_str()) {
                output.push_str(d);
            }
        }
        match code {
            Some(c) => Ok((c, output)),
            None => Err(VendorError::answer(VENDOR, what, "its stream ended before its exit code")),
        }
    }
}

#[async_trait]
impl Vendor for Vercel {
    fn facts(&self) -> &'static VendorFacts {
        &VERCEL
    }

    fn addresses(&self) -> Addresses {
        self.rest.addresses()
    }

    fn key(&self) -> &Key {
        self.rest.key()
    }

    async fn ping(&self) -> VResult<()> {
        let project = self.options.project_id.clone();
        self.rest
            .send("list sandboxes", Retry::Never, |_| {
                self.call(Method::GET, "/v2/sandboxes")
                    .query(&[("project", project.as_str()), ("limit", "1")])
                    .timeout(Duration::from_secs(10))
            })
            .await
            .map(drop)
    }

    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        let tag = image::tag_of(recipe);
        let reference = format!("{}:{tag}", image::REPOSITORY);
        match self.tag_status(&tag).await?.and_then(|s| s.status).as_deref() {
            Some("ready") => {
                progress(Progress::Reused { tag: reference.clone() });
                return Ok(reference);
            }
            Some("preparing") => {}
            _ => self.build_and_push(recipe, &tag, progress).await?,
        }
        self.wait_ready(&tag, progress).await?;
        progress(Progress::Built { tag: reference.clone() });
        Ok(reference)
    }

    async fn admit(&self, lifetime_secs: u64) -> VResult<()> {
        if lifetime_secs > HOBBY_MAX_SECS && self.plan().await? == "hobby" {
            return Err(VendorError::answer(
                VENDOR,
                "create a sandbox",
                format!(
                    "the team is on Vercel's Hobby plan, which ends a sandbox after at most 45 \
                     minutes ({HOBBY_MAX_SECS} seconds); this box's lifetime is {lifetime_secs} \
                     seconds: give it 45 minutes or less, or use a Pro team"
                ),
            )
            .with_status(400));
        }
        Ok(())
    }

    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox> {
        let ports = super::remote::ports_of(&new.labels);
        if ports.len() > MAX_PORTS {
            return Err(VendorError::answer(
                VENDOR,
                "create a sandbox",
                format!(
                    "the box needs {} ports and a Vercel sandbox publishes at most {MAX_PORTS} (6 screens)",
                    ports.len()
                ),
            ));
        }
        let timeout_ms = new.deadline_secs.clamp(1, VERCEL.hard_max_secs.unwrap_or(86_400)) * 1000;
        let body = json!({
            "projectId": self.options.project_id,
            "name": new.box_id,
            "image": new.image,
            "ports": ports,
            "timeout": timeout_ms,
            "resources": { "vcpus": new.resources.cpus },
            "tags": tags_of(&new.labels),
            "persistent": false,
        });
        let created: Full = self
            .rest
            .json("create a sandbox", Retry::NotTwice, |_| {
                self.call(Method::POST, "/v3/sandboxes").timeout(START_TIMEOUT).json(&body)
            })
            .await?;
        let session = self.wait_running(created.session).await?;
        self.remember(&created.sandbox.name, &session.id, &created.routes);
        Ok(Self::sandbox(&created.sandbox, Some(&session)))
    }

    async fn boot(&self, sandbox: &Sandbox, new: &NewSandbox) -> VResult<()> {
        let session = self.session_of(&sandbox.id).await?;
        let env: BTreeMap<&str, &str> =
            new.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        match self.run_root(&session, &start_script(""), &env).await? {
            (0, _) => Ok(()),
            (code, out) => Err(VendorError::answer(
                VENDOR,
                "start the guest",
                format!("exit code {code}: {}", out.trim()),
            )),
        }
    }

    async fn by_name(&self, box_id: &str) -> VResult<Option<Sandbox>> {
        // Sandboxes are named after their box, unique in the project.
        match self.get(box_id).await {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn get(&self, id: &str) -> VResult<Sandbox> {
        let full = self.full(id).await?;
        Ok(Self::sandbox(&full.sandbox, Some(&full.session)))
    }

    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>> {
        let filter = format!("{RUNTIME_TAG}:{runtime}");
        let project = self.options.project_id.clone();
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page: Listed = self
                .rest
                .json("list sandboxes", Retry::Idempotent, |_| {
                    let mut q = vec![
                        ("project", project.clone()),
                        ("tags", filter.clone()),
                        ("limit", "100".to_owned()),
                    ];
                    if let Some(c) = &cursor {
                        q.push(("cursor", c.clone()));
                    }
                    self.call(Method::GET, "/v2/sandboxes").query(&q)
                })
                .await?;
            for s in page.sandboxes {
                if let Some(session) = &s.current_session_id {
                    let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
                    let k = known.entry(s.name.clone()).or_default();
                    if &k.session != session {
                        *k = Known { session: session.clone(), routes: BTreeMap::new() };
                    }
                }
                let s = Self::sandbox(&s, None);
                if s.state != MachineState::Gone {
                    out.push(s);
                }
            }
            match page.pagination.next.filter(|c| !c.is_empty()) {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()> {
        let full = self.full(id).await?;
        let s = &full.session;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let want = now_ms + secs * 1000;
        let start = s.started_at.unwrap_or(s.requested_at);
        // A session lives at most 24 hours; `extend-timeout` only adds.
        let longest = start + VERCEL.hard_max_secs.unwrap_or(86_400) * 1000;
        let more = want.min(longest).saturating_sub(s.ends_ms());
        if more < 1000 {
            return Ok(());
        }
        let sid = s.id.clone();
        self.rest
            .send("extend a sandbox's timeout", Retry::Idempotent, |_| {
                self.call(Method::POST, &format!("/v2/sandboxes/sessions/{sid}/extend-timeout"))
                    .json(&json!({ "duration": more }))
            })
            .await
            .map(drop)
    }

    async fn delete(&self, id: &str) -> VResult<()> {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        let project = self.options.project_id.clone();
        self.rest
            .send("delete a sandbox", Retry::Idempotent, |_| {
                self.call(Method::DELETE, &format!("/v2/sandboxes/{id}"))
                    .query(&[("projectId", project.as_str())])
            })
            .await
            .map(drop)
    }

    async fn endpoints(
        &self,
        sandbox: &Sandbox,
        ports: &[u16],
    ) -> VResult<BTreeMap<u16, Endpoint>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner()).get(&sandbox.id).cloned();
        let routes = match known {
            Some(k) if ports.iter().all(|p| k.routes.contains_key(p)) => k.routes,
            _ => {
                let full = self.full(&sandbox.id).await?;
                full.routes.into_iter().map(|r| (r.port, r.url)).collect()
            }
        };
        let mut out = BTreeMap::new();
        for &port in ports {
            let url = routes.get(&port).ok_or_else(|| {
                VendorError::answer(
                    VENDOR,
                    "reach a sandbox port",
                    format!("the sandbox publishes no route for port {port}"),
                )
            })?;
            let e = Endpoint::new(url)
                .map_err(|e| VendorError::answer(VENDOR, "reach a sandbox port", e.to_string()))?;
            out.insert(port, e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_vercels_error_shape() {
        let (code, m) =
            error_body(410, br#"{"error":{"code":"sandbox_stopped","message":"It stopped."}}"#);
        assert_eq!((code.as_deref(), m.as_str()), (Some("sandbox_stopped"), "It stopped."));
        let (code, m) = error_body(502, b"<html>bad gateway</html>");
        assert_eq!((code, m.as_str()), (None, "Bad Gateway"));
    }

    #[test]
    fn labels_go_as_two_tags_and_come_back_whole() {
        let labels: BTreeMap<String, String> = [
            ("holm.runtime", "vercel"),
            ("holm.box", "bx1"),
            ("holm.ports", "8765,9223"),
            ("holm.server", "s"),
            ("holm.expires", "2026-01-01T00:00:00Z"),
            ("holm.idle_timeout_secs", "60"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let tags = tags_of(&labels);
        assert_eq!(tags.len(), 3);
        assert_eq!(tags["holm.runtime"], "vercel");
        assert_eq!(tags["holm.box"], "bx1");
        assert_eq!(labels_of(&tags), labels);
    }

    #[test]
    fn states_and_registry_hosts() {
        assert_eq!(state_of("running"), MachineState::Running);
        assert_eq!(state_of("pending"), MachineState::Created);
        assert_eq!(state_of("stopped"), MachineState::Gone);
        assert_eq!(registry_host("https://vcr.vercel.com"), "vcr.vercel.com");
        assert_eq!(registry_host("http://127.0.0.1:5000/"), "127.0.0.1:5000");
    }
}
