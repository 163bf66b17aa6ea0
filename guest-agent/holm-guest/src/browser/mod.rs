//! Page tools: screen 0's Chromium driven over DevTools, on loopback.
//!
//! One [`Cdp`] connection to the browser (tabs, cookies) and one per tab
//! (`/devtools/page/<id>`), made on first use and kept; a closed one is made
//! again, so a Chromium restart costs one failed call at most. Element work
//! runs as one script in the page that waits for the element itself (so a
//! wait is one round trip), then real input goes through `Input.*`: a click
//! is a mouse press and release at the element's centre, typing is key events.
//!
//! Tools act on the tab named by `tab`, else the current tab: the last one
//! opened, activated or navigated, else the first page Chromium lists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use holm_proto::guest::{
    Button, ClickRequest, Cookie, ElementState, EvaluateRequest, EvaluateResult, FillRequest,
    LoadStateResult, NavigateRequest, OpenTab, OriginState, PageContent, PageImageFormat,
    PageResult, PageScreenshotOptions, PressRequest, SameSite, StorageItem, StorageState, Tab,
    TypeRequest, WaitRequest, WaitUntil,
};
use holm_proto::keys::{self, page::PageKey};
use holm_proto::{ApiError, ErrorCode, ErrorDetails, Issue};
use serde_json::{Value, json};

use crate::cdp::{Cdp, CdpError, Event};

mod actions;
mod navigation;
pub mod process;
mod state;

use actions::*;
use navigation::*;

/// The default wait for an element.
const ELEMENT_TIMEOUT_MS: u64 = 5_000;
/// The longest wait for an element.
const MAX_ELEMENT_TIMEOUT_MS: u64 = 60_000;
/// The default wait for a navigation or a script.
const NAV_TIMEOUT_MS: u64 = 30_000;
/// The longest wait for a navigation or a script.
const MAX_NAV_TIMEOUT_MS: u64 = 120_000;
/// Time added to a CDP call beyond the wait the page itself does.
const SLACK: Duration = Duration::from_secs(5);

/// Screen 0's browser.
pub struct Browser {
    port: u16,
    enabled: bool,
    browser: tokio::sync::Mutex<Option<Arc<Cdp>>>,
    pages: Mutex<HashMap<String, Arc<Cdp>>>,
    current: Mutex<Option<String>>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser").field("port", &self.port).field("enabled", &self.enabled).finish()
    }
}

/// A browser error in the one shape.
fn cdp_error(e: CdpError) -> ApiError {
    match e {
        CdpError::Connect(_) | CdpError::Closed => {
            tracing::info!(error = %e, "DevTools not answering");
            ApiError::new(
                ErrorCode::NotReady,
                "the browser is not answering: Chromium is starting (a box made with \
                 ready: desktop runs before it) or restarting",
            )
            .with_kind(ErrorDetails::BrowserStarting { retry_after_ms: 250 })
        }
        CdpError::Timeout { method } => ApiError::new(
            ErrorCode::Timeout,
            format!("the browser did not answer {method} in time"),
        ),
        CdpError::Protocol { method, code, message } => {
            ApiError::new(ErrorCode::PageError, format!("the browser refused {method}: {message}"))
                .with_details(json!({ "method": method, "code": code, "message": message }))
        }
    }
}

fn bounded(value: Option<u64>, default: u64, max: u64, path: &str) -> Result<u64, ApiError> {
    let v = value.unwrap_or(default);
    if v > max {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: path.into(),
            problem: format!("must be at most {max}, not {v}"),
        }]));
    }
    Ok(v)
}

fn js(v: impl serde::Serialize) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| "null".into())
}

impl Browser {
    /// The browser whose DevTools listen on loopback `port`; `enabled` says
    /// whether the box runs one.
    pub fn new(port: u16, enabled: bool) -> Arc<Self> {
        Arc::new(Self {
            port,
            enabled,
            browser: tokio::sync::Mutex::new(None),
            pages: Mutex::new(HashMap::new()),
            current: Mutex::new(None),
        })
    }

    fn check_enabled(&self) -> Result<(), ApiError> {
        if self.enabled {
            Ok(())
        } else {
            Err(ApiError::new(ErrorCode::NotReady, "this box runs no browser")
                .with_kind(ErrorDetails::NoBrowser))
        }
    }

    /// The browser-wide connection.
    async fn browser(&self) -> Result<Arc<Cdp>, ApiError> {
        self.check_enabled()?;
        let mut slot = self.browser.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(c));
        }
        let (status, _, body) =
            crate::cdp::devtools_http(self.port, http::Method::GET, "/json/version")
                .await
                .map_err(cdp_error)?;
        let url = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["webSocketDebuggerUrl"].as_str().map(str::to_owned))
            .filter(|_| status.is_success())
            .ok_or_else(|| cdp_error(CdpError::Connect("no browser address".into())))?;
        let c = Cdp::connect(&url).await.map_err(cdp_error)?;
        // Target events let a close wait until the tab is really gone.
        c.call("Target.setDiscoverTargets", json!({"discover": true})).await.map_err(cdp_error)?;
        *slot = Some(Arc::clone(&c));
        Ok(c)
    }

    /// A connection to one tab, with page events and lifecycle events on.
    async fn page(&self, id: &str) -> Result<Arc<Cdp>, ApiError> {
        let cached = self.pages.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        if let Some(c) = cached.filter(|c| !c.is_closed()) {
            return Ok(c);
        }
        let c = Cdp::connect(&format!("ws://127.0.0.1:{}/devtools/page/{id}", self.port))
            .await
            .map_err(|e| match e {
                CdpError::Connect(_) => no_tab(id),
                other => cdp_error(other),
            })?;
        c.call("Page.enable", json!({})).await.map_err(cdp_error)?;
        c.call("Page.setLifecycleEventsEnabled", json!({"enabled": true}))
            .await
            .map_err(cdp_error)?;
        let mut pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.retain(|_, c| !c.is_closed());
        pages.insert(id.to_owned(), Arc::clone(&c));
        Ok(c)
    }

    fn set_current(&self, id: &str) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.to_owned());
    }

    /// Asks Chromium to quit the way a person would (`Browser.close`), which
    /// writes its cookies and storage to the profile: SIGTERM does not, and
    /// Chromium keeps cookies in memory for up to 30 seconds. Answers whether
    /// Chromium took the request.
    pub async fn close_gracefully(&self) -> bool {
        if !self.enabled {
            return false;
        }
        let Ok(Ok(b)) = tokio::time::timeout(Duration::from_secs(2), self.browser()).await else {
            return false;
        };
        // The connection closing is the usual answer: Chromium is gone.
        matches!(
            b.call_timeout("Browser.close", json!({}), Duration::from_secs(3)).await,
            Ok(_) | Err(CdpError::Closed)
        )
    }

    /// The tabs, in Chromium's order.
    pub async fn tabs(&self) -> Result<Vec<Tab>, ApiError> {
        let b = self.browser().await?;
        let r = b.call("Target.getTargets", json!({})).await.map_err(cdp_error)?;
        let mut tabs: Vec<Tab> = r["targetInfos"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|t| t["type"] == "page")
            .filter_map(|t| {
                Some(Tab {
                    id: t["targetId"].as_str()?.to_owned(),
                    url: t["url"].as_str().unwrap_or_default().to_owned(),
                    title: t["title"].as_str().unwrap_or_default().to_owned(),
                    current: false,
                })
            })
            .collect();
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let index = current.and_then(|c| tabs.iter().position(|t| t.id == c)).unwrap_or(0);
        if let Some(t) = tabs.get_mut(index) {
            t.current = true;
        }
        Ok(tabs)
    }

    /// The tab a tool acts on: `tab`, else the current one; a box whose tabs
    /// were all closed gets a new blank one.
    async fn resolve(&self, tab: Option<&str>) -> Result<String, ApiError> {
        let tabs = self.tabs().await?;
        if let Some(id) = tab {
            return if tabs.iter().any(|t| t.id == id) {
                Ok(id.to_owned())
            } else {
                Err(no_tab(id).with_kind(ErrorDetails::NoSuchTab {
                    tab: id.to_owned(),
                    tabs: Some(tabs.iter().map(|t| t.id.clone()).collect()),
                }))
            };
        }
        match tabs.into_iter().find(|t| t.current) {
            Some(t) => Ok(t.id),
            None => Ok(self.create_blank(false).await?),
        }
    }

    async fn create_blank(&self, background: bool) -> Result<String, ApiError> {
        let b = self.browser().await?;
        let r = b
            .call("Target.createTarget", json!({"url": "about:blank", "background": background}))
            .await
            .map_err(cdp_error)?;
        r["targetId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| cdp_error(CdpError::Connect("Target.createTarget gave no id".into())))
    }

    /// Opens a tab, makes it current, and loads `url` in it.
    pub async fn open(&self, req: &OpenTab) -> Result<Tab, ApiError> {
        let since = Since::now();
        let timeout = bounded(req.timeout_ms, NAV_TIMEOUT_MS, MAX_NAV_TIMEOUT_MS, "timeout_ms")?;
        let id = self.create_blank(false).await?;
        self.set_current(&id);
        if let Some(url) = req.url.as_deref().filter(|u| *u != "about:blank") {
            let page = self.page(&id).await?;
            navigate(&page, url, req.wait_until.unwrap_or_default(), timeout, false).await?;
        }
        let (url, title) = self.location(&id, since).await?;
        Ok(Tab { id, url, title, current: true })
    }

    /// Closes a tab. The last tab is replaced by a blank one first, because
    /// Chromium quits when its last tab closes.
    pub async fn close(&self, id: &str) -> Result<(), ApiError> {
        let tabs = self.tabs().await?;
        if !tabs.iter().any(|t| t.id == id) {
            return Err(no_tab(id));
        }
        if tabs.len() == 1 {
            let blank = self.create_blank(false).await?;
            self.set_current(&blank);
        }
        let b = self.browser().await?;
        let mut events = b.events();
        b.call("Target.closeTarget", json!({"targetId": id})).await.map_err(cdp_error)?;
        // closeTarget answers before the tab is gone; wait for it, so a list
        // right after no longer shows it.
        let gone = async {
            loop {
                match events.recv().await {
                    Ok(e) if e.method == "Target.targetDestroyed" && e.params["targetId"] == id => {
                        return;
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), gone).await.is_err() {
            tracing::info!(tab = id, "a closed tab was still listed after 5 s");
        }
        if let Some(c) = self.pages.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            c.close();
        }
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if current.as_deref() == Some(id) {
            *current = None;
        }
        Ok(())
    }

    /// Brings a tab to the front and makes it current.
    pub async fn activate(&self, id: &str) -> Result<(), ApiError> {
        let id = self.resolve(Some(id)).await?;
        let b = self.browser().await?;
        b.call("Target.activateTarget", json!({"targetId": id})).await.map_err(cdp_error)?;
        self.set_current(&id);
        Ok(())
    }

    /// The tab's URL and title, answered once what the tool (begun at
    /// `since`) did is on the screen ([`Since::after_a_frame`]), so a
    /// screenshot taken next shows it.
    async fn location(&self, id: &str, since: Since) -> Result<(String, String), ApiError> {
        let page = self.page(id).await?;
        let v = evaluate_value(&page, &since.after_a_frame(), 10_000).await?;
        Ok((
            v["url"].as_str().unwrap_or_default().to_owned(),
            v["title"].as_str().unwrap_or_default().to_owned(),
        ))
    }

    async fn result(&self, id: String, since: Since) -> Result<PageResult, ApiError> {
        let (url, title) = self.location(&id, since).await?;
        Ok(PageResult { tab: id, url, title })
    }

    /// Loads a URL and waits as asked.
    pub async fn navigate(&self, req: &NavigateRequest) -> Result<PageResult, ApiError> {
        let since = Since::now();
        let timeout = bounded(req.timeout_ms, NAV_TIMEOUT_MS, MAX_NAV_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        navigate(&page, &req.url, req.wait_until.unwrap_or_default(), timeout, false).await?;
        self.set_current(&id);
        self.result(id, since).await
    }

    /// A screenshot of a tab, which is brought to the front first: Chromium
    /// does not paint a tab in the background.
    pub async fn screenshot(
        &self,
        opts: &PageScreenshotOptions,
    ) -> Result<(PageImageFormat, Vec<u8>), ApiError> {
        let format = opts.format.unwrap_or_default();
        if let Some(q) = opts.quality
            && !(1..=100).contains(&q)
        {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "quality".into(),
                problem: format!("must be 1 to 100, not {q}"),
            }]));
        }
        let id = self.resolve(opts.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        page.call("Page.bringToFront", json!({})).await.map_err(cdp_error)?;
        let mut params = json!({
            "format": match format { PageImageFormat::Png => "png", PageImageFormat::Jpeg => "jpeg" },
        });
        if format == PageImageFormat::Jpeg {
            params["quality"] = json!(opts.quality.unwrap_or(80));
        }
        if opts.full_page == Some(true) {
            let m = page.call("Page.getLayoutMetrics", json!({})).await.map_err(cdp_error)?;
            let size = if m["cssContentSize"].is_object() {
                &m["cssContentSize"]
            } else {
                &m["contentSize"]
            };
            let (w, h) =
                (size["width"].as_f64().unwrap_or(0.0), size["height"].as_f64().unwrap_or(0.0));
            params["captureBeyondViewport"] = json!(true);
            params["clip"] = json!({"x": 0, "y": 0, "width": w.ceil().max(1.0), "height": h.ceil().max(1.0), "scale": 1});
        }
        let r = page
            .call_timeout("Page.captureScreenshot", params, Duration::from_secs(60))
            .await
            .map_err(cdp_error)?;
        let data = r["data"].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| cdp_error(CdpError::Connect(format!("screenshot data: {e}"))))?;
        self.set_current(&id);
        Ok((format, bytes))
    }

    /// The text a person sees, or the HTML.
    pub async fn content(&self, tab: Option<&str>, html: bool) -> Result<PageContent, ApiError> {
        let id = self.resolve(tab).await?;
        let page = self.page(&id).await?;
        let content = if html {
            "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '') + (document.documentElement ? document.documentElement.outerHTML : '')"
        } else {
            "document.body ? document.body.innerText : ''"
        };
        let v = evaluate_value(
            &page,
            &format!("({{url: location.href, title: document.title, content: {content}}})"),
            NAV_TIMEOUT_MS,
        )
        .await?;
        Ok(PageContent {
            tab: id,
            url: v["url"].as_str().unwrap_or_default().to_owned(),
            title: v["title"].as_str().unwrap_or_default().to_owned(),
            content: v["content"].as_str().unwrap_or_default().to_owned(),
        })
    }
}

fn no_tab(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("there is no tab {id:?}"))
        .with_kind(ErrorDetails::NoSuchTab { tab: id.to_owned(), tabs: None })
}

/// Width and height of a PNG or JPEG.
pub fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() >= 24 {
        let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
        return Some((w, h));
    }
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut i = 2;
    while i + 9 < bytes.len() {
        if bytes[i] != 0xFF {
            i += 1;
            continue;
        }
        let marker = bytes[i + 1];
        let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
        // Start of frame (baseline, extended, progressive, ...), not DHT/JPG/DAC.
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            let h = u32::from(u16::from_be_bytes([bytes[i + 5], bytes[i + 6]]));
            let w = u32::from(u16::from_be_bytes([bytes[i + 7], bytes[i + 8]]));
            return Some((w, h));
        }
        i += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_sizes() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((640, 480)));
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01,
            0x90, 0x02, 0x80, 0x03, 0, 0, 0, 0, 0,
        ];
        assert_eq!(image_size(&jpeg), Some((640, 400)));
        assert_eq!(image_size(b"GIF89a"), None);
    }
}
