//! [`Client`]: holmd's API.

use futures_util::Stream;
use holm_proto::guest::Page;
use holm_proto::host::{
    AddRuntime, AppInfo, BoxInfo, BoxState, BuildEvent, BuildImage, ChangeRuntime, CreateBox,
    ExtendBox, ForkBox, ImageInfo, PruneImages, PrunedImage, ReplaceRuntime, RuntimeInfo,
    ServerHealth, Trace,
};
use holm_proto::progress::BoxEvent;
use serde::de::DeserializeOwned;

use crate::boxes::{BoxClient, ndjson};
use crate::error::{ClientError, Result, check, transport};

/// The address holmd listens on by default.
pub const DEFAULT_SERVER_URL: &str = "http://127.0.0.1:8080";

/// A client of one holmd.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    token: Option<holm_proto::Secret>,
}

/// Without the HTTP client, whose proxies may carry credentials; the token
/// shows as `<hidden>` ([`holm_proto::Secret`]).
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.url)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of the server at `url` that reaches it directly, ignoring
    /// `HTTP_PROXY` and friends: for a server calling itself on loopback.
    pub fn direct(url: &str, token: Option<&str>) -> Self {
        let mut c = Self::new(url, token);
        c.http = crate::client_builder()
            .no_proxy()
            .tcp_nodelay(true)
            .pool_idle_timeout(std::time::Duration::from_secs(60))
            .build()
            .expect("a TLS provider is installed");
        c
    }

    /// A client of the server at `url` with an optional bearer token.
    pub fn new(url: &str, token: Option<&str>) -> Self {
        Self {
            http: crate::http(),
            url: url.trim_end_matches('/').to_owned(),
            token: token.filter(|t| !t.is_empty()).map(holm_proto::Secret::from),
        }
    }

    /// A client from `HOLM_SERVER_URL` (default `http://127.0.0.1:8080`) and
    /// `HOLM_SERVER_TOKEN`.
    pub fn from_env() -> Self {
        let url = std::env::var("HOLM_SERVER_URL").ok().filter(|u| !u.is_empty());
        let token = std::env::var("HOLM_SERVER_TOKEN").ok();
        Self::new(url.as_deref().unwrap_or(DEFAULT_SERVER_URL), token.as_deref())
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub(crate) fn request(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> (String, reqwest::RequestBuilder) {
        let url = format!("{}{path}", self.url);
        let mut rb = self.http.request(method, &url);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t.expose());
        }
        (url, rb)
    }

    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        url: &str,
        rb: reqwest::RequestBuilder,
    ) -> Result<T> {
        let response = rb.send().await.map_err(transport(url))?;
        let response = check(url, response).await?;
        response
            .json::<T>()
            .await
            .map_err(|e| ClientError::Protocol { url: url.to_owned(), message: e.to_string() })
    }

    /// `GET /v1/health`.
    pub async fn health(&self) -> Result<ServerHealth> {
        let (url, rb) = self.request(reqwest::Method::GET, "/v1/health");
        self.call(&url, rb).await
    }

    /// The runtimes the server offers.
    pub async fn runtimes(&self) -> Result<Vec<RuntimeInfo>> {
        let (url, rb) = self.request(reqwest::Method::GET, "/v1/runtimes");
        Ok(self.call::<Page<RuntimeInfo>>(&url, rb).await?.data)
    }

    /// One runtime.
    pub async fn runtime(&self, name: &str) -> Result<RuntimeInfo> {
        let (url, rb) = self.request(reqwest::Method::GET, &format!("/v1/runtimes/{}", enc(name)));
        self.call(&url, rb).await
    }

    /// Adds a remote runtime. Its key goes in the body, never in the URL.
    pub async fn add_runtime(&self, request: &AddRuntime) -> Result<RuntimeInfo> {
        let (url, rb) = self.request(reqwest::Method::POST, "/v1/runtimes");
        self.call(&url, rb.json(request)).await
    }

    /// Adds or replaces a remote runtime whole.
    pub async fn replace_runtime(
        &self,
        name: &str,
        request: &ReplaceRuntime,
    ) -> Result<RuntimeInfo> {
        let (url, rb) = self.request(reqwest::Method::PUT, &format!("/v1/runtimes/{}", enc(name)));
        self.call(&url, rb.json(request)).await
    }

    /// Changes some fields of a remote runtime, or replaces its key.
    pub async fn change_runtime(&self, name: &str, request: &ChangeRuntime) -> Result<RuntimeInfo> {
        let (url, rb) =
            self.request(reqwest::Method::PATCH, &format!("/v1/runtimes/{}", enc(name)));
        self.call(&url, rb.json(request)).await
    }

    /// Removes a remote runtime.
    pub async fn remove_runtime(&self, name: &str) -> Result<RuntimeInfo> {
        let (url, rb) =
            self.request(reqwest::Method::DELETE, &format!("/v1/runtimes/{}", enc(name)));
        self.call(&url, rb).await
    }

    /// Creates a box; with `wait`, answers once it runs (or failed).
    pub async fn create_box(&self, request: &CreateBox, wait: Option<u64>) -> Result<BoxInfo> {
        let path = match wait {
            Some(secs) => format!("/v1/boxes?wait_for=running&timeout_secs={secs}"),
            None => "/v1/boxes".to_owned(),
        };
        let (url, rb) = self.request(reqwest::Method::POST, &path);
        self.call(&url, rb.json(request)).await
    }

    /// Creates a box with an idempotency key: the same key and body answer the
    /// first result again.
    pub async fn create_box_idempotent(
        &self,
        request: &CreateBox,
        key: &str,
        wait: Option<u64>,
    ) -> Result<BoxInfo> {
        let path = match wait {
            Some(secs) => format!("/v1/boxes?wait_for=running&timeout_secs={secs}"),
            None => "/v1/boxes".to_owned(),
        };
        let (url, rb) = self.request(reqwest::Method::POST, &path);
        self.call(&url, rb.header("idempotency-key", key).json(request)).await
    }

    /// One page of boxes.
    pub async fn list_boxes(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<BoxInfo>> {
        self.list_boxes_with(cursor, limit, false).await
    }

    /// One page of boxes; with `all`, also those a warm pool holds.
    pub async fn list_boxes_with(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
        all: bool,
    ) -> Result<Page<BoxInfo>> {
        let (url, mut rb) = self.request(reqwest::Method::GET, "/v1/boxes");
        if all {
            rb = rb.query(&[("all", "true")]);
        }
        if let Some(c) = cursor {
            rb = rb.query(&[("cursor", c)]);
        }
        if let Some(l) = limit {
            rb = rb.query(&[("limit", l)]);
        }
        self.call(&url, rb).await
    }

    /// Every box, page after page.
    pub async fn all_boxes(&self) -> Result<Vec<BoxInfo>> {
        self.every_box(false).await
    }

    /// Every box, page after page; with `pooled`, also those a warm pool
    /// holds.
    pub async fn every_box(&self, pooled: bool) -> Result<Vec<BoxInfo>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_boxes_with(cursor.as_deref(), Some(100), pooled).await?;
            out.extend(page.data);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// One box; with `wait_for`, answers once it is in that state.
    pub async fn get_box(&self, id: &str, wait_for: Option<(BoxState, u64)>) -> Result<BoxInfo> {
        let (url, mut rb) = self.request(reqwest::Method::GET, &format!("/v1/boxes/{}", enc(id)));
        if let Some((state, secs)) = wait_for {
            rb = rb.query(&[("wait_for", state.as_str()), ("timeout_secs", &secs.to_string())]);
        }
        self.call(&url, rb).await
    }

    /// Removes a box.
    pub async fn remove_box(&self, id: &str) -> Result<BoxInfo> {
        let (url, rb) = self.request(reqwest::Method::DELETE, &format!("/v1/boxes/{}", enc(id)));
        self.call(&url, rb).await
    }

    async fn box_post<T: serde::Serialize + ?Sized>(
        &self,
        id: &str,
        verb: &str,
        query: &str,
        body: Option<&T>,
        idempotency_key: Option<&str>,
    ) -> Result<BoxInfo> {
        let (url, mut rb) =
            self.request(reqwest::Method::POST, &format!("/v1/boxes/{}/{verb}{query}", enc(id)));
        if let Some(b) = body {
            rb = rb.json(b);
        }
        if let Some(k) = idempotency_key {
            rb = rb.header("idempotency-key", k);
        }
        self.call(&url, rb).await
    }

    /// Stops a box, keeping its files.
    pub async fn stop_box(&self, id: &str) -> Result<BoxInfo> {
        self.box_post::<()>(id, "stop", "", None, None).await
    }

    /// Starts a stopped box: a new desktop on new ports; with `wait`,
    /// answers once it runs.
    pub async fn start_box(&self, id: &str, wait: Option<u64>) -> Result<BoxInfo> {
        let query = wait.map(|s| format!("?wait_for=running&timeout_secs={s}")).unwrap_or_default();
        self.box_post::<()>(id, "start", &query, None, None).await
    }

    /// Pauses a box, keeping its memory.
    pub async fn pause_box(&self, id: &str) -> Result<BoxInfo> {
        self.box_post::<()>(id, "pause", "", None, None).await
    }

    /// Resumes a paused box.
    pub async fn resume_box(&self, id: &str) -> Result<BoxInfo> {
        self.box_post::<()>(id, "resume", "", None, None).await
    }

    /// Forks a box: a new box with a copy of its files. With `wait`, answers
    /// once the copy runs; with a key, a repeated call answers the same copy.
    pub async fn fork_box(
        &self,
        id: &str,
        request: &ForkBox,
        idempotency_key: Option<&str>,
        wait: Option<u64>,
    ) -> Result<BoxInfo> {
        let query = wait.map(|s| format!("?wait_for=running&timeout_secs={s}")).unwrap_or_default();
        self.box_post(id, "fork", &query, Some(request), idempotency_key).await
    }

    /// Moves the end of a box's lifetime `by_secs` later.
    pub async fn extend_box(&self, id: &str, by_secs: u64) -> Result<BoxInfo> {
        self.box_post(id, "extend", "", Some(&ExtendBox { by_secs }), None).await
    }

    /// One page of a box's traces, oldest first.
    pub async fn traces(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Trace>> {
        let (url, mut rb) =
            self.request(reqwest::Method::GET, &format!("/v1/boxes/{}/traces", enc(id)));
        if let Some(c) = cursor {
            rb = rb.query(&[("cursor", c)]);
        }
        if let Some(l) = limit {
            rb = rb.query(&[("limit", l)]);
        }
        self.call(&url, rb).await
    }

    /// Every trace of a box, page after page.
    pub async fn all_traces(&self, id: &str) -> Result<Vec<Trace>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.traces(id, cursor.as_deref(), Some(1000)).await?;
            out.extend(page.data);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// A client of one box's desktop, commands and files, through this server.
    pub fn boxed(&self, id: &str) -> BoxClient {
        BoxClient::with_base(
            self.http.clone(),
            format!("{}/v1/boxes/{}", self.url, enc(id)),
            self.token.clone(),
        )
    }

    /// The progress of a box's latest making or start: its stages so far,
    /// then each as it comes, until it runs, fails, or `timeout_secs` pass;
    /// the last event is the box as it is then.
    pub async fn progress(
        &self,
        id: &str,
        timeout_secs: u64,
    ) -> Result<impl Stream<Item = Result<BoxEvent>> + use<>> {
        let (url, rb) = self.request(
            reqwest::Method::GET,
            &format!("/v1/boxes/{}/progress?timeout_secs={timeout_secs}", enc(id)),
        );
        let response = rb.send().await.map_err(transport(&url))?;
        let response = check(&url, response).await?;
        Ok(ndjson(url, response))
    }

    /// Builds an image and streams the build's progress.
    pub async fn build_image(
        &self,
        request: &BuildImage,
    ) -> Result<impl Stream<Item = Result<BuildEvent>> + use<>> {
        let (url, rb) = self.request(reqwest::Method::POST, "/v1/images/build");
        let response = rb.json(request).send().await.map_err(transport(&url))?;
        let response = check(&url, response).await?;
        Ok(ndjson(url, response))
    }

    /// Makes the air-gapped base image on a runtime's engine if it is missing.
    pub async fn make_base(
        &self,
        runtime: Option<&str>,
    ) -> Result<impl Stream<Item = Result<BuildEvent>> + use<>> {
        let (url, rb) = self.request(reqwest::Method::POST, "/v1/images/base");
        let body = BuildImage { runtime: runtime.map(str::to_owned), ..BuildImage::default() };
        let response = rb.json(&body).send().await.map_err(transport(&url))?;
        let response = check(&url, response).await?;
        Ok(ndjson(url, response))
    }

    /// Removes box images no box uses (see [`PruneImages`]).
    pub async fn prune_images(&self, request: &PruneImages) -> Result<Vec<PrunedImage>> {
        let (url, rb) = self.request(reqwest::Method::POST, "/v1/images/prune");
        Ok(self.call::<Page<PrunedImage>>(&url, rb.json(request)).await?.data)
    }

    /// The images holm built.
    pub async fn images(&self) -> Result<Vec<ImageInfo>> {
        let (url, rb) = self.request(reqwest::Method::GET, "/v1/images");
        Ok(self.call::<Page<ImageInfo>>(&url, rb).await?.data)
    }

    /// The app catalogue.
    pub async fn apps(&self) -> Result<Vec<AppInfo>> {
        let (url, rb) = self.request(reqwest::Method::GET, "/v1/apps");
        Ok(self.call::<Page<AppInfo>>(&url, rb).await?.data)
    }
}

pub(crate) fn enc(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}
