//! The E2B runtime: boxes as E2B sandboxes (Firecracker microVMs), over
//! E2B's REST API (`X-API-Key`) and, for one call a boot, its in-sandbox
//! agent envd.
//!
//! - **Images** are E2B templates built from the bundled Dockerfile: its
//!   `RUN` and `ENV` lines become build steps, the guest binary is uploaded
//!   once as the build's file context, and memory and CPUs are the
//!   template's. A template is named by its content (`holm-<hash>`), found
//!   again by that name, and built once ([`template`]).
//! - **Sandboxes** are made with `POST /v2/sandboxes`, as E2B's SDKs do
//!   since 2.6x (E2B's spec marks `POST /sandboxes` and
//!   `POST /sandboxes/{id}/connect` deprecated; the v2 create is always
//!   secured, so it has no `secure`), with the box's deadline as their
//!   `timeout` (moved with `POST /sandboxes/{id}/timeout`), holm's labels as
//!   `metadata` (listed with `GET /v2/sandboxes?metadata=`), the guest's
//!   environment as `envVars`, and `allowPublicTraffic` from the runtime's
//!   `public_traffic` field. Pause keeps memory (`/pause`), resume is
//!   `POST /v2/sandboxes/{id}/connect` with the remaining timeout.
//! - **The guest** does every box route, commands and files included: envd
//!   is E2B's first process in the sandbox (the template's entrypoint is not
//!   run), so holm asks envd once per boot to start the guest with the
//!   sandbox's environment ([`envd`]), which carries only the digest of
//!   the box secret (a server that lost its records works the secret out
//!   again from its key). Commands and files go to the guest, not
//!   envd, so they behave on E2B exactly as on every other runtime (exit
//!   codes, streams, process groups, atomic writes, the same errors).
//! - **Ports** are reached through E2B's proxy: `https://sandbox.<domain>`
//!   with `E2b-Sandbox-Id` and `E2b-Sandbox-Port` (or `sandbox_url` when
//!   set), plus `e2b-traffic-access-token` unless the runtime opened its
//!   ports with `public_traffic`; then a client that cannot send headers
//!   uses the host-routed `https://<port>-<id>.<domain>`.

pub mod envd;
pub mod template;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::remote::{
    Addresses, Auth, E2B, Key, NewSandbox, Recipe, Rest, Retry, Sandbox, VResult, Vendor,
    VendorError, VendorFacts, plain_message,
};
use super::{Endpoint, LABEL_RUNTIME, MachineState, WebSockets};
use crate::image::Progress;

/// E2B's API, as its SDKs default to.
pub const DEFAULT_API_URL: &str = "https://api.e2b.app";
/// E2B's domain for sandboxes, as its SDKs default to.
pub const DEFAULT_DOMAIN: &str = "e2b.app";
/// The domains whose proxy takes the shared `sandbox.` host with routing
/// headers (E2B's SDKs keep the same list).
const SHARED_HOST_DOMAINS: &[&str] = &["e2b.app", "e2b.dev", "e2b.pro"];
/// envd's port in every sandbox.
pub const ENVD_PORT: u16 = 49983;
/// The header of a sandbox's traffic token.
pub const TRAFFIC_TOKEN_HEADER: &str = "e2b-traffic-access-token";

/// An E2B account's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The API (`E2B_API_URL`); default [`DEFAULT_API_URL`].
    pub api_url: Option<String>,
    /// One URL for every sandbox port, routed by headers (`E2B_SANDBOX_URL`);
    /// default `https://sandbox.<domain>`.
    pub sandbox_url: Option<String>,
    /// Open the sandboxes' ports to requests without the traffic token.
    pub public_traffic: bool,
    /// Which addresses its API and the endpoints it answers may be at:
    /// public only unless allowed ([`holm_client::address`]).
    pub addresses: Addresses,
}

/// What one sandbox's ports and envd need, from its create or connect.
#[derive(Debug, Clone, Default)]
struct Tokens {
    envd: Option<String>,
    traffic: Option<String>,
    domain: Option<String>,
}

/// The E2B adapter.
pub struct E2b {
    rest: Rest,
    options: Options,
    tokens: Mutex<HashMap<String, Tokens>>,
}

impl std::fmt::Debug for E2b {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E2b")
            .field("api", &self.rest.base())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// E2B's error body: `{code, message, error_code?}`.
fn error_body(status: u16, body: &[u8]) -> (Option<String>, String) {
    #[derive(Deserialize)]
    struct E {
        message: Option<String>,
        error_code: Option<String>,
    }
    match serde_json::from_slice::<E>(body) {
        Ok(E { message: Some(m), error_code }) => {
            (error_code, m.lines().next().unwrap_or("").to_owned())
        }
        _ => (None, plain_message(status, body)),
    }
}

impl E2b {
    /// An account with `key`.
    pub fn new(key: &str, options: Options) -> Result<Self, String> {
        let api = options.api_url.clone().unwrap_or_else(|| DEFAULT_API_URL.to_owned());
        reqwest::Url::parse(&api).map_err(|e| format!("api_url {api:?} is not a URL: {e}"))?;
        if let Some(u) = &options.sandbox_url {
            Endpoint::new(u).map_err(|e| format!("sandbox_url: {e}"))?;
        }
        let addresses = options.addresses;
        let rest =
            Rest::new("e2b", &api, Key::new(key), Auth::Header("X-API-Key"), error_body, addresses);
        Ok(Self { rest, options, tokens: Mutex::default() })
    }

    /// An account from `E2B_API_KEY`, `E2B_API_URL` and `E2B_SANDBOX_URL`.
    pub fn from_env() -> Result<Self, String> {
        let key = std::env::var("E2B_API_KEY").map_err(|_| "E2B_API_KEY is not set".to_owned())?;
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self::new(
            &key,
            Options {
                api_url: var("E2B_API_URL"),
                sandbox_url: var("E2B_SANDBOX_URL"),
                public_traffic: false,
                addresses: super::remote::addresses_from_env(),
            },
        )
    }

    /// The same account with its ports open to requests without a token.
    #[must_use]
    pub fn public_traffic(mut self, open: bool) -> Self {
        self.options.public_traffic = open;
        self
    }

    fn tokens(&self, id: &str) -> Option<Tokens> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    fn keep_tokens(&self, id: &str, t: Tokens) {
        let mut all = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let kept = all.entry(id.to_owned()).or_default();
        kept.envd = t.envd.or(kept.envd.take());
        kept.traffic = t.traffic.or(kept.traffic.take());
        kept.domain = t.domain.or(kept.domain.take());
    }

    /// Where port `port` of sandbox `id` is: a base URL and the routing
    /// headers it needs.
    fn port_base(
        &self,
        id: &str,
        port: u16,
        domain: Option<&str>,
    ) -> (String, Vec<(&'static str, String)>) {
        let routing =
            vec![("e2b-sandbox-id", id.to_owned()), ("e2b-sandbox-port", port.to_string())];
        if let Some(url) = &self.options.sandbox_url {
            return (url.trim_end_matches('/').to_owned(), routing);
        }
        let domain = domain.unwrap_or(DEFAULT_DOMAIN);
        if SHARED_HOST_DOMAINS.contains(&domain) {
            (format!("https://sandbox.{domain}"), routing)
        } else {
            (direct_url(id, port, domain), Vec::new())
        }
    }

    /// A sandbox's tokens; asked of E2B with a connect that keeps its
    /// timeout when this process has not seen them.
    async fn known_tokens(&self, s: &Sandbox) -> VResult<Tokens> {
        if let Some(t) = self
            .tokens(&s.id)
            .filter(|t| t.envd.is_some() && (t.traffic.is_some() || self.options.public_traffic))
        {
            return Ok(t);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        // Connect only lengthens a running sandbox's timeout: asking for
        // what is left changes nothing.
        let left = s.ends_at.map_or(60, |end| end.saturating_sub(now).max(1));
        let created: Created = self
            .rest
            .json("connect to a sandbox", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/v2/sandboxes/{}/connect", s.id))
                    .json(&json!({ "timeout": left }))
            })
            .await?;
        self.keep_tokens(&s.id, created.tokens());
        Ok(self.tokens(&s.id).unwrap_or_default())
    }
}

/// The host-routed URL of a sandbox port: `https://<port>-<id>.<domain>`.
fn direct_url(id: &str, port: u16, domain: &str) -> String {
    format!("https://{port}-{id}.{domain}")
}

/// E2B's `Sandbox`: what create and connect answer.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Created {
    #[serde(rename = "sandboxID")]
    sandbox_id: String,
    envd_access_token: Option<String>,
    traffic_access_token: Option<String>,
    domain: Option<String>,
}

impl Created {
    fn tokens(&self) -> Tokens {
        Tokens {
            envd: self.envd_access_token.clone(),
            traffic: self.traffic_access_token.clone(),
            domain: self.domain.clone(),
        }
    }
}

/// E2B's `SandboxDetail` and `ListedSandbox`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    #[serde(rename = "sandboxID")]
    sandbox_id: String,
    state: String,
    end_at: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    envd_access_token: Option<String>,
    domain: Option<String>,
}

impl Detail {
    fn sandbox(self) -> Sandbox {
        Sandbox {
            state: match self.state.as_str() {
                "running" => MachineState::Running,
                "paused" => MachineState::Paused,
                _ => MachineState::Gone,
            },
            ends_at: self.end_at.as_deref().and_then(epoch_secs),
            labels: self.metadata,
            id: self.sandbox_id,
        }
    }
}

/// Seconds since the epoch of an RFC 3339 time as E2B writes it.
fn epoch_secs(t: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(t).ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs())
}

/// `key=value` for E2B's metadata filter: each side encoded, the whole
/// encoded again as the query value (which reqwest does).
fn metadata_filter(key: &str, value: &str) -> String {
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!("{}={}", enc(key), enc(value))
}

#[async_trait]
impl Vendor for E2b {
    fn facts(&self) -> &'static VendorFacts {
        &E2B
    }

    fn addresses(&self) -> Addresses {
        self.rest.addresses()
    }

    fn key(&self) -> &Key {
        self.rest.key()
    }

    async fn ping(&self) -> VResult<()> {
        self.rest.ping("/v2/sandboxes").await
    }

    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        template::ensure(&self.rest, recipe, progress).await
    }

    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox> {
        let env: BTreeMap<&str, &str> =
            new.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let body = json!({
            "templateID": new.image,
            "timeout": new.deadline_secs,
            "metadata": new.labels,
            "envVars": env,
            "autoPause": false,
            "allow_internet_access": true,
            "network": { "allowPublicTraffic": self.options.public_traffic },
        });
        let created: Created = self
            .rest
            .json("create a sandbox", Retry::NotTwice, |r| {
                r.request(Method::POST, "/v2/sandboxes").json(&body)
            })
            .await?;
        self.keep_tokens(&created.sandbox_id, created.tokens());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Ok(Sandbox {
            id: created.sandbox_id,
            state: MachineState::Running,
            labels: new.labels.clone(),
            ends_at: Some(now + new.deadline_secs),
        })
    }

    async fn boot(&self, sandbox: &Sandbox, new: &NewSandbox) -> VResult<()> {
        let tokens = self.known_tokens(sandbox).await?;
        let (base, routing) = self.port_base(&sandbox.id, ENVD_PORT, tokens.domain.as_deref());
        self.rest.check_url("start the guest", &base)?;
        let envd = envd::Envd::new(self.rest.client(), &base, routing, tokens.envd.as_deref());
        envd.start_guest(&new.env).await
    }

    async fn get(&self, id: &str) -> VResult<Sandbox> {
        let d: Detail = self
            .rest
            .json("read a sandbox", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/sandboxes/{id}"))
            })
            .await?;
        self.keep_tokens(
            id,
            Tokens { envd: d.envd_access_token.clone(), traffic: None, domain: d.domain.clone() },
        );
        Ok(d.sandbox())
    }

    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>> {
        let filter = metadata_filter(LABEL_RUNTIME, runtime);
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let r = self
                .rest
                .send("list sandboxes", Retry::Idempotent, |r| {
                    let mut q = vec![
                        ("metadata", filter.clone()),
                        ("state", "running,paused".to_owned()),
                        ("limit", "100".to_owned()),
                    ];
                    if let Some(n) = &next {
                        q.push(("nextToken", n.clone()));
                    }
                    r.request(Method::GET, "/v2/sandboxes").query(&q)
                })
                .await?;
            let token =
                r.headers().get("x-next-token").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let page: Vec<Detail> = r.json().await.map_err(|e| {
                VendorError::answer(
                    "e2b",
                    "list sandboxes",
                    format!("its answer is not what holm reads: {e}"),
                )
            })?;
            out.extend(page.into_iter().map(Detail::sandbox));
            match token.filter(|t| !t.is_empty()) {
                Some(t) => next = Some(t),
                None => return Ok(out),
            }
        }
    }

    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()> {
        self.rest
            .send("set a sandbox's timeout", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/sandboxes/{id}/timeout"))
                    .json(&json!({ "timeout": secs }))
            })
            .await
            .map(drop)
    }

    async fn pause(&self, id: &str) -> VResult<()> {
        self.rest
            .send("pause a sandbox", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/sandboxes/{id}/pause"))
                    .json(&json!({ "memory": true }))
            })
            .await
            .map(drop)
    }

    async fn resume(&self, id: &str, secs: u64) -> VResult<()> {
        let created: Created = self
            .rest
            .json("resume a sandbox", Retry::Idempotent, |r| {
                r.request(Method::POST, &format!("/v2/sandboxes/{id}/connect"))
                    .json(&json!({ "timeout": secs }))
            })
            .await?;
        self.keep_tokens(id, created.tokens());
        Ok(())
    }

    async fn delete(&self, id: &str) -> VResult<()> {
        let done = self
            .rest
            .send("kill a sandbox", Retry::Idempotent, |r| {
                r.request(Method::DELETE, &format!("/sandboxes/{id}"))
            })
            .await
            .map(drop);
        self.tokens.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        done
    }

    async fn endpoints(
        &self,
        sandbox: &Sandbox,
        ports: &[u16],
    ) -> VResult<BTreeMap<u16, Endpoint>> {
        let tokens = self.known_tokens(sandbox).await?;
        let domain = tokens.domain.as_deref();
        let mut out = BTreeMap::new();
        for &port in ports {
            let (base, routing) = self.port_base(&sandbox.id, port, domain);
            let bad = |e: crate::runtime::EndpointError| {
                VendorError::answer("e2b", "reach a sandbox port", e.to_string())
            };
            let mut e = Endpoint::new(&base).map_err(bad)?;
            for (name, value) in &routing {
                e = e.with_header(name, value).map_err(bad)?;
            }
            if self.options.public_traffic {
                let direct = direct_url(&sandbox.id, port, domain.unwrap_or(DEFAULT_DOMAIN));
                e = e.with_websockets(WebSockets::Direct { url: direct });
            } else if let Some(t) = &tokens.traffic {
                e = e.with_header(TRAFFIC_TOKEN_HEADER, t).map_err(bad)?;
            }
            out.insert(port, e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_filter_is_encoded_once_here_and_once_in_the_query() {
        assert_eq!(metadata_filter("holm.runtime", "e2b"), "holm.runtime=e2b");
        assert_eq!(metadata_filter("k y", "a&b=c"), "k+y=a%26b%3Dc");
    }

    #[test]
    fn ports_go_through_the_shared_host_with_routing_headers() {
        let e2b = E2b::new("k", Options::default()).unwrap();
        let (base, h) = e2b.port_base("sbx1", 8765, None);
        assert_eq!(base, "https://sandbox.e2b.app");
        assert_eq!(
            h,
            [("e2b-sandbox-id", "sbx1".to_owned()), ("e2b-sandbox-port", "8765".to_owned())]
        );
        let (base, h) = e2b.port_base("sbx1", 8765, Some("custom.example.com"));
        assert_eq!(base, "https://8765-sbx1.custom.example.com");
        assert!(h.is_empty());
        let local = E2b::new(
            "k",
            Options { sandbox_url: Some("http://127.0.0.1:9/".into()), ..Options::default() },
        )
        .unwrap();
        assert_eq!(local.port_base("sbx1", 49983, None).0, "http://127.0.0.1:9");
    }

    #[test]
    fn end_times_read_as_e2b_writes_them() {
        assert_eq!(epoch_secs("1970-01-01T00:01:40Z"), Some(100));
        assert_eq!(epoch_secs("1970-01-01T00:01:40.123456Z"), Some(100));
        assert_eq!(epoch_secs("soon"), None);
    }

    fn sandbox(id: &str) -> Sandbox {
        Sandbox {
            id: id.into(),
            state: MachineState::Running,
            labels: BTreeMap::new(),
            ends_at: None,
        }
    }

    #[tokio::test]
    async fn ports_carry_the_traffic_token_unless_traffic_is_public() {
        let gated = E2b::new("k", Options::default()).unwrap();
        let t =
            Tokens { envd: Some("envd-t".into()), traffic: Some("traffic-t".into()), domain: None };
        gated.keep_tokens("sbx1", t);
        let e = gated.endpoints(&sandbox("sbx1"), &[8765]).await.unwrap();
        let headers: BTreeMap<&str, &str> = e[&8765].headers().collect();
        assert_eq!(headers[TRAFFIC_TOKEN_HEADER], "traffic-t");
        assert_eq!(headers["e2b-sandbox-port"], "8765");
        // A client without headers cannot pass E2B's proxy: holmd goes for it.
        assert_eq!(e[&8765].headerless(&e[&8765].join("/x")), None);

        let open = E2b::new("k", Options { public_traffic: true, ..Options::default() }).unwrap();
        open.keep_tokens(
            "sbx2",
            Tokens { envd: Some("envd-t".into()), traffic: None, domain: None },
        );
        let e = open.endpoints(&sandbox("sbx2"), &[9223]).await.unwrap();
        assert!(e[&9223].headers().all(|(k, _)| k != TRAFFIC_TOKEN_HEADER));
        // Public ports are reached host-routed, with no credential.
        let url = e[&9223].headerless(&e[&9223].join("/t/x/json/version"));
        assert_eq!(url.as_deref(), Some("https://9223-sbx2.e2b.app/t/x/json/version"));
    }

    #[test]
    fn errors_read_e2bs_body() {
        let (code, m) =
            error_body(400, br#"{"code":400,"message":"Timeout cannot be greater than 24 hours"}"#);
        assert_eq!((code, m.as_str()), (None, "Timeout cannot be greater than 24 hours"));
        let (code, _) =
            error_body(500, br#"{"code":500,"message":"x","error_code":"sandbox_create_failed"}"#);
        assert_eq!(code.as_deref(), Some("sandbox_create_failed"));
        assert_eq!(error_body(502, b"<html>").1, "Bad Gateway");
    }
}
