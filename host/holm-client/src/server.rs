//! [`Client`]: holmd's API, each route called through one generic call
//! ([`Client::call`], or [`Client::open`] for a stream, a page or an image)
//! with its record from [`holm_proto::contract::server`].

use futures_util::Stream;
use holm_proto::contract::Body;
use holm_proto::contract::server::{self, ServerCall};
use holm_proto::guest::Page;
use holm_proto::host::{
    AddRuntime, AppInfo, BoxInfo, BoxState, BuildEvent, BuildImage, ChangeRuntime, CreateBox,
    ExtendBox, ForkBox, ImageInfo, ListBoxes, PruneImages, PrunedImage, ReplaceRuntime,
    RuntimeInfo, ServerHealth, Trace, TracesQuery, WaitQuery,
};
use holm_proto::progress::{BoxEvent, ProgressQuery};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::boxes::{BoxClient, ndjson};
use crate::error::{Result, check, transport};
use crate::route;

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

    /// Calls `call`, a route of holmd's own
    /// ([`holm_proto::contract::server`]), with `params` filling its
    /// `{name}` parameters in order, `query` as its query (when it takes
    /// one) and `body` as its JSON body (when it takes one; `&()` for
    /// none): the method, path and types are the ones holmd serves and
    /// documents, spelled once.
    pub async fn call<Q: Serialize, Req: Serialize, Resp: DeserializeOwned>(
        &self,
        call: &ServerCall<Q, Req, Resp>,
        params: &[&str],
        query: &Q,
        body: &Req,
    ) -> Result<Resp> {
        let (url, rb) = self.prepare(call, params, query, body)?;
        self.answer(call, &url, rb).await
    }

    /// [`Self::call`] for a route whose answer is not one JSON value (an
    /// NDJSON stream, an HTML page or an image): the checked response.
    pub async fn open<Q: Serialize, Req: Serialize, Resp>(
        &self,
        call: &ServerCall<Q, Req, Resp>,
        params: &[&str],
        query: &Q,
        body: &Req,
    ) -> Result<(String, reqwest::Response)> {
        let (url, rb) = self.prepare(call, params, query, body)?;
        let response = rb.send().await.map_err(transport(&url))?;
        Ok((url.clone(), check(&url, response).await?))
    }

    /// The request of `call`, its token and its parameters, query and body
    /// as the record says; the URL is the one errors name.
    fn prepare<Q: Serialize, Req: Serialize, Resp>(
        &self,
        call: &ServerCall<Q, Req, Resp>,
        params: &[&str],
        query: &Q,
        body: &Req,
    ) -> Result<(String, reqwest::RequestBuilder)> {
        let r = &call.route;
        let url = route::fill(&self.url, r.path, r.method, params)?;
        let mut rb = self.http.request(route::method(r.method), &url);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t.expose());
        }
        if r.op.query.is_some() {
            rb = rb.query(query);
        }
        if matches!(r.op.body, Body::Json(_)) {
            rb = rb.json(body);
        }
        Ok((url, rb))
    }

    /// Sends `rb`, a request of `call`, and reads its answer.
    async fn answer<Q, Req, Resp: DeserializeOwned>(
        &self,
        call: &ServerCall<Q, Req, Resp>,
        url: &str,
        rb: reqwest::RequestBuilder,
    ) -> Result<Resp> {
        let response = rb.send().await.map_err(transport(url))?;
        let response = check(url, response).await?;
        route::read(url, call.route.op.answer, response).await
    }

    /// `GET /v1/health`.
    pub async fn health(&self) -> Result<ServerHealth> {
        self.call(&server::HEALTH, &[], &(), &()).await
    }

    /// The runtimes the server offers.
    pub async fn runtimes(&self) -> Result<Vec<RuntimeInfo>> {
        Ok(self.call(&server::RUNTIMES, &[], &(), &()).await?.data)
    }

    /// One runtime.
    pub async fn runtime(&self, name: &str) -> Result<RuntimeInfo> {
        self.call(&server::RUNTIME, &[name], &(), &()).await
    }

    /// Adds a remote runtime. Its key goes in the body, never in the URL.
    pub async fn add_runtime(&self, request: &AddRuntime) -> Result<RuntimeInfo> {
        self.call(&server::ADD_RUNTIME, &[], &(), request).await
    }

    /// Adds or replaces a remote runtime whole.
    pub async fn replace_runtime(
        &self,
        name: &str,
        request: &ReplaceRuntime,
    ) -> Result<RuntimeInfo> {
        self.call(&server::REPLACE_RUNTIME, &[name], &(), request).await
    }

    /// Changes some fields of a remote runtime, or replaces its key.
    pub async fn change_runtime(&self, name: &str, request: &ChangeRuntime) -> Result<RuntimeInfo> {
        self.call(&server::CHANGE_RUNTIME, &[name], &(), request).await
    }

    /// Removes a remote runtime.
    pub async fn remove_runtime(&self, name: &str) -> Result<RuntimeInfo> {
        self.call(&server::REMOVE_RUNTIME, &[name], &(), &()).await
    }

    /// Creates a box; with `wait`, answers once it runs (or failed).
    pub async fn create_box(&self, request: &CreateBox, wait: Option<u64>) -> Result<BoxInfo> {
        self.call(&server::CREATE_BOX, &[], &running_within(wait), request).await
    }

    /// Creates a box with an idempotency key: the same key and body answer the
    /// first result again.
    pub async fn create_box_idempotent(
        &self,
        request: &CreateBox,
        key: &str,
        wait: Option<u64>,
    ) -> Result<BoxInfo> {
        let call = &server::CREATE_BOX;
        let (url, rb) = self.prepare(call, &[], &running_within(wait), request)?;
        self.answer(call, &url, rb.header(IDEMPOTENCY_KEY, key)).await
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
        let query = ListBoxes {
            cursor: cursor.map(str::to_owned),
            limit,
            state: None,
            all: all.then_some(true),
        };
        self.call(&server::BOXES, &[], &query, &()).await
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
        let query = WaitQuery {
            wait_for: wait_for.map(|(state, _)| state),
            timeout_secs: wait_for.map(|(_, secs)| secs),
        };
        self.call(&server::BOX, &[id], &query, &()).await
    }

    /// Removes a box.
    pub async fn remove_box(&self, id: &str) -> Result<BoxInfo> {
        self.call(&server::REMOVE_BOX, &[id], &(), &()).await
    }

    /// Stops a box, keeping its files.
    pub async fn stop_box(&self, id: &str) -> Result<BoxInfo> {
        self.call(&server::STOP_BOX, &[id], &(), &()).await
    }

    /// Starts a stopped box: a new desktop on new ports; with `wait`,
    /// answers once it runs.
    pub async fn start_box(&self, id: &str, wait: Option<u64>) -> Result<BoxInfo> {
        self.call(&server::START_BOX, &[id], &running_within(wait), &()).await
    }

    /// Pauses a box, keeping its memory.
    pub async fn pause_box(&self, id: &str) -> Result<BoxInfo> {
        self.call(&server::PAUSE_BOX, &[id], &(), &()).await
    }

    /// Resumes a paused box.
    pub async fn resume_box(&self, id: &str) -> Result<BoxInfo> {
        self.call(&server::RESUME_BOX, &[id], &(), &()).await
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
        let call = &server::FORK_BOX;
        let (url, mut rb) = self.prepare(call, &[id], &running_within(wait), request)?;
        if let Some(k) = idempotency_key {
            rb = rb.header(IDEMPOTENCY_KEY, k);
        }
        self.answer(call, &url, rb).await
    }

    /// Moves the end of a box's lifetime `by_secs` later.
    pub async fn extend_box(&self, id: &str, by_secs: u64) -> Result<BoxInfo> {
        self.call(&server::EXTEND_BOX, &[id], &(), &ExtendBox { by_secs }).await
    }

    /// One page of a box's traces, oldest first.
    pub async fn traces(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Trace>> {
        let query = TracesQuery { cursor: cursor.map(str::to_owned), limit };
        self.call(&server::TRACES, &[id], &query, &()).await
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

    /// A client of one box's desktop, commands and files, through this
    /// server: the guest's forwarded routes, under `/v1/boxes/{id}`.
    pub fn boxed(&self, id: &str) -> BoxClient {
        BoxClient::with_base(
            self.http.clone(),
            format!("{}/v1/boxes/{}", self.url, route::enc(id)),
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
        let query = ProgressQuery { timeout_secs: Some(timeout_secs) };
        let (url, response) = self.open(&server::PROGRESS, &[id], &query, &()).await?;
        Ok(ndjson(url, response))
    }

    /// Builds an image and streams the build's progress.
    pub async fn build_image(
        &self,
        request: &BuildImage,
    ) -> Result<impl Stream<Item = Result<BuildEvent>> + use<>> {
        let (url, response) = self.open(&server::BUILD_IMAGE, &[], &(), request).await?;
        Ok(ndjson(url, response))
    }

    /// Makes the air-gapped base image on a runtime's engine if it is missing.
    pub async fn make_base(
        &self,
        runtime: Option<&str>,
    ) -> Result<impl Stream<Item = Result<BuildEvent>> + use<>> {
        let body = BuildImage { runtime: runtime.map(str::to_owned), ..BuildImage::default() };
        let (url, response) = self.open(&server::BASE_IMAGE, &[], &(), &body).await?;
        Ok(ndjson(url, response))
    }

    /// Removes box images no box uses (see [`PruneImages`]).
    pub async fn prune_images(&self, request: &PruneImages) -> Result<Vec<PrunedImage>> {
        Ok(self.call(&server::PRUNE_IMAGES, &[], &(), request).await?.data)
    }

    /// The images holm built.
    pub async fn images(&self) -> Result<Vec<ImageInfo>> {
        Ok(self.call(&server::IMAGES, &[], &(), &()).await?.data)
    }

    /// The app catalogue.
    pub async fn apps(&self) -> Result<Vec<AppInfo>> {
        Ok(self.call(&server::APPS, &[], &(), &()).await?.data)
    }
}

/// The header that makes a create or fork idempotent.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The query that waits up to `secs` for a box to run, when asked.
fn running_within(secs: Option<u64>) -> WaitQuery {
    WaitQuery { wait_for: secs.map(|_| BoxState::Running), timeout_secs: secs }
}

#[cfg(test)]
mod tests {
    use holm_proto::viewer::{HandoffState, HandoffWait};

    use super::*;

    /// The query `q` puts on a URL.
    fn query_of<Q: Serialize>(q: &Q) -> String {
        let http = crate::client_builder().build().unwrap();
        let request = http.get("http://h/v1/boxes").query(q).build().unwrap();
        request.url().query().unwrap_or_default().to_owned()
    }

    #[test]
    fn typed_queries_are_the_ones_the_paths_spelled() {
        assert_eq!(query_of(&running_within(Some(30))), "wait_for=running&timeout_secs=30");
        assert_eq!(query_of(&running_within(None)), "");
        let list = ListBoxes { cursor: Some("c".into()), limit: Some(100), state: None, all: None };
        assert_eq!(query_of(&list), "cursor=c&limit=100");
        let pooled = ListBoxes { all: Some(true), ..ListBoxes::default() };
        assert_eq!(query_of(&pooled), "all=true");
        let wait = WaitQuery { wait_for: Some(BoxState::Stopped), timeout_secs: Some(5) };
        assert_eq!(query_of(&wait), "wait_for=stopped&timeout_secs=5");
        let handoff =
            HandoffWait { wait_for: Some(HandoffState::HandedBack), timeout_secs: Some(9) };
        assert_eq!(query_of(&handoff), "wait_for=handed_back&timeout_secs=9");
        assert_eq!(query_of(&ProgressQuery { timeout_secs: Some(7) }), "timeout_secs=7");
        let export =
            holm_proto::timeline::ExportQuery { format: holm_proto::timeline::ExportFormat::Jsonl };
        assert_eq!(query_of(&export), "format=jsonl");
    }
}
