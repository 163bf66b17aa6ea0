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
use holm_proto::{ApiError, ErrorCode, Issue};
use serde_json::{Value, json};

use crate::cdp::{Cdp, CdpError, Event};

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
            ApiError::new(ErrorCode::NotReady, "the browser is not answering")
                .with_hint("it may be starting or restarting; GET /health shows it")
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

/// Finds the element and waits for `state`, in the page. Answers
/// `{found, x, y, fillable}`; `action` is done on the element once found.
const ELEMENT_SCRIPT: &str = r#"(async (selector, state, timeoutMs, action, value) => {
  const visible = (el) => {
    if (!el || !el.isConnected) return false;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none') return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const check = () => {
    const el = document.querySelector(selector);
    switch (state) {
      case 'attached': return el ? { el } : null;
      case 'detached': return el ? null : { el: null };
      case 'hidden': return visible(el) ? null : { el: null };
      default: return visible(el) ? { el } : null;
    }
  };
  const deadline = Date.now() + timeoutMs;
  let hit = check();
  while (!hit) {
    if (Date.now() >= deadline) return { found: false };
    await new Promise((r) => setTimeout(r, 20));
    hit = check();
  }
  const el = hit.el;
  if (action === 'click') {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const r = el.getBoundingClientRect();
    return { found: true, x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }
  if (action === 'focus') {
    el.focus();
    return { found: true };
  }
  if (action === 'fill') {
    el.focus();
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value').set;
      setter.call(el, value);
    } else if (el.isContentEditable) {
      el.textContent = value;
    } else {
      return { found: true, fillable: false };
    }
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { found: true, fillable: true };
  }
  return { found: true };
})"#;

/// Reads the web storage of the page's origin.
const READ_STORAGE: &str = r#"(() => {
  const read = (area) => {
    const out = [];
    try {
      const s = window[area];
      for (let i = 0; i < s.length; i++) { const k = s.key(i); out.push({ name: k, value: s.getItem(k) }); }
    } catch (e) {}
    return out;
  };
  return { origin: location.origin, local_storage: read('localStorage'), session_storage: read('sessionStorage') };
})()"#;

/// A key as DevTools describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Key {
    /// The DOM `key`, such as `Enter` or `a`.
    key: String,
    /// The DOM `code`, such as `KeyA`.
    code: String,
    /// The Windows virtual key code.
    vk: i64,
    /// The text it types, if any.
    text: Option<String>,
}

/// Looks a key up by name: a named key, F1 to F12, or one character.
fn key_info(name: &str) -> Option<Key> {
    let named: &[(&str, &str, i64, Option<&str>)] = &[
        ("Enter", "Enter", 13, Some("\r")),
        ("Tab", "Tab", 9, None),
        ("Escape", "Escape", 27, None),
        ("Backspace", "Backspace", 8, None),
        ("Delete", "Delete", 46, None),
        ("Insert", "Insert", 45, None),
        ("ArrowLeft", "ArrowLeft", 37, None),
        ("ArrowUp", "ArrowUp", 38, None),
        ("ArrowRight", "ArrowRight", 39, None),
        ("ArrowDown", "ArrowDown", 40, None),
        ("Home", "Home", 36, None),
        ("End", "End", 35, None),
        ("PageUp", "PageUp", 33, None),
        ("PageDown", "PageDown", 34, None),
        ("Space", "Space", 32, Some(" ")),
    ];
    if let Some((key, code, vk, text)) = named.iter().find(|(k, ..)| k.eq_ignore_ascii_case(name)) {
        let key = if *key == "Space" { " " } else { key };
        return Some(Key {
            key: (*key).into(),
            code: (*code).into(),
            vk: *vk,
            text: text.map(str::to_owned),
        });
    }
    if let Some(n) = name.strip_prefix(['F', 'f']).and_then(|n| n.parse::<i64>().ok())
        && (1..=12).contains(&n)
    {
        return Some(Key { key: format!("F{n}"), code: format!("F{n}"), vk: 111 + n, text: None });
    }
    let mut chars = name.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return None };
    let upper = c.to_ascii_uppercase();
    let (code, vk) = if c.is_ascii_alphabetic() {
        (format!("Key{upper}"), i64::from(upper as u8))
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), i64::from(c as u8))
    } else {
        (String::new(), 0)
    };
    Some(Key { key: c.to_string(), code, vk, text: Some(c.to_string()) })
}

/// Parses `Control+Shift+a` into CDP's modifier bits and the key.
fn parse_chord(chord: &str) -> Result<(i64, Key), ApiError> {
    let bad =
        |problem: String| ApiError::invalid_fields(vec![Issue { path: "key".into(), problem }]);
    // `+` alone, or at the end (`Shift++`), is the plus key.
    let (mods, key) = match chord.strip_suffix("++") {
        Some(m) => (m, "+"),
        None if chord == "+" => ("", "+"),
        None => chord.rsplit_once('+').unwrap_or(("", chord)),
    };
    let mut bits = 0;
    for m in mods.split('+').filter(|m| !m.is_empty()) {
        bits |= match m.to_ascii_lowercase().as_str() {
            "alt" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "super" => 4,
            "shift" => 8,
            _ => {
                return Err(bad(format!(
                    "{m:?} is not a modifier; use Control, Shift, Alt or Meta"
                )));
            }
        };
    }
    let info = key_info(key).ok_or_else(|| {
        bad(format!(
            "{key:?} is not a key; use one character, F1 to F12, or one of Enter, Tab, Escape, \
             Backspace, Delete, Insert, ArrowLeft, ArrowUp, ArrowRight, ArrowDown, Home, End, \
             PageUp, PageDown, Space"
        ))
    })?;
    Ok((bits, info))
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
                .with_hint("create the box with the browser on"))
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
                Err(no_tab(id).with_details(json!({
                    "tab": id,
                    "tabs": tabs.iter().map(|t| &t.id).collect::<Vec<_>>(),
                })))
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
        let timeout = bounded(req.timeout_ms, NAV_TIMEOUT_MS, MAX_NAV_TIMEOUT_MS, "timeout_ms")?;
        let id = self.create_blank(false).await?;
        self.set_current(&id);
        if let Some(url) = req.url.as_deref().filter(|u| *u != "about:blank") {
            let page = self.page(&id).await?;
            navigate(&page, url, req.wait_until.unwrap_or_default(), timeout, false).await?;
        }
        let (url, title) = self.location(&id).await?;
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

    async fn location(&self, id: &str) -> Result<(String, String), ApiError> {
        let page = self.page(id).await?;
        let v =
            evaluate_value(&page, "({url: location.href, title: document.title})", 10_000).await?;
        Ok((
            v["url"].as_str().unwrap_or_default().to_owned(),
            v["title"].as_str().unwrap_or_default().to_owned(),
        ))
    }

    async fn result(&self, id: String) -> Result<PageResult, ApiError> {
        let (url, title) = self.location(&id).await?;
        Ok(PageResult { tab: id, url, title })
    }

    /// Loads a URL and waits as asked.
    pub async fn navigate(&self, req: &NavigateRequest) -> Result<PageResult, ApiError> {
        let timeout = bounded(req.timeout_ms, NAV_TIMEOUT_MS, MAX_NAV_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        navigate(&page, &req.url, req.wait_until.unwrap_or_default(), timeout, false).await?;
        self.set_current(&id);
        self.result(id).await
    }

    /// Runs the element script; answers its result once the element is in
    /// `state`, or a refusal that names the selector.
    async fn element(
        &self,
        page: &Cdp,
        selector: &str,
        state: ElementState,
        timeout_ms: u64,
        action: &str,
        value: Option<&str>,
    ) -> Result<Value, ApiError> {
        let state_name = match state {
            ElementState::Visible => "visible",
            ElementState::Attached => "attached",
            ElementState::Hidden => "hidden",
            ElementState::Detached => "detached",
        };
        let expression = format!(
            "{ELEMENT_SCRIPT}({}, {}, {timeout_ms}, {}, {})",
            js(selector),
            js(state_name),
            js(action),
            js(value)
        );
        let v = evaluate_value(page, &expression, timeout_ms).await.map_err(|e| {
            let invalid = e
                .details
                .as_ref()
                .and_then(|d| d["exception"].as_str())
                .is_some_and(|x| x.contains("is not a valid selector"));
            if invalid {
                ApiError::invalid_fields(vec![Issue {
                    path: "selector".into(),
                    problem: format!("{selector:?} is not a valid CSS selector"),
                }])
            } else {
                e
            }
        })?;
        if v["found"] != true {
            let (code, what) = match state {
                ElementState::Visible | ElementState::Attached => {
                    if action == "none" {
                        (ErrorCode::Timeout, "no element matched")
                    } else {
                        (ErrorCode::NotFound, "no visible element matches")
                    }
                }
                ElementState::Hidden | ElementState::Detached => {
                    (ErrorCode::Timeout, "an element still matches")
                }
            };
            return Err(ApiError::new(code, format!("{what} {selector:?} after {timeout_ms} ms"))
                .with_hint("check the selector with evaluate, or wait longer with timeout_ms")
                .with_details(
                    json!({ "selector": selector, "state": state_name, "timeout_ms": timeout_ms }),
                ));
        }
        Ok(v)
    }

    /// Clicks the centre of the first visible element that matches.
    pub async fn click(&self, req: &ClickRequest) -> Result<PageResult, ApiError> {
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let count = req.count.unwrap_or(1);
        if !(1..=3).contains(&count) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "count".into(),
                problem: format!("must be 1 to 3, not {count}"),
            }]));
        }
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        let at = self
            .element(&page, &req.selector, ElementState::Visible, timeout, "click", None)
            .await?;
        let (x, y) = (at["x"].as_f64().unwrap_or(0.0), at["y"].as_f64().unwrap_or(0.0));
        let button = match req.button.unwrap_or_default() {
            Button::Left => "left",
            Button::Middle => "middle",
            Button::Right => "right",
            Button::Back => "back",
            Button::Forward => "forward",
        };
        let mouse = |kind: &str, clicks: u8| {
            json!({"type": kind, "x": x, "y": y, "button": button, "clickCount": clicks,
                   "buttons": if kind == "mousePressed" { 1 } else { 0 }})
        };
        page.call("Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y}))
            .await
            .map_err(cdp_error)?;
        for n in 1..=count {
            page.call("Input.dispatchMouseEvent", mouse("mousePressed", n))
                .await
                .map_err(cdp_error)?;
            page.call("Input.dispatchMouseEvent", mouse("mouseReleased", n))
                .await
                .map_err(cdp_error)?;
        }
        self.set_current(&id);
        self.result(id).await
    }

    async fn focus(
        &self,
        page: &Cdp,
        selector: Option<&str>,
        timeout_ms: u64,
    ) -> Result<(), ApiError> {
        if let Some(selector) = selector {
            self.element(page, selector, ElementState::Visible, timeout_ms, "focus", None).await?;
        }
        Ok(())
    }

    /// Types text as key presses.
    pub async fn type_text(&self, req: &TypeRequest) -> Result<PageResult, ApiError> {
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.focus(&page, req.selector.as_deref(), timeout).await?;
        for c in req.text.chars() {
            match c {
                '\n' | '\r' => press(&page, 0, &key_info("Enter").unwrap_or_default()).await?,
                '\t' => press(&page, 0, &key_info("Tab").unwrap_or_default()).await?,
                c => {
                    let text = c.to_string();
                    page.call(
                        "Input.dispatchKeyEvent",
                        json!({"type": "keyDown", "key": text, "text": text, "unmodifiedText": text}),
                    )
                    .await
                    .map_err(cdp_error)?;
                    page.call("Input.dispatchKeyEvent", json!({"type": "keyUp", "key": text}))
                        .await
                        .map_err(cdp_error)?;
                }
            }
        }
        self.set_current(&id);
        self.result(id).await
    }

    /// Sets a field's value at once.
    pub async fn fill(&self, req: &FillRequest) -> Result<PageResult, ApiError> {
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        let v = self
            .element(&page, &req.selector, ElementState::Visible, timeout, "fill", Some(&req.value))
            .await?;
        if v["fillable"] != true {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "selector".into(),
                problem: format!(
                    "{:?} is not an input, a text area, a select or an editable element",
                    req.selector
                ),
            }]));
        }
        self.set_current(&id);
        self.result(id).await
    }

    /// Presses a key or chord.
    pub async fn press(&self, req: &PressRequest) -> Result<PageResult, ApiError> {
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let (modifiers, key) = parse_chord(&req.key)?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.focus(&page, req.selector.as_deref(), timeout).await?;
        press(&page, modifiers, &key).await?;
        self.set_current(&id);
        self.result(id).await
    }

    /// Waits until an element is in a state.
    pub async fn wait(&self, req: &WaitRequest) -> Result<PageResult, ApiError> {
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.element(&page, &req.selector, req.state.unwrap_or_default(), timeout, "none", None)
            .await?;
        self.result(id).await
    }

    /// Evaluates an expression.
    pub async fn evaluate(&self, req: &EvaluateRequest) -> Result<EvaluateResult, ApiError> {
        let timeout = bounded(req.timeout_ms, NAV_TIMEOUT_MS, MAX_NAV_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        let r = page
            .call_timeout(
                "Runtime.evaluate",
                json!({
                    "expression": req.expression,
                    "returnByValue": true,
                    "awaitPromise": req.await_promise.unwrap_or(true),
                    "userGesture": true,
                    "timeout": timeout,
                }),
                Duration::from_millis(timeout) + SLACK,
            )
            .await
            .map_err(cdp_error)?;
        check_exception(&r)?;
        let result = &r["result"];
        Ok(EvaluateResult {
            value: result.get("value").cloned().unwrap_or(Value::Null),
            kind: result["type"].as_str().unwrap_or("undefined").to_owned(),
            unserializable: result["unserializableValue"].as_str().map(str::to_owned),
        })
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

    /// The cookies, and the web storage of every http(s) origin open in a tab.
    pub async fn save_state(&self) -> Result<StorageState, ApiError> {
        let b = self.browser().await?;
        let r = b.call("Storage.getCookies", json!({})).await.map_err(cdp_error)?;
        let cookies = r["cookies"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(cookie_from_cdp)
            .collect();
        let mut origins: Vec<OriginState> = Vec::new();
        for tab in self.tabs().await? {
            if !(tab.url.starts_with("http://") || tab.url.starts_with("https://")) {
                continue;
            }
            let page = self.page(&tab.id).await?;
            let v = match evaluate_value(&page, READ_STORAGE, 10_000).await {
                Ok(v) => v,
                // A tab that navigates away meanwhile is skipped, not fatal.
                Err(e) => {
                    tracing::info!(tab = %tab.id, error = %e, "cannot read a tab's storage");
                    continue;
                }
            };
            let Ok(state) = serde_json::from_value::<OriginState>(v) else { continue };
            match origins.iter_mut().find(|o| o.origin == state.origin) {
                Some(o) => {
                    merge(&mut o.local_storage, state.local_storage);
                    merge(&mut o.session_storage, state.session_storage);
                }
                None => origins.push(state),
            }
        }
        origins.retain(|o| !(o.local_storage.is_empty() && o.session_storage.is_empty()));
        Ok(StorageState { cookies, origins })
    }

    /// Sets cookies, and the web storage of each origin: each origin is opened
    /// in a background tab whose document is answered by DevTools (an empty
    /// page; nothing is fetched), its storage set, and the tab closed, unless
    /// it holds session storage, which lives only in its tab.
    pub async fn load_state(&self, state: &StorageState) -> Result<LoadStateResult, ApiError> {
        let mut issues = Vec::new();
        for (i, o) in state.origins.iter().enumerate() {
            if origin_of(&o.origin).is_none() {
                issues.push(Issue {
                    path: format!("origins[{i}].origin"),
                    problem: format!("{:?} is not an http or https origin", o.origin),
                });
            }
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let b = self.browser().await?;
        if !state.cookies.is_empty() {
            let cookies: Vec<Value> = state.cookies.iter().map(cookie_to_cdp).collect();
            b.call("Storage.setCookies", json!({"cookies": cookies})).await.map_err(cdp_error)?;
        }
        let mut done = 0;
        let mut tabs_opened = Vec::new();
        for o in &state.origins {
            if o.local_storage.is_empty() && o.session_storage.is_empty() {
                continue;
            }
            let origin = origin_of(&o.origin).unwrap_or_default();
            let id = self.create_blank(true).await?;
            let result = async {
                let page = self.page(&id).await?;
                page.call(
                    "Fetch.enable",
                    json!({"patterns": [{"urlPattern": format!("{origin}/*"), "resourceType": "Document", "requestStage": "Request"}]}),
                )
                .await
                .map_err(cdp_error)?;
                navigate(&page, &format!("{origin}/"), WaitUntil::Load, NAV_TIMEOUT_MS, true).await?;
                page.call("Fetch.disable", json!({})).await.map_err(cdp_error)?;
                let expression = format!(
                    "((local, session) => {{ for (const i of local) localStorage.setItem(i.name, i.value); for (const i of session) sessionStorage.setItem(i.name, i.value); return location.origin; }})({}, {})",
                    js(&o.local_storage),
                    js(&o.session_storage)
                );
                let got = evaluate_value(&page, &expression, 10_000).await?;
                if got.as_str() != Some(origin.as_str()) {
                    return Err(ApiError::new(
                        ErrorCode::PageError,
                        format!("could not open {origin} to set its storage"),
                    ));
                }
                Ok::<(), ApiError>(())
            }
            .await;
            if result.is_err() || o.session_storage.is_empty() {
                let _ = self.close(&id).await;
            } else {
                tabs_opened.push(id);
            }
            result?;
            done += 1;
        }
        Ok(LoadStateResult { cookies: state.cookies.len(), origins: done, tabs_opened })
    }
}

fn no_tab(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("there is no tab {id:?}"))
        .with_hint("GET /v1/browser/tabs lists the tabs")
}

/// `scheme://host[:port]` of an http(s) origin, without a trailing slash.
fn origin_of(s: &str) -> Option<String> {
    let rest = s.strip_prefix("http://").or_else(|| s.strip_prefix("https://"))?;
    let host = rest.trim_end_matches('/');
    if host.is_empty() || host.contains(['/', '?', '#', ' ', '*']) {
        return None;
    }
    Some(s.trim_end_matches('/').to_owned())
}

fn merge(into: &mut Vec<StorageItem>, from: Vec<StorageItem>) {
    for item in from {
        if !into.iter().any(|i| i.name == item.name) {
            into.push(item);
        }
    }
}

fn cookie_from_cdp(c: &Value) -> Option<Cookie> {
    Some(Cookie {
        name: c["name"].as_str()?.to_owned(),
        value: c["value"].as_str()?.to_owned(),
        domain: c["domain"].as_str()?.to_owned(),
        path: c["path"].as_str().unwrap_or("/").to_owned(),
        expires: if c["session"] == true { -1.0 } else { c["expires"].as_f64().unwrap_or(-1.0) },
        http_only: c["httpOnly"] == true,
        secure: c["secure"] == true,
        same_site: match c["sameSite"].as_str() {
            Some("Strict") => Some(SameSite::Strict),
            Some("Lax") => Some(SameSite::Lax),
            Some("None") => Some(SameSite::None),
            _ => None,
        },
    })
}

fn cookie_to_cdp(c: &Cookie) -> Value {
    let mut v = json!({
        "name": c.name, "value": c.value, "domain": c.domain, "path": c.path,
        "secure": c.secure, "httpOnly": c.http_only,
    });
    if c.expires >= 0.0 {
        v["expires"] = json!(c.expires);
    }
    if let Some(s) = c.same_site {
        v["sameSite"] = json!(match s {
            SameSite::Strict => "Strict",
            SameSite::Lax => "Lax",
            SameSite::None => "None",
        });
    }
    v
}

/// An exception thrown by the page, as a `page_error`.
fn check_exception(r: &Value) -> Result<(), ApiError> {
    let Some(ex) = r.get("exceptionDetails") else { return Ok(()) };
    let text = ex["exception"]["description"]
        .as_str()
        .or_else(|| ex["exception"]["value"].as_str())
        .or_else(|| ex["text"].as_str())
        .unwrap_or("an exception")
        .to_owned();
    let first_line = text.lines().next().unwrap_or_default().to_owned();
    Err(ApiError::new(ErrorCode::PageError, format!("the page threw: {first_line}"))
        .with_hint("fix the expression; details.exception has the page's message and stack")
        .with_details(json!({
            "exception": text,
            "line": ex["lineNumber"],
            "column": ex["columnNumber"],
        })))
}

/// Evaluates an expression (awaiting promises) and answers its JSON value.
async fn evaluate_value(page: &Cdp, expression: &str, timeout_ms: u64) -> Result<Value, ApiError> {
    let r = page
        .call_timeout(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            Duration::from_millis(timeout_ms) + SLACK,
        )
        .await
        .map_err(cdp_error)?;
    check_exception(&r)?;
    Ok(r["result"].get("value").cloned().unwrap_or(Value::Null))
}

/// Presses and releases one key with modifiers.
async fn press(page: &Cdp, modifiers: i64, k: &Key) -> Result<(), ApiError> {
    let Key { key, code, vk, text } = k;
    // A chord with Control, Alt or Meta types no text (Control+a selects).
    let text = text.as_ref().filter(|_| modifiers & 7 == 0);
    let mut down = json!({
        "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
        "modifiers": modifiers, "key": key, "code": code,
        "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk,
    });
    if let Some(t) = text {
        down["text"] = json!(t);
        down["unmodifiedText"] = json!(t);
    }
    page.call("Input.dispatchKeyEvent", down).await.map_err(cdp_error)?;
    page.call(
        "Input.dispatchKeyEvent",
        json!({"type": "keyUp", "modifiers": modifiers, "key": key, "code": code,
               "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}),
    )
    .await
    .map_err(cdp_error)?;
    Ok(())
}

/// Whether `e` is the lifecycle event `name` of navigation `loader`.
fn is_lifecycle(e: &Event, loader: &str, name: &str) -> bool {
    e.method == "Page.lifecycleEvent" && e.params["loaderId"] == loader && e.params["name"] == name
}

/// Navigates a tab and waits as asked. With `fulfil`, document requests
/// paused by `Fetch` are answered with an empty page, so an origin can be
/// opened without fetching anything.
async fn navigate(
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

async fn fulfil_request(page: &Cdp, e: &Event) -> Result<(), ApiError> {
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
    fn chords_parse() {
        let (m, k) = parse_chord("Control+a").unwrap();
        assert_eq!(m, 2);
        assert_eq!(k, Key { key: "a".into(), code: "KeyA".into(), vk: 65, text: Some("a".into()) });
        let (m, k) = parse_chord("shift+Enter").unwrap();
        assert_eq!(m, 8);
        assert_eq!(k.key, "Enter");
        assert_eq!(parse_chord("Shift++").unwrap().1.key, "+");
        assert_eq!(parse_chord("+").unwrap().1.key, "+");
        assert_eq!(parse_chord("F5").unwrap().1.vk, 116);
        assert_eq!(parse_chord("Space").unwrap().1.key, " ");
        assert_eq!(parse_chord("é").unwrap().1.text.as_deref(), Some("é"));
        assert_eq!(parse_chord("Hyper+a").unwrap_err().code, ErrorCode::InvalidRequest);
        assert!(parse_chord("NoSuchKey").is_err());
    }

    #[test]
    fn origins_are_checked() {
        assert_eq!(origin_of("http://127.0.0.1:8000").as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(origin_of("https://a.example/").as_deref(), Some("https://a.example"));
        assert!(origin_of("file:///etc").is_none());
        assert!(origin_of("http://a/b").is_none());
        assert!(origin_of("http://").is_none());
    }

    #[test]
    fn cookies_round_trip_through_cdp_shapes() {
        let cdp = json!({"name": "sid", "value": "1", "domain": "127.0.0.1", "path": "/",
            "expires": 1_900_000_000.5, "size": 4, "httpOnly": true, "secure": false,
            "session": false, "sameSite": "Lax", "priority": "Medium", "sourceScheme": "NonSecure"});
        let c = cookie_from_cdp(&cdp).unwrap();
        assert_eq!(c.same_site, Some(SameSite::Lax));
        assert!(c.http_only);
        let back = cookie_to_cdp(&c);
        assert_eq!(back["expires"], 1_900_000_000.5);
        assert_eq!(back["sameSite"], "Lax");
        let session =
            cookie_from_cdp(&json!({"name": "s", "value": "", "domain": "d", "path": "/",
            "expires": -1, "session": true}))
            .unwrap();
        assert_eq!(session.expires, -1.0);
        assert!(cookie_to_cdp(&session).get("expires").is_none());
    }

    #[test]
    fn exceptions_become_page_errors() {
        let r = json!({"result": {"type": "object"}, "exceptionDetails": {
            "text": "Uncaught", "lineNumber": 0, "columnNumber": 6,
            "exception": {"type": "object", "className": "Error",
                          "description": "Error: boom\n    at <anonymous>:1:7"}}});
        let e = check_exception(&r).unwrap_err();
        assert_eq!(e.code, ErrorCode::PageError);
        assert_eq!(e.message, "the page threw: Error: boom");
        assert!(e.details.unwrap()["exception"].as_str().unwrap().contains("<anonymous>"));
        assert!(check_exception(&json!({"result": {"type": "number", "value": 2}})).is_ok());
    }

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
