//! The Daytona runtime: boxes as Daytona sandboxes (containers), over
//! Daytona's REST API (`Authorization: Bearer <key>`) and, once a boot,
//! its in-sandbox toolbox.
//!
//! - **Images** are Daytona snapshots built from the bundled Dockerfile,
//!   sent as text (`buildInfo.dockerfileContent`), with the snapshot's
//!   memory and CPUs; a snapshot is named by its content (`holm-<hash>`),
//!   found again by that name, and built once. Daytona's API takes JSON
//!   bodies of at most 100 KB (Express's default, which it keeps), so the
//!   12 MB guest cannot be written into the Dockerfile: the snapshot is the
//!   desktop, and the guest is delivered at boot.
//! - **Sandboxes** come from the snapshot, named by the box id, with holm's
//!   labels, the guest's environment as `env` (read back for a restart),
//!   and the box's deadline as auto-stop (`autoStopInterval`, minutes, moved
//!   with `POST /sandbox/{id}/autostop/{minutes}`) with `autoDeleteInterval:
//!   0`, so Daytona deletes the sandbox once it stops. Daytona's auto-stop
//!   counts from the last activity (API, toolbox or preview traffic), so
//!   at the vendor the deadline is an idle deadline; while holmd runs it
//!   also ends the box at its lifetime.
//! - **The guest** is uploaded gzipped through the toolbox
//!   (`files/bulk-upload`, as Daytona's SDKs upload files: the toolbox
//!   API of 0.226 no longer lists the daemon's `files/upload`) and started with `process/execute` once a boot; it
//!   then does every box route, commands and files included, as on every
//!   runtime.
//! - **Ports** are reached at their preview URLs (`GET
//!   /sandbox/{id}/ports/{port}/preview-url`) with the preview token in
//!   `X-Daytona-Preview-Token`; a client that cannot send headers gives it
//!   as `?DAYTONA_SANDBOX_AUTH_KEY=`.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;
use sha2::Digest as _;

use super::remote::{
    Addresses, Auth, DAYTONA, Key, NewSandbox, Recipe, Rest, Retry, Sandbox, VResult, Vendor,
    VendorError, VendorFacts, plain_message, start_script,
};
use super::{Endpoint, LABEL_RUNTIME, MachineState, WebSockets};
use crate::image::Progress;

/// Daytona's API, as its SDKs default to.
pub const DEFAULT_API_URL: &str = "https://app.daytona.io/api";
/// The header of a preview URL's token.
pub const PREVIEW_TOKEN_HEADER: &str = "x-daytona-preview-token";
/// The query parameter of a preview URL's token, for clients without headers.
pub const PREVIEW_TOKEN_QUERY: &str = "DAYTONA_SANDBOX_AUTH_KEY";
/// Where the guest is uploaded before it is unpacked.
const GUEST_UPLOAD: &str = "/tmp/holm-guest.gz";
/// The disk of each sandbox, in GB.
const DISK_GB: u64 = 10;
/// The longest a snapshot build or a sandbox start is waited for.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
const START_TIMEOUT: Duration = Duration::from_secs(600);
const POLL: Duration = Duration::from_secs(1);

/// A Daytona account's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The API (`DAYTONA_API_URL`); default [`DEFAULT_API_URL`].
    pub api_url: Option<String>,
    /// The region sandboxes go to (`DAYTONA_TARGET`); default the
    /// organization's.
    pub target: Option<String>,
    /// Which addresses its API and the endpoints it answers may be at:
    /// public only unless allowed ([`holm_client::address`]).
    pub addresses: Addresses,
}

/// The Daytona adapter.
pub struct Daytona {
    rest: Rest,
    options: Options,
    /// Each sandbox's toolbox URL, from the API.
    toolboxes: Mutex<HashMap<String, String>>,
    /// Each sandbox port's preview URL and token.
    previews: Mutex<HashMap<(String, u16), Preview>>,
}

impl std::fmt::Debug for Daytona {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daytona")
            .field("api", &self.rest.base())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Daytona's error body: `{path, timestamp, statusCode, error, message}`.
fn error_body(status: u16, body: &[u8]) -> (Option<String>, String) {
    #[derive(Deserialize)]
    struct E {
        error: Option<String>,
        message: Option<serde_json::Value>,
    }
    match serde_json::from_slice::<E>(body) {
        Ok(E { error, message: Some(m) }) => {
            let text = match m {
                serde_json::Value::String(s) => s,
                serde_json::Value::Array(parts) => {
                    parts.iter().filter_map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
                }
                other => other.to_string(),
            };
            (error, text)
        }
        _ => (None, plain_message(status, body)),
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Preview {
    url: String,
    token: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    id: String,
    state: String,
    error_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    id: String,
    state: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    error_reason: Option<String>,
    toolbox_proxy_url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    items: Vec<Detail>,
    next_cursor: Option<String>,
}

/// A Daytona state in holm's terms.
fn state_of(state: Option<&str>) -> MachineState {
    match state.unwrap_or("unknown") {
        "started" => MachineState::Running,
        "paused" | "pausing" => MachineState::Paused,
        "stopped" | "stopping" | "archived" | "archiving" => MachineState::Stopped,
        "destroyed" | "destroying" | "error" | "build_failed" => MachineState::Gone,
        _ => MachineState::Created,
    }
}

/// Minutes for Daytona's auto-stop: whole, rounded up, at least one.
fn minutes(secs: u64) -> u64 {
    secs.div_ceil(60).max(1)
}

impl Daytona {
    /// An account with `key`.
    pub fn new(key: &str, options: Options) -> Result<Self, String> {
        let api = options.api_url.clone().unwrap_or_else(|| DEFAULT_API_URL.to_owned());
        reqwest::Url::parse(&api).map_err(|e| format!("api_url {api:?} is not a URL: {e}"))?;
        let addresses = options.addresses;
        let rest = Rest::new("daytona", &api, Key::new(key), Auth::Bearer, error_body, addresses);
        Ok(Self { rest, options, toolboxes: Mutex::default(), previews: Mutex::default() })
    }

    /// An account from `DAYTONA_API_KEY`, `DAYTONA_API_URL` and
    /// `DAYTONA_TARGET`.
    pub fn from_env() -> Result<Self, String> {
        let key = std::env::var("DAYTONA_API_KEY")
            .map_err(|_| "DAYTONA_API_KEY is not set".to_owned())?;
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let options = Options {
            api_url: var("DAYTONA_API_URL"),
            target: var("DAYTONA_TARGET"),
            addresses: super::remote::addresses_from_env(),
        };
        Self::new(&key, options)
    }

    fn sandbox(&self, d: Detail) -> Sandbox {
        if let Some(url) = &d.toolbox_proxy_url {
            self.toolboxes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(d.id.clone(), url.clone());
        }
        Sandbox { state: state_of(d.state.as_deref()), labels: d.labels, ends_at: None, id: d.id }
    }

    /// Waits until the sandbox `d` is `started`; deletes it when it fails
    /// to start.
    async fn started(&self, d: Detail) -> VResult<Sandbox> {
        let id = d.id.clone();
        let started = Instant::now();
        let mut d = d;
        loop {
            match d.state.as_deref() {
                Some("started") => return Ok(self.sandbox(d)),
                Some("error" | "build_failed") => {
                    let reason = d.error_reason.unwrap_or_else(|| "it failed to start".into());
                    let _ = self.delete(&id).await;
                    return Err(VendorError::answer("daytona", "start a sandbox", reason));
                }
                _ if started.elapsed() > START_TIMEOUT => {
                    let _ = self.delete(&id).await;
                    return Err(VendorError::answer(
                        "daytona",
                        "start a sandbox",
                        "it did not start in ten minutes",
                    ));
                }
                _ => {}
            }
            tokio::time::sleep(POLL).await;
            d = self.detail(&id).await?;
        }
    }

    async fn detail(&self, id: &str) -> VResult<Detail> {
        self.rest
            .json("read a sandbox", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/sandbox/{id}"))
            })
            .await
    }

    /// `POST /snapshots/{id}/activate`: a snapshot Daytona deactivated
    /// after it went unused (14 days by default) is active again; a
    /// sandbox cannot be made from an inactive one.
    async fn activate(
        &self,
        id: &str,
        name: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<()> {
        progress(Progress::Status(format!(
            "Daytona snapshot {name} is inactive (unused for a while); activating it"
        )));
        self.rest
            .send("activate a snapshot", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/snapshots/{id}/activate"))
            })
            .await
            .map(drop)
    }

    /// Waits until a snapshot is active, activating it when it is inactive.
    async fn wait_snapshot(
        &self,
        name: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<()> {
        let started = Instant::now();
        let mut last = String::new();
        loop {
            let s: Snapshot = self
                .rest
                .json("read a snapshot", Retry::Idempotent, |r| {
                    r.request(Method::GET, &format!("/snapshots/{name}"))
                })
                .await?;
            if s.state != last {
                progress(Progress::Status(format!("Daytona snapshot {name}: {}", s.state)));
                last.clone_from(&s.state);
            }
            match s.state.as_str() {
                "active" => return Ok(()),
                "inactive" => self.activate(&s.id, name, progress).await?,
                "error" | "build_failed" => {
                    return Err(VendorError::answer(
                        "daytona",
                        "build the snapshot",
                        s.error_reason.unwrap_or_else(|| format!("its build ended in {}", s.state)),
                    ));
                }
                _ if started.elapsed() > BUILD_TIMEOUT => {
                    return Err(VendorError::answer(
                        "daytona",
                        "build the snapshot",
                        "the build took longer than an hour",
                    ));
                }
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// The toolbox base of a sandbox: `<toolboxProxyUrl>/<id>`.
    async fn toolbox(&self, id: &str) -> VResult<String> {
        let known = self.toolboxes.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        let url = match known {
            Some(u) => u,
            None => {
                let d = self.detail(id).await?;
                d.toolbox_proxy_url.clone().ok_or_else(|| {
                    VendorError::answer(
                        "daytona",
                        "reach the toolbox",
                        "the sandbox has no toolboxProxyUrl",
                    )
                })?
            }
        };
        Ok(format!("{}/{id}", url.trim_end_matches('/')))
    }

    async fn preview(&self, id: &str, port: u16) -> VResult<Preview> {
        let key = (id.to_owned(), port);
        if let Some(p) = self.previews.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let p: Preview = self
            .rest
            .json("read a preview URL", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/sandbox/{id}/ports/{port}/preview-url"))
            })
            .await?;
        self.previews.lock().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
        Ok(p)
    }
}

/// The guest, gzipped once per process, for the toolbox upload.
fn guest_gz() -> &'static [u8] {
    static GZ: OnceLock<Vec<u8>> = OnceLock::new();
    GZ.get_or_init(|| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(crate::image::GUEST_BINARY).expect("a gzip in memory");
        gz.finish().expect("a gzip in memory")
    })
}

/// The `multipart/form-data` body of a toolbox `files/bulk-upload` of one
/// file, and its content type: `files[0].path`, then `files[0].file` (the
/// daemon reads each file's path before it), as Daytona's SDKs send it.
fn bulk_upload_form(path: &str, data: &[u8]) -> (String, Vec<u8>) {
    let boundary = format!("holm-{}", &hex::encode(sha2::Sha256::digest(data))[..24]);
    let mut body = Vec::with_capacity(data.len() + 512);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"files[0].path\"\r\n\r\n{path}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"{path}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[async_trait]
impl Vendor for Daytona {
    fn facts(&self) -> &'static VendorFacts {
        &DAYTONA
    }

    fn addresses(&self) -> Addresses {
        self.rest.addresses()
    }

    fn key(&self) -> &Key {
        self.rest.key()
    }

    async fn ping(&self) -> VResult<()> {
        self.rest.ping("/sandbox").await
    }

    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        let dockerfile = recipe.dockerfile_without_guest();
        // A snapshot is built in one region (`regionId`): a runtime with a
        // `target` builds its own there, named apart from the default
        // region's, or Daytona refuses its sandboxes ("not available in
        // region").
        let name = match &self.options.target {
            Some(t) => recipe.name_for(&[dockerfile.as_bytes(), t.as_bytes()]),
            None => recipe.name_for(&[dockerfile.as_bytes()]),
        };
        let found = self
            .rest
            .json::<Snapshot>("find a snapshot", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/snapshots/{name}"))
            })
            .await;
        match found {
            Ok(s) if s.state == "active" => {
                progress(Progress::Reused { tag: name.clone() });
                return Ok(name);
            }
            Ok(s) if s.state == "error" || s.state == "build_failed" => {
                progress(Progress::Status(format!(
                    "snapshot {name} failed before ({}); building it again",
                    s.error_reason.unwrap_or_default()
                )));
                self.rest
                    .send("delete a failed snapshot", Retry::Idempotent, |r| {
                        r.request(Method::DELETE, &format!("/snapshots/{}", s.id))
                    })
                    .await?;
            }
            Ok(_) => {
                self.wait_snapshot(&name, progress).await?;
                progress(Progress::Built { tag: name.clone() });
                return Ok(name);
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
        progress(Progress::Status(format!(
            "building Daytona snapshot {name} ({} CPUs, {} GiB); the first box waits for it",
            recipe.cpus,
            recipe.memory_mib / 1024
        )));
        let mut body = json!({
            "name": name,
            "buildInfo": { "dockerfileContent": dockerfile },
            "cpu": recipe.cpus,
            "memory": recipe.memory_mib / 1024,
            "disk": DISK_GB,
        });
        if let Some(target) = &self.options.target {
            body["regionId"] = json!(target);
        }
        match self
            .rest
            .send("build a snapshot", Retry::NotTwice, |r| {
                r.request(Method::POST, "/snapshots").json(&body)
            })
            .await
        {
            Ok(_) => {}
            // Another server asked for the same snapshot meanwhile.
            Err(e) if e.is_conflict() => {}
            Err(e) => return Err(e),
        }
        self.wait_snapshot(&name, progress).await?;
        progress(Progress::Built { tag: name.clone() });
        Ok(name)
    }

    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox> {
        let env: BTreeMap<&str, &str> =
            new.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut body = json!({
            "name": new.box_id,
            "snapshot": new.image,
            "env": env,
            "labels": new.labels,
            "public": false,
            "autoStopInterval": minutes(new.deadline_secs),
            "autoDeleteInterval": 0,
        });
        if let Some(target) = &self.options.target {
            body["target"] = json!(target);
        }
        let created: Detail = self
            .rest
            .json("create a sandbox", Retry::NotTwice, |r| {
                r.request(Method::POST, "/sandbox").json(&body)
            })
            .await?;
        self.started(created).await
    }

    async fn by_name(&self, box_id: &str) -> VResult<Option<Sandbox>> {
        // Sandboxes are named after their box, unique in the organization,
        // and `GET /sandbox/{idOrName}` reads one at once (the list may lag).
        match self.detail(box_id).await {
            Ok(d) => self.started(d).await.map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn boot(&self, sandbox: &Sandbox, new: &NewSandbox) -> VResult<()> {
        let toolbox = self.toolbox(&sandbox.id).await?;
        let (content_type, body) = bulk_upload_form(GUEST_UPLOAD, guest_gz());
        self.rest
            .send("upload the guest through the toolbox", Retry::Idempotent, |r| {
                r.authorize(r.client().post(format!("{toolbox}/files/bulk-upload")))
                    .header(reqwest::header::CONTENT_TYPE, &content_type)
                    .body(body.clone())
            })
            .await?;
        let prepare = format!(
            "gunzip -c {GUEST_UPLOAD} > {g}.new && chmod 0755 {g}.new && mv {g}.new {g} && rm -f {GUEST_UPLOAD}",
            g = super::remote::GUEST_PATH
        );
        let envs: BTreeMap<&str, &str> =
            new.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Executed {
            exit_code: Option<i64>,
            result: String,
        }
        let what = "start the guest through the toolbox";
        let done: Executed = self
            .rest
            .json(what, Retry::NotTwice, |r| {
                r.authorize(r.client().post(format!("{toolbox}/process/execute"))).json(
                    &json!({ "command": start_script(&prepare), "envs": envs, "timeout": 60 }),
                )
            })
            .await?;
        match done.exit_code.unwrap_or(0) {
            0 => Ok(()),
            code => Err(VendorError::answer(
                "daytona",
                what,
                format!("exit code {code}: {}", done.result.trim()),
            )),
        }
    }

    async fn get(&self, id: &str) -> VResult<Sandbox> {
        let d = self.detail(id).await?;
        Ok(self.sandbox(d))
    }

    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>> {
        let labels = json!({ LABEL_RUNTIME: runtime }).to_string();
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page: Page = self
                .rest
                .json("list sandboxes", Retry::Idempotent, |r| {
                    let mut q = vec![("labels", labels.clone()), ("limit", "200".to_owned())];
                    if let Some(c) = &cursor {
                        q.push(("cursor", c.clone()));
                    }
                    r.request(Method::GET, "/sandbox").query(&q)
                })
                .await?;
            for d in page.items {
                let s = self.sandbox(d);
                if s.state != MachineState::Gone {
                    out.push(s);
                }
            }
            match page.next_cursor.filter(|c| !c.is_empty()) {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()> {
        let m = minutes(secs);
        self.rest
            .send("set a sandbox's auto-stop", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/sandbox/{id}/autostop/{m}"))
            })
            .await
            .map(drop)
    }

    async fn delete(&self, id: &str) -> VResult<()> {
        let done = self
            .rest
            .send("delete a sandbox", Retry::Idempotent, |r| {
                r.request(Method::DELETE, &format!("/sandbox/{id}"))
            })
            .await
            .map(drop);
        self.toolboxes.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        self.previews.lock().unwrap_or_else(|e| e.into_inner()).retain(|(sid, _), _| sid != id);
        done
    }

    async fn endpoints(
        &self,
        sandbox: &Sandbox,
        ports: &[u16],
    ) -> VResult<BTreeMap<u16, Endpoint>> {
        let mut out = BTreeMap::new();
        for &port in ports {
            let p = self.preview(&sandbox.id, port).await?;
            let bad = |e: crate::runtime::EndpointError| {
                VendorError::answer("daytona", "reach a sandbox port", e.to_string())
            };
            let e = Endpoint::new(&p.url)
                .and_then(|e| e.with_header(PREVIEW_TOKEN_HEADER, &p.token))
                .and_then(|e| e.with_header("x-daytona-skip-preview-warning", "true"))
                .map_err(bad)?
                .with_websockets(WebSockets::QueryParam {
                    name: PREVIEW_TOKEN_QUERY.into(),
                    value: p.token.into(),
                });
            out.insert(port, e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_daytonas_envelope() {
        let (code, m) = error_body(
            404,
            br#"{"path":"/api/sandbox/x","timestamp":"t","statusCode":404,"error":"Not Found","message":"Sandbox with ID or name x not found"}"#,
        );
        assert_eq!(code.as_deref(), Some("Not Found"));
        assert_eq!(m, "Sandbox with ID or name x not found");
        let (_, m) = error_body(400, br#"{"statusCode":400,"error":"Bad Request","message":["cpu must be a number","memory too"]}"#);
        assert_eq!(m, "cpu must be a number, memory too");
    }

    #[test]
    fn states_and_minutes_map_as_holm_needs() {
        assert_eq!(state_of(Some("started")), MachineState::Running);
        assert_eq!(state_of(Some("pending_build")), MachineState::Created);
        assert_eq!(state_of(Some("destroyed")), MachineState::Gone);
        assert_eq!(state_of(None), MachineState::Created);
        assert_eq!(minutes(1), 1);
        assert_eq!(minutes(60), 1);
        assert_eq!(minutes(61), 2);
    }

    #[test]
    fn the_upload_is_a_bulk_upload_of_one_file_its_path_first() {
        let (ct, body) = bulk_upload_form("/tmp/g.gz", b"abc");
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"files[0].path\"\r\n\r\n/tmp/g.gz\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"/tmp/g.gz\""
        )));
        assert!(text.ends_with(&format!("\r\nabc\r\n--{boundary}--\r\n")));
    }
}
