//! [`BoxClient`]: one box's desktop, commands, processes and files.

use bytes::Bytes;
use futures_util::{Stream, StreamExt, TryStreamExt};
use holm_proto::contract::server::ServerCall;
use holm_proto::contract::{self, Body, Call, GuestRoute};
use holm_proto::guest::{
    Action, Button, CommandEvent, CommandRequest, CommandResult, CursorPosition, FileInfo,
    FileStat, Health, Info, InputRequest, InputResult, ListQuery, MkdirRequest, OutputEvent,
    OutputPage, OutputQuery, PathQuery, ProcessInfo, ProcessStart, Region, RemoveRequest,
    RenameRequest, Screen, ScreenshotMeta, ScreenshotOptions, SignalName, SignalRequest,
    StdinQuery, WriteQuery, headers,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::endpoint::Endpoint;
use crate::error::{ClientError, Result, check, transport};
use crate::route;

/// The type of a raw body: the web edge refuses a body without one.
const OCTET_STREAM: &str = "application/octet-stream";

/// A screenshot: the raw image and what its headers said.
#[derive(Debug, Clone)]
pub struct Screenshot {
    /// The encoded image.
    pub bytes: Bytes,
    /// Format, size, scale, region and frame hash.
    pub meta: ScreenshotMeta,
    /// The pointer position, when the server said.
    pub cursor: Option<(i32, i32)>,
    /// After input with `settle`: whether the screen stopped changing in time.
    pub settled: Option<bool>,
}

/// Drives one box, through holmd or straight against its guest.
#[derive(Clone)]
pub struct BoxClient {
    http: reqwest::Client,
    /// The API prefix: `http://HOST:PORT/v1` for a guest, or
    /// `http://SERVER/v1/boxes/ID` through holmd.
    base: String,
    /// The guest's root URL, for `/health` (guest only).
    root: Option<String>,
    token: Option<holm_proto::Secret>,
    /// The guest's endpoint, whose headers every request carries (guest
    /// clients made with [`BoxClient::at`]).
    endpoint: Option<Endpoint>,
}

/// Without the HTTP client, whose proxies may carry credentials; the token
/// shows as `<hidden>` ([`holm_proto::Secret`]).
impl std::fmt::Debug for BoxClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxClient")
            .field("base", &self.base)
            .field("token", &self.token)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl BoxClient {
    /// A client straight against a guest at `url` (such as
    /// `http://127.0.0.1:49153`) with the box's secret.
    pub fn guest(url: &str, secret: &str) -> Self {
        let root = url.trim_end_matches('/').to_owned();
        Self {
            http: crate::http(),
            base: format!("{root}/v1"),
            root: Some(root),
            token: Some(secret.into()),
            endpoint: None,
        }
    }

    /// A client straight against a guest at the endpoint its runtime
    /// answered (its URL and the headers its proxy needs), with the box's
    /// secret.
    /// A public-only endpoint ([`Endpoint::public_only`]) is reached only at
    /// public addresses, checked on each connection.
    pub fn at(endpoint: &Endpoint, secret: &str) -> Self {
        let guest = Self::guest(endpoint.url(), secret);
        let http = match endpoint.addresses() {
            crate::address::Addresses::Any => guest.http.clone(),
            public => crate::http_for(public),
        };
        Self { endpoint: Some(endpoint.clone()), http, ..guest }
    }

    /// The same client with another secret: the same HTTP client and its
    /// open connections, such as for a guest whose secret was just replaced
    /// ([`BoxClient::set_box_secret`]).
    #[must_use]
    pub fn with_secret(&self, secret: &str) -> Self {
        Self { token: Some(secret.into()), ..self.clone() }
    }

    /// A client whose routes start at `base`, with a bearer token.
    pub(crate) fn with_base(
        http: reqwest::Client,
        base: String,
        token: Option<holm_proto::Secret>,
    ) -> Self {
        Self { http, base, root: None, token, endpoint: None }
    }

    /// Adds the endpoint's headers, when the client has an endpoint.
    fn through_endpoint(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.endpoint {
            Some(e) => e.apply(rb),
            None => rb,
        }
    }

    /// The API prefix this client calls.
    pub fn base(&self) -> &str {
        &self.base
    }

    pub(crate) fn request(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> (String, reqwest::RequestBuilder) {
        let url = format!("{}{path}", self.base);
        let mut rb = self.through_endpoint(self.http.request(method, &url));
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t.expose());
        }
        (url, rb)
    }

    pub(crate) async fn send(
        &self,
        url: &str,
        rb: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response> {
        let response = rb.send().await.map_err(transport(url))?;
        check(url, response).await
    }

    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        url: &str,
        rb: reqwest::RequestBuilder,
    ) -> Result<T> {
        let response = self.send(url, rb).await?;
        response
            .json::<T>()
            .await
            .map_err(|e| ClientError::Protocol { url: url.to_owned(), message: e.to_string() })
    }

    /// The request of guest route `route` (a record of
    /// [`holm_proto::contract::GUEST_ROUTES`]), its `{name}` parameters
    /// filled with `params` in order: the one place a guest path is made.
    pub(crate) fn open(
        &self,
        route: &GuestRoute,
        params: &[&str],
    ) -> Result<(String, reqwest::RequestBuilder)> {
        let path = route::fill("", route.path.trim_start_matches("/v1"), route.method, params)?;
        Ok(self.request(route::method(route.method), &path))
    }

    /// Calls `call`, a typed guest route of the contract
    /// ([`holm_proto::contract`]), with `params` filling its `{name}`
    /// parameters in order and `body` as its JSON body (`&()` for none):
    /// the method, path and types are the ones the guest serves and holmd
    /// forwards and documents, spelled once.
    pub async fn call<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        call: &Call<Req, Resp>,
        params: &[&str],
        body: &Req,
    ) -> Result<Resp> {
        self.call_with(call, params, &(), body).await
    }

    /// [`Self::call`] of a route that takes query parameters, the fields of
    /// `query`.
    pub async fn call_with<Q: Serialize, Req: Serialize, Resp: DeserializeOwned>(
        &self,
        call: &Call<Req, Resp, Q>,
        params: &[&str],
        query: &Q,
        body: &Req,
    ) -> Result<Resp> {
        let route = &call.route;
        let (url, mut rb) = self.open(route, params)?;
        if route.op.query.is_some() {
            rb = rb.query(query);
        }
        if matches!(route.op.body, Body::Json(_)) {
            rb = rb.json(body);
        }
        let response = self.send(&url, rb).await?;
        route::read(&url, route.op.answer, response).await
    }

    /// Calls `call`, a route of holmd's own under `/v1/boxes/{id}`, for
    /// this box (through holmd only), with `params` filling its parameters
    /// after `{id}`, `query` and `body` as [`Self::call`] takes them.
    pub(crate) async fn call_own<Q: Serialize, Req: Serialize, Resp: DeserializeOwned>(
        &self,
        call: &ServerCall<Q, Req, Resp>,
        params: &[&str],
        query: &Q,
        body: &Req,
    ) -> Result<Resp> {
        let r = &call.route;
        let rest = r.path.strip_prefix("/v1/boxes/{id}").ok_or_else(|| ClientError::Protocol {
            url: self.base.clone(),
            message: format!("{} {} is not a route of a box", r.method, r.path),
        })?;
        let path = route::fill("", rest, r.method, params)?;
        let (url, mut rb) = self.request(route::method(r.method), &path);
        if r.op.query.is_some() {
            rb = rb.query(query);
        }
        if matches!(r.op.body, Body::Json(_)) {
            rb = rb.json(body);
        }
        let response = self.send(&url, rb).await?;
        route::read(&url, r.op.answer, response).await
    }

    /// The guest's health, without a credential (guest clients only).
    pub async fn health(&self) -> Result<Health> {
        let root = self.root.as_deref().ok_or_else(|| ClientError::Protocol {
            url: self.base.clone(),
            message: "health is asked of a guest; through holmd, get the box".into(),
        })?;
        let url = format!("{root}{}", contract::HEALTH.route.path);
        let rb = self.through_endpoint(self.http.get(&url));
        self.json(&url, rb).await
    }

    /// Version, screens and capabilities.
    pub async fn info(&self) -> Result<Info> {
        self.call(&contract::INFO, &[], &()).await
    }

    /// The screens.
    pub async fn screens(&self) -> Result<Vec<Screen>> {
        Ok(self.call(&contract::SCREENS, &[], &()).await?.data)
    }

    /// Where the pointer is on `screen`.
    pub async fn cursor(&self, screen: u8) -> Result<CursorPosition> {
        self.call(&contract::CURSOR, &[&screen.to_string()], &()).await
    }

    /// A screenshot of `screen`.
    pub async fn screenshot(&self, screen: u8, options: &ScreenshotOptions) -> Result<Screenshot> {
        let (url, rb) = self.open(&contract::SCREENSHOT, &[&screen.to_string()])?;
        let response = self.send(&url, rb.query(&screenshot_query(options))).await?;
        read_screenshot(&url, response).await
    }

    /// Runs input actions on `screen`.
    pub async fn input(&self, screen: u8, request: &InputRequest) -> Result<InputResult> {
        let mut request = request.clone();
        request.screenshot = None;
        let (url, rb) = self.open(&contract::INPUT, &[&screen.to_string()])?;
        self.json(&url, rb.json(&request)).await
    }

    /// Runs input actions, waits as asked, and answers the screenshot after
    /// them: act-then-see in one call.
    pub async fn act_and_see(&self, screen: u8, request: &InputRequest) -> Result<Screenshot> {
        let mut request = request.clone();
        request.screenshot.get_or_insert_with(ScreenshotOptions::default);
        let (url, rb) = self.open(&contract::INPUT, &[&screen.to_string()])?;
        let response = self.send(&url, rb.json(&request)).await?;
        read_screenshot(&url, response).await
    }

    /// Clicks at a point of `screen` with the left button.
    pub async fn click(&self, screen: u8, x: i32, y: i32) -> Result<InputResult> {
        self.actions(
            screen,
            vec![Action::Click {
                x: Some(x),
                y: Some(y),
                button: Button::Left,
                count: 1,
                modifiers: vec![],
            }],
        )
        .await
    }

    /// Types text on `screen`.
    pub async fn type_text(&self, screen: u8, text: &str) -> Result<InputResult> {
        self.actions(screen, vec![Action::Type { text: text.to_owned() }]).await
    }

    /// Presses a key or chord, such as `ctrl+l`, on `screen`.
    pub async fn key(&self, screen: u8, chord: &str) -> Result<InputResult> {
        self.actions(screen, vec![Action::Key { key: chord.to_owned(), repeat: 1 }]).await
    }

    /// Runs `actions` on `screen`.
    pub async fn actions(&self, screen: u8, actions: Vec<Action>) -> Result<InputResult> {
        self.input(screen, &InputRequest { actions, ..InputRequest::default() }).await
    }

    /// Runs a command and waits for it.
    pub async fn run(&self, request: &CommandRequest) -> Result<CommandResult> {
        self.call(&contract::RUN, &[], request).await
    }

    /// Runs `argv` without a shell and waits for it.
    pub async fn exec(&self, argv: &[&str]) -> Result<CommandResult> {
        self.run(&CommandRequest {
            argv: Some(argv.iter().map(|s| (*s).to_owned()).collect()),
            ..CommandRequest::default()
        })
        .await
    }

    /// Runs a command and streams its events as they happen.
    pub async fn stream(
        &self,
        request: &CommandRequest,
    ) -> Result<impl Stream<Item = Result<CommandEvent>> + use<>> {
        let (url, rb) = self.open(&contract::COMMAND_STREAM, &[])?;
        let response = self.send(&url, rb.json(request)).await?;
        Ok(ndjson(url, response))
    }

    /// Starts a background process.
    pub async fn start_process(&self, request: &ProcessStart) -> Result<ProcessInfo> {
        self.call(&contract::SPAWN, &[], request).await
    }

    /// The background processes.
    pub async fn processes(&self) -> Result<Vec<ProcessInfo>> {
        Ok(self.call(&contract::PROCESSES, &[], &()).await?.data)
    }

    /// One background process.
    pub async fn process(&self, id: &str) -> Result<ProcessInfo> {
        self.call(&contract::PROCESS, &[id], &()).await
    }

    /// The output events after `cursor`, waiting up to `wait_ms` for a first one.
    pub async fn output(&self, id: &str, cursor: u64, wait_ms: u64) -> Result<OutputPage> {
        let query = OutputQuery { cursor: Some(cursor), wait_ms: Some(wait_ms), follow: None };
        let (url, rb) = self.open(&contract::OUTPUT, &[id])?;
        self.json(&url, rb.query(&query)).await
    }

    /// Follows a process's output from `cursor` until it ends.
    pub async fn follow(
        &self,
        id: &str,
        cursor: u64,
    ) -> Result<impl Stream<Item = Result<OutputEvent>> + use<>> {
        let query = OutputQuery { cursor: Some(cursor), follow: Some(true), wait_ms: None };
        let (url, rb) = self.open(&contract::OUTPUT, &[id])?;
        let response = self.send(&url, rb.query(&query)).await?;
        Ok(ndjson(url, response))
    }

    /// Writes to a process's standard input (bytes, or a stream as it
    /// comes), and closes it with `eof`.
    pub async fn write_stdin(
        &self,
        id: &str,
        data: impl Into<reqwest::Body>,
        eof: bool,
    ) -> Result<()> {
        let (url, rb) = self.open(&contract::STDIN, &[id])?;
        let rb = rb.query(&StdinQuery { eof: Some(eof) });
        self.send(&url, rb.header(reqwest::header::CONTENT_TYPE, OCTET_STREAM).body(data.into()))
            .await
            .map(drop)
    }

    /// Sends a signal, such as `TERM`, to a process.
    pub async fn signal(&self, id: &str, signal: &str) -> Result<()> {
        let body = SignalRequest { signal: SignalName::Name(signal.to_owned()) };
        self.call(&contract::SIGNAL, &[id], &body).await
    }

    /// Reads a whole file.
    pub async fn read_file(&self, path: &str) -> Result<Bytes> {
        let (url, response) = self.read_file_response(path).await?;
        response.bytes().await.map_err(transport(&url))
    }

    /// Reads a file as a stream of chunks.
    pub async fn read_file_stream(
        &self,
        path: &str,
    ) -> Result<impl Stream<Item = Result<Bytes>> + use<>> {
        let (url, response) = self.read_file_response(path).await?;
        Ok(response
            .bytes_stream()
            .map_err(move |source| ClientError::Transport { url: url.clone(), source }))
    }

    async fn read_file_response(&self, path: &str) -> Result<(String, reqwest::Response)> {
        let (url, rb) = self.open(&contract::READ_FILE, &[])?;
        let response = self.send(&url, rb.query(&PathQuery { path: path.to_owned() })).await?;
        Ok((url, response))
    }

    /// Writes a file (atomically, making parents); `mode` in octal such as `"755"`.
    pub async fn write_file(
        &self,
        path: &str,
        body: impl Into<reqwest::Body>,
        mode: Option<&str>,
    ) -> Result<FileInfo> {
        let (url, rb) = self.open(&contract::WRITE_FILE, &[])?;
        let query = WriteQuery { path: path.to_owned(), mode: mode.map(str::to_owned) };
        self.json(
            &url,
            rb.query(&query).header(reqwest::header::CONTENT_TYPE, OCTET_STREAM).body(body),
        )
        .await
    }

    /// Lists a directory, `depth` levels down.
    pub async fn list(&self, path: &str, depth: u32) -> Result<Vec<FileInfo>> {
        let query = ListQuery { path: path.to_owned(), depth: Some(depth), ..ListQuery::default() };
        Ok(self.call_with(&contract::LIST, &[], &query, &()).await?.data)
    }

    /// Describes a path, or says it does not exist.
    pub async fn stat(&self, path: &str) -> Result<FileStat> {
        self.call_with(&contract::STAT, &[], &PathQuery { path: path.to_owned() }, &()).await
    }

    /// Makes a directory and its parents.
    pub async fn mkdir(&self, path: &str) -> Result<FileInfo> {
        self.call(&contract::MKDIR, &[], &MkdirRequest { path: path.to_owned(), parents: true })
            .await
    }

    /// Removes a path; `recursive` for a directory with contents.
    pub async fn remove(&self, path: &str, recursive: bool) -> Result<()> {
        let body = RemoveRequest { path: path.to_owned(), recursive };
        self.call(&contract::REMOVE, &[], &body).await
    }

    /// Renames a path.
    pub async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<FileInfo> {
        let body = RenameRequest { from: from.to_owned(), to: to.to_owned(), overwrite };
        self.call(&contract::RENAME, &[], &body).await
    }
}

fn screenshot_query(o: &ScreenshotOptions) -> Vec<(&'static str, String)> {
    let mut q = Vec::new();
    if let Some(f) = o.format {
        q.push(("format", f.extension().replace("jpg", "jpeg")));
    }
    if let Some(v) = o.quality {
        q.push(("quality", v.to_string()));
    }
    if let Some(r) = o.region {
        q.push(("region", r.to_string()));
    }
    if let Some(v) = o.max_width {
        q.push(("max_width", v.to_string()));
    }
    if let Some(v) = o.max_height {
        q.push(("max_height", v.to_string()));
    }
    if let Some(v) = o.scale {
        q.push(("scale", v.to_string()));
    }
    if let Some(v) = o.cursor {
        q.push(("cursor", v.to_string()));
    }
    q
}

async fn read_screenshot(url: &str, response: reqwest::Response) -> Result<Screenshot> {
    let h = response.headers().clone();
    let text = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let protocol = |message: String| ClientError::Protocol { url: url.to_owned(), message };
    let format = match text("content-type").as_deref() {
        Some("image/png") => holm_proto::guest::ImageFormat::Png,
        Some("image/jpeg") => holm_proto::guest::ImageFormat::Jpeg,
        Some("image/webp") => holm_proto::guest::ImageFormat::Webp,
        other => return Err(protocol(format!("not an image: content-type {other:?}"))),
    };
    let num = |name: &str| -> Result<u32> {
        text(name)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| protocol(format!("missing header {name}")))
    };
    let width = num(headers::WIDTH)?;
    let height = num(headers::HEIGHT)?;
    let scale = text(headers::SCALE).and_then(|v| v.parse::<f64>().ok()).unwrap_or(1.0);
    let region = text(headers::REGION).and_then(|v| v.parse::<Region>().ok()).unwrap_or(Region {
        x: 0,
        y: 0,
        width,
        height,
    });
    let frame = text("etag").map(|v| v.trim_matches('"').to_owned()).unwrap_or_default();
    let cursor = text(headers::CURSOR).and_then(|v| {
        let (x, y) = v.split_once(',')?;
        Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
    });
    let settled = text(headers::SETTLED).map(|v| v == "true");
    let bytes = response.bytes().await.map_err(transport(url))?;
    Ok(Screenshot {
        bytes,
        meta: ScreenshotMeta { format, width, height, scale, region, frame },
        cursor,
        settled,
    })
}

/// Reads an NDJSON response as a stream of values.
pub(crate) fn ndjson<T: DeserializeOwned + Send + 'static>(
    url: String,
    response: reqwest::Response,
) -> impl Stream<Item = Result<T>> + Send + use<T> {
    let bytes = response.bytes_stream();
    futures_util::stream::unfold(
        (bytes, Vec::<u8>::new(), url, false),
        |(mut bytes, mut buf, url, done)| async move {
            if done {
                return None;
            }
            loop {
                if let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let line = &line[..line.len() - 1];
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let item = serde_json::from_slice::<T>(line).map_err(|e| {
                        ClientError::Protocol { url: url.clone(), message: e.to_string() }
                    });
                    return Some((item, (bytes, buf, url, false)));
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
                    Some(Err(source)) => {
                        let err = ClientError::Transport { url: url.clone(), source };
                        return Some((Err(err), (bytes, buf, url, true)));
                    }
                    None if buf.iter().all(u8::is_ascii_whitespace) => return None,
                    None => {
                        let item = serde_json::from_slice::<T>(&buf).map_err(|e| {
                            ClientError::Protocol { url: url.clone(), message: e.to_string() }
                        });
                        return Some((item, (bytes, Vec::new(), url, true)));
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use holm_proto::guest::TabQuery;
    use holm_proto::viewer::EventsQuery;

    use super::*;

    /// The URL of guest route `route` with `params` and the query `q`.
    fn url_of<Q: Serialize>(route: &GuestRoute, params: &[&str], q: &Q) -> String {
        let guest = BoxClient::guest("http://h:1", "s");
        let (_, rb) = guest.open(route, params).unwrap();
        rb.query(q).build().unwrap().url().to_string()
    }

    #[test]
    fn guest_paths_come_from_their_records_and_queries_from_their_types() {
        let output = OutputQuery { cursor: Some(5), wait_ms: Some(100), follow: None };
        assert_eq!(
            url_of(&contract::OUTPUT, &["p 1"], &output),
            "http://h:1/v1/processes/p+1/output?cursor=5&wait_ms=100"
        );
        let follow = OutputQuery { cursor: Some(0), follow: Some(true), wait_ms: None };
        assert!(url_of(&contract::OUTPUT, &["p"], &follow).ends_with("?cursor=0&follow=true"));
        let eof = StdinQuery { eof: Some(true) };
        assert!(url_of(&contract::STDIN, &["p"], &eof).ends_with("/processes/p/stdin?eof=true"));
        let list = ListQuery { path: "/tmp".into(), depth: Some(2), ..ListQuery::default() };
        assert!(
            url_of(&contract::LIST.route, &[], &list).ends_with("/files/list?path=%2Ftmp&depth=2")
        );
        let write = WriteQuery { path: "/a".into(), mode: None };
        assert!(url_of(&contract::WRITE_FILE, &[], &write).ends_with("/files/content?path=%2Fa"));
        let events = EventsQuery { after: Some(3), timeout_secs: Some(0) };
        let events = url_of(&contract::VIEWER_EVENTS.route, &[], &events);
        assert!(events.ends_with("/viewers/events?after=3&timeout_secs=0"), "{events}");
        let current = url_of(&contract::PAGE_TEXT.route, &[], &TabQuery { tab: None });
        assert_eq!(current, "http://h:1/v1/browser/text");
        let shot = url_of(
            &contract::SCREENSHOT,
            &["1"],
            &screenshot_query(&ScreenshotOptions {
                region: Some(Region { x: 1, y: 2, width: 3, height: 4 }),
                ..ScreenshotOptions::default()
            }),
        );
        assert_eq!(shot, "http://h:1/v1/screens/1/screenshot?region=1%2C2%2C3%2C4");
        let missing = BoxClient::guest("http://h:1", "s").open(&contract::CLOSE_TAB.route, &[]);
        assert!(missing.unwrap_err().to_string().contains("no value for {tab}"));
    }
}
