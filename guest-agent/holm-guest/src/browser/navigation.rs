//! Loading a URL in a tab and waiting for the lifecycle event asked for;
//! moving through a tab's history (back, forward, the same page again) and
//! waiting for the page it lands on.

use super::*;

/// Whether `e` is the lifecycle event `name` of navigation `loader`.
pub(super) fn is_lifecycle(e: &Event, loader: &str, name: &str) -> bool {
    e.method == "Page.lifecycleEvent" && e.params["loaderId"] == loader && e.params["name"] == name
}

/// Navigates a tab and waits as asked. With `fulfil`, document requests
/// paused by `Fetch` are answered with an empty page, so an origin can be
/// opened without fetching anything.
pub(super) async fn navigate(
    page: &Cdp,
    url: &str,
    wait: WaitUntil,
    timeout_ms: u64,
    fulfil: bool,
) -> Result<(), ApiError> {
    let mut events = page.events();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
    let timed_out = || {
        ApiError::new(ErrorCode::Timeout, format!("{url} did not load in {timeout_ms} ms"))
            .with_hint(
                "wait_until=dom_content_loaded or commit answers earlier; timeout_ms waits longer",
            )
            .with_details(json!({ "url": url, "timeout_ms": timeout_ms }))
    };
    let nav = page.call_timeout(
        "Page.navigate",
        json!({"url": url}),
        Duration::from_millis(timeout_ms) + SLACK,
    );
    tokio::pin!(nav);
    let mut seen: Vec<Arc<Event>> = Vec::new();
    // Until Page.navigate answers, serve paused requests and keep the events.
    let answer = loop {
        tokio::select! {
            r = &mut nav => break r.map_err(cdp_error)?,
            e = events.recv() => match e {
                Ok(e) => {
                    if fulfil && e.method == "Fetch.requestPaused" {
                        fulfil_request(page, &e).await?;
                    } else {
                        seen.push(e);
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return Err(cdp_error(CdpError::Closed)),
            },
            () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
        }
    };
    if let Some(err) = answer["errorText"].as_str().filter(|e| !e.is_empty()) {
        return Err(ApiError::new(ErrorCode::PageError, format!("loading {url} failed: {err}"))
            .with_details(json!({ "url": url, "error": err })));
    }
    // A same-document navigation (a #fragment) has no loader and no load.
    let Some(loader) = answer["loaderId"].as_str() else { return Ok(()) };
    let name = match wait {
        WaitUntil::Commit => return Ok(()),
        WaitUntil::Load => "load",
        WaitUntil::DomContentLoaded => "DOMContentLoaded",
    };
    if seen.iter().any(|e| is_lifecycle(e, loader, name)) {
        return Ok(());
    }
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Ok(e) if is_lifecycle(&e, loader, name) => return Ok(()),
                Ok(e) if fulfil && e.method == "Fetch.requestPaused" => fulfil_request(page, &e).await?,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return Err(cdp_error(CdpError::Closed)),
            },
            () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
        }
    }
}

pub(super) async fn fulfil_request(page: &Cdp, e: &Event) -> Result<(), ApiError> {
    let Some(id) = e.params["requestId"].as_str() else { return Ok(()) };
    let body = base64::engine::general_purpose::STANDARD.encode("<!doctype html><title></title>");
    page.call(
        "Fetch.fulfillRequest",
        json!({"requestId": id, "responseCode": 200,
               "responseHeaders": [{"name": "Content-Type", "value": "text/html"}], "body": body}),
    )
    .await
    .map_err(cdp_error)?;
    Ok(())
}

/// A move through a tab's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    Back,
    Forward,
    Reload,
}

impl Move {
    fn name(self) -> &'static str {
        match self {
            Self::Back => "back",
            Self::Forward => "forward",
            Self::Reload => "reload",
        }
    }
}

impl Browser {
    /// Goes back one page in a tab's history and waits for it to load.
    pub async fn back(&self, tab: Option<&str>) -> Result<PageResult, ApiError> {
        self.history(tab, Move::Back).await
    }

    /// Goes forward one page in a tab's history and waits for it to load.
    pub async fn forward(&self, tab: Option<&str>) -> Result<PageResult, ApiError> {
        self.history(tab, Move::Forward).await
    }

    /// Loads a tab's page again and waits for it to load.
    pub async fn reload(&self, tab: Option<&str>) -> Result<PageResult, ApiError> {
        self.history(tab, Move::Reload).await
    }

    async fn history(&self, tab: Option<&str>, to: Move) -> Result<PageResult, ApiError> {
        let since = Since::now();
        let id = self.resolve(tab).await?;
        let page = self.page(&id).await?;
        go(&page, &id, to, NAV_TIMEOUT_MS).await?;
        self.set_current(&id);
        self.result(id, since).await
    }
}

/// Moves tab `tab` (`page`) through its history and waits until the page
/// it lands on has loaded: a new document's `load`; at once for a move
/// within one document (a `#fragment`, `history.pushState`) or a page
/// restored whole from the back-forward cache, which has loaded already.
async fn go(page: &Cdp, tab: &str, to: Move, timeout_ms: u64) -> Result<(), ApiError> {
    let mut events = page.events();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
    let what = to.name();
    let timed_out = || {
        ApiError::new(
            ErrorCode::Timeout,
            format!("tab {tab} did not load in {timeout_ms} ms ({what})"),
        )
        .with_details(json!({ "tab": tab, "timeout_ms": timeout_ms }))
    };
    let call = Duration::from_millis(timeout_ms) + SLACK;
    if to == Move::Reload {
        page.call_timeout("Page.reload", json!({}), call).await.map_err(cdp_error)?;
    } else {
        let history = page.call("Page.getNavigationHistory", json!({})).await.map_err(cdp_error)?;
        let step = if to == Move::Back { -1 } else { 1 };
        let entry = history["currentIndex"]
            .as_i64()
            .and_then(|i| usize::try_from(i + step).ok())
            .and_then(|i| history["entries"].get(i))
            .and_then(|e| e["id"].as_i64());
        let Some(entry) = entry else {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("tab {tab} has no page to go {what} to"),
            )
            .with_details(json!({ "tab": tab })));
        };
        page.call_timeout("Page.navigateToHistoryEntry", json!({"entryId": entry}), call)
            .await
            .map_err(cdp_error)?;
    }
    // The main frame's id is the tab's; its new document's loader is known
    // once it commits (`frameNavigated`), and `load` follows that.
    let mut loader: Option<String> = None;
    loop {
        tokio::select! {
            e = events.recv() => match e {
                Ok(e) if e.method == "Page.frameNavigated" && e.params["frame"]["parentId"].is_null() => {
                    if e.params["type"] == "BackForwardCacheRestore" {
                        return Ok(());
                    }
                    loader = e.params["frame"]["loaderId"].as_str().map(str::to_owned);
                }
                Ok(e) if loader.is_none() && e.method == "Page.navigatedWithinDocument" && e.params["frameId"] == tab => {
                    return Ok(());
                }
                Ok(e) if loader.as_deref().is_some_and(|l| is_lifecycle(&e, l, "load")) => return Ok(()),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return Err(cdp_error(CdpError::Closed)),
            },
            () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
        }
    }
}
