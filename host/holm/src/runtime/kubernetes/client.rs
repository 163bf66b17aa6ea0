//! [`KubeClient`]: as much of a cluster's REST API as the runtime calls
//! (create, read, merge-patch, delete and list by label selector the
//! objects of one namespace, read a namespace, watch an object), on `reqwest` with rustls,
//! trusting and proving what the [`ClusterConfig`] says. A refusal is the
//! API's `Status` (`{"kind":"Status","reason":…,"message":…,"code":…}`).

use serde_json::{Value, json};

use super::config::{Bearer, ClusterConfig};
use super::exec::ExecToken;
use super::watch::{Lines, WatchEvent};

/// How long a watch may stay open before the server ends it (what
/// `kubectl` and kube-rs ask for).
const WATCH_TIMEOUT_SECS: &str = "290";

/// The API's answer to a request it refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The HTTP status (`404`, `409`, `410`…).
    pub code: u16,
    /// Its reason (`NotFound`, `AlreadyExists`, `Expired`…).
    pub reason: String,
    /// What the API server says.
    pub message: String,
}

impl Status {
    /// The `Status` object `v` (what is missing is empty).
    pub fn from_value(v: &Value) -> Self {
        Self {
            code: v["code"].as_u64().and_then(|c| u16::try_from(c).ok()).unwrap_or_default(),
            reason: v["reason"].as_str().unwrap_or_default().to_owned(),
            message: v["message"].as_str().unwrap_or_default().to_owned(),
        }
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// The API answered with a refusal.
    Api(Status),
    /// The API did not answer (or answered what is not the API's).
    Transport(String),
}

impl ApiError {
    /// Whether the object is not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Api(s) if s.code == 404)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Api(s) => write!(f, "{} ({}, {})", s.message, s.reason, s.code),
            Self::Transport(e) => f.write_str(e),
        }
    }
}

type Result<T> = std::result::Result<T, ApiError>;

fn transport(e: reqwest::Error) -> ApiError {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    ApiError::Transport(text)
}

/// A kind of object, by where the API serves it: its group's path
/// (`api/v1` for the core group, `apis/GROUP/VERSION` for the others) and
/// its plural name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// `api/v1`, or `apis/GROUP/VERSION`.
    pub api: &'static str,
    /// The plural name (`pods`).
    pub plural: &'static str,
}

const CORE: &str = "api/v1";
const EXTENSIONS: &str = "apis/extensions.agents.x-k8s.io/v1beta1";
const AGENTS: &str = "apis/agents.x-k8s.io/v1beta1";

/// Pods.
pub const PODS: Resource = Resource { api: CORE, plural: "pods" };
/// Secrets.
pub const SECRETS: Resource = Resource { api: CORE, plural: "secrets" };
/// Services.
pub const SERVICES: Resource = Resource { api: CORE, plural: "services" };
/// agent-sandbox's SandboxTemplates.
pub const SANDBOX_TEMPLATES: Resource = Resource { api: EXTENSIONS, plural: "sandboxtemplates" };
/// agent-sandbox's SandboxWarmPools.
pub const SANDBOX_WARM_POOLS: Resource = Resource { api: EXTENSIONS, plural: "sandboxwarmpools" };
/// agent-sandbox's SandboxClaims.
pub const SANDBOX_CLAIMS: Resource = Resource { api: EXTENSIONS, plural: "sandboxclaims" };
/// agent-sandbox's Sandboxes (a claim's box).
pub const SANDBOXES: Resource = Resource { api: AGENTS, plural: "sandboxes" };

/// The API group that holds agent-sandbox's claims, pools and templates
/// (answered when agent-sandbox is installed).
pub const EXTENSIONS_API: &str = EXTENSIONS;

/// `s` as one path segment: every byte but unreserved ones percent-encoded
/// (a name from a caller cannot reach another path).
fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A client of one cluster's API. Its `Debug` shows no token.
pub struct KubeClient {
    http: reqwest::Client,
    server: String,
    bearer: Bearer,
    exec: Option<ExecToken>,
}

impl std::fmt::Debug for KubeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeClient")
            .field("server", &self.server)
            .field("bearer", &!matches!(self.bearer, Bearer::None))
            .finish_non_exhaustive()
    }
}

impl KubeClient {
    /// A client of the cluster `config` describes.
    pub fn new(config: &ClusterConfig) -> std::result::Result<Self, String> {
        // As kube-rs: 30 s to connect, no read timeout (a watch is long),
        // no proxy from the environment (a kubeconfig's `proxy-url` is
        // refused by name).
        let mut builder = holm_client::client_builder()
            .connect_timeout(std::time::Duration::from_secs(30))
            .no_proxy();
        if let Some(ca) = &config.ca {
            let certs = reqwest::Certificate::from_pem_bundle(ca)
                .map_err(|e| format!("the certificate authority is not PEM: {e}"))?;
            builder = builder.tls_certs_only(certs);
        }
        if config.insecure {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        if let Some(pem) = &config.identity {
            // The error would not name the key, but say less anyway.
            let identity = reqwest::Identity::from_pem(pem)
                .map_err(|_| "the client certificate or key is not PEM".to_owned())?;
            builder = builder.identity(identity);
        }
        let http = builder.build().map_err(|e| transport(e).to_string())?;
        let exec = match &config.bearer {
            Bearer::Exec(plugin) => Some(ExecToken::new(plugin.clone())),
            _ => None,
        };
        Ok(Self { http, server: config.server.clone(), bearer: config.bearer.clone(), exec })
    }

    /// The URL of the `resource` (plural: `pods`) of namespace `ns`,
    /// and of its object `name` if one is given.
    /// `.` and `..` (which a URL resolves away) are no object's name: not
    /// found, as the API would say.
    fn url(&self, ns: &str, resource: Resource, name: Option<&str>) -> Result<String> {
        let Resource { api, plural } = resource;
        let mut url = format!("{}/{api}/namespaces/{}/{plural}", self.server, segment(ns));
        if let Some(name) = name {
            if matches!(name, "" | "." | "..") {
                return Err(ApiError::Api(Status {
                    code: 404,
                    reason: "NotFound".to_owned(),
                    message: format!("{plural} \"{name}\" not found"),
                }));
            }
            url.push('/');
            url.push_str(&segment(name));
        }
        Ok(url)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let request = match &self.bearer {
            Bearer::None => request,
            Bearer::Token(t) => request.bearer_auth(t),
            Bearer::File(path) => {
                let token = tokio::fs::read_to_string(path).await.map_err(|e| {
                    ApiError::Transport(format!("the token file {}: {e}", path.display()))
                })?;
                request.bearer_auth(token.trim())
            }
            Bearer::Exec(_) => match &self.exec {
                Some(exec) => request.bearer_auth(exec.get().await.map_err(ApiError::Transport)?),
                None => request,
            },
        };
        let response = request.send().await.map_err(transport)?;
        let code = response.status();
        if code.is_success() {
            return Ok(response);
        }
        if code == reqwest::StatusCode::UNAUTHORIZED
            && let Some(exec) = &self.exec
        {
            // The next request asks the plugin again.
            exec.forget().await;
        }
        let body = response.bytes().await.map_err(transport)?;
        let status = match serde_json::from_slice::<Value>(&body) {
            Ok(v) if v["kind"] == "Status" => Status::from_value(&v),
            _ => Status {
                code: code.as_u16(),
                reason: code.canonical_reason().unwrap_or_default().to_owned(),
                message: String::from_utf8_lossy(&body[..body.len().min(512)]).into_owned(),
            },
        };
        Err(ApiError::Api(Status { code: code.as_u16(), ..status }))
    }

    async fn json(&self, request: reqwest::RequestBuilder) -> Result<Value> {
        let response = self.send(request).await?;
        let body = response.bytes().await.map_err(transport)?;
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::Transport(format!("the API's answer is not JSON: {e}")))
    }

    /// Creates `object` among the `resource` of `ns`.
    pub async fn create(&self, ns: &str, resource: Resource, object: &Value) -> Result<Value> {
        self.json(self.http.post(self.url(ns, resource, None)?).json(object)).await
    }

    /// The object `name`, or none if there is no such object.
    pub async fn get(&self, ns: &str, resource: Resource, name: &str) -> Result<Option<Value>> {
        match self.json(self.http.get(self.url(ns, resource, Some(name))?)).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The namespace `name`, or none if there is no such namespace.
    pub async fn namespace(&self, name: &str) -> Result<Option<Value>> {
        // A namespace's name is a DNS label (the settings check it).
        let url = format!("{}/api/v1/namespaces/{}", self.server, segment(name));
        match self.json(self.http.get(url)).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the API serves the group path `api` (`apis/GROUP/VERSION`):
    /// false when it answers that there is no such path.
    pub async fn serves(&self, api: &str) -> Result<bool> {
        match self.json(self.http.get(format!("{}/{api}", self.server))).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Changes the object `name` by the JSON merge patch `patch` (RFC 7386).
    pub async fn patch(
        &self,
        ns: &str,
        resource: Resource,
        name: &str,
        patch: &Value,
    ) -> Result<Value> {
        let request = self
            .http
            .patch(self.url(ns, resource, Some(name))?)
            .header(reqwest::header::CONTENT_TYPE, "application/merge-patch+json")
            .body(patch.to_string());
        self.json(request).await
    }

    /// Deletes the object `name` (gracefully: it may linger a while).
    pub async fn delete(&self, ns: &str, resource: Resource, name: &str) -> Result<()> {
        let request = self.http.delete(self.url(ns, resource, Some(name))?).json(&json!({}));
        self.json(request).await.map(drop)
    }

    /// The objects whose labels match `selector`.
    pub async fn list(&self, ns: &str, resource: Resource, selector: &str) -> Result<Vec<Value>> {
        let request =
            self.http.get(self.url(ns, resource, None)?).query(&[("labelSelector", selector)]);
        let mut list = self.json(request).await?;
        match list["items"].take() {
            Value::Array(items) => Ok(items),
            Value::Null => Ok(Vec::new()),
            _ => Err(ApiError::Transport("a list whose items are not a list".to_owned())),
        }
    }

    /// Watches the object `name` from the resource version `version`
    /// (`0`: its state now comes first, as `ADDED`).
    pub async fn watch(
        &self,
        ns: &str,
        resource: Resource,
        name: &str,
        version: &str,
    ) -> Result<Watch> {
        let field = format!("metadata.name={name}");
        let request = self.http.get(self.url(ns, resource, None)?).query(&[
            ("watch", "true"),
            ("timeoutSeconds", WATCH_TIMEOUT_SECS),
            ("fieldSelector", &field),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", version),
        ]);
        let response = self.send(request).await?;
        Ok(Watch { response, lines: Lines::default(), ended: false })
    }
}

/// An open watch.
#[derive(Debug)]
pub struct Watch {
    response: reqwest::Response,
    lines: Lines,
    ended: bool,
}

impl Watch {
    /// The next event, or none once the server ended the watch.
    pub async fn next(&mut self) -> Result<Option<WatchEvent>> {
        loop {
            let line = if self.ended { self.lines.rest() } else { self.lines.next_line() };
            if let Some(line) = line {
                return WatchEvent::parse(&line).map(Some).map_err(ApiError::Transport);
            }
            if self.ended {
                return Ok(None);
            }
            match self.response.chunk().await.map_err(transport)? {
                Some(chunk) => self.lines.push(&chunk),
                None => self.ended = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_one_path_segment_and_debug_hides_the_token() {
        assert_eq!(segment("holm-box-1"), "holm-box-1");
        assert_eq!(segment("../x?y=1"), "..%2Fx%3Fy%3D1");
        let config = ClusterConfig {
            server: "https://127.0.0.1:6443".into(),
            ca: None,
            insecure: false,
            identity: None,
            bearer: Bearer::Token("s3cr3t-t0ken".into()),
        };
        let client = KubeClient::new(&config).unwrap();
        let text = format!("{client:?} {config:?}");
        assert!(!text.contains("s3cr3t-t0ken"), "{text}");
        assert!(text.contains("127.0.0.1:6443"), "{text}");
    }
}
