//! The page tools, browser state and bridge of a box, on [`BoxClient`].
//!
//! Through holmd these are `/v1/boxes/{id}/browser/...` and
//! `/v1/boxes/{id}/bridge`; straight against a guest, `/v1/browser/...` and
//! `/v1/bridge/...`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use holm_proto::contract;
use holm_proto::contract::server;
use holm_proto::guest::{
    BoxSecret, BridgeSecret, BridgeStatus, ClickRequest, EvaluateRequest, EvaluateResult,
    FillRequest, LoadStateResult, NavigateRequest, OpenTab, PageContent, PageImageFormat,
    PageResult, PageScreenshotOptions, PressRequest, StorageState, Tab, TabQuery, Ticket,
    TicketRequest, TypeRequest, WaitRequest, headers,
};
use holm_proto::host::{BridgeAccess, BridgeRequest};

use crate::boxes::BoxClient;
use crate::endpoint::Endpoint;
use crate::error::{ClientError, Result, check, transport};

/// A page screenshot: the raw image and its size.
#[derive(Debug, Clone)]
pub struct PageScreenshot {
    /// The encoded image.
    pub bytes: Bytes,
    /// PNG or JPEG.
    pub format: PageImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl BoxClient {
    /// The browser's tabs.
    pub async fn tabs(&self) -> Result<Vec<Tab>> {
        Ok(self.call(&contract::TABS, &[], &()).await?.data)
    }

    /// Opens a tab (it becomes the current one).
    pub async fn open_tab(&self, request: &OpenTab) -> Result<Tab> {
        self.call(&contract::OPEN_TAB, &[], request).await
    }

    /// Closes a tab.
    pub async fn close_tab(&self, tab: &str) -> Result<()> {
        self.call(&contract::CLOSE_TAB, &[tab], &()).await
    }

    /// Brings a tab to the front and makes it the current one.
    pub async fn activate_tab(&self, tab: &str) -> Result<()> {
        self.call(&contract::ACTIVATE_TAB, &[tab], &()).await
    }

    /// Loads `url` in the current tab and waits for its `load` event.
    pub async fn navigate(&self, url: &str) -> Result<PageResult> {
        self.navigate_with(&NavigateRequest { url: url.to_owned(), ..NavigateRequest::default() })
            .await
    }

    /// Loads a URL as asked.
    pub async fn navigate_with(&self, request: &NavigateRequest) -> Result<PageResult> {
        self.call(&contract::NAVIGATE, &[], request).await
    }

    /// Goes back one page in a tab's history (default: the current tab)
    /// and waits for it to load; `conflict` when there is none before it.
    pub async fn page_back(&self, tab: Option<&str>) -> Result<PageResult> {
        self.call_with(&contract::BACK, &[], &tab_query(tab), &()).await
    }

    /// Goes forward one page in a tab's history (default: the current tab)
    /// and waits for it to load; `conflict` when there is none after it.
    pub async fn page_forward(&self, tab: Option<&str>) -> Result<PageResult> {
        self.call_with(&contract::FORWARD, &[], &tab_query(tab), &()).await
    }

    /// Loads a tab's page again (default: the current tab) and waits for it.
    pub async fn page_reload(&self, tab: Option<&str>) -> Result<PageResult> {
        self.call_with(&contract::RELOAD, &[], &tab_query(tab), &()).await
    }

    /// Clicks the first visible element that matches a CSS selector.
    pub async fn page_click(&self, selector: &str) -> Result<PageResult> {
        self.page_click_with(&ClickRequest {
            selector: selector.to_owned(),
            ..ClickRequest::default()
        })
        .await
    }

    /// Clicks as asked.
    pub async fn page_click_with(&self, request: &ClickRequest) -> Result<PageResult> {
        self.call(&contract::CLICK, &[], request).await
    }

    /// Types text as key presses into the element that matches.
    pub async fn page_type(&self, selector: &str, text: &str) -> Result<PageResult> {
        self.page_type_with(&TypeRequest {
            text: text.to_owned(),
            selector: Some(selector.to_owned()),
            ..TypeRequest::default()
        })
        .await
    }

    /// Types as asked.
    pub async fn page_type_with(&self, request: &TypeRequest) -> Result<PageResult> {
        self.call(&contract::TYPE, &[], request).await
    }

    /// Sets a field's value at once.
    pub async fn page_fill(&self, selector: &str, value: &str) -> Result<PageResult> {
        self.page_fill_with(&FillRequest {
            selector: selector.to_owned(),
            value: value.to_owned(),
            ..FillRequest::default()
        })
        .await
    }

    /// Fills as asked.
    pub async fn page_fill_with(&self, request: &FillRequest) -> Result<PageResult> {
        self.call(&contract::FILL, &[], request).await
    }

    /// Presses a key or chord, such as `Enter` or `Control+a`, where the focus is.
    pub async fn page_press(&self, key: &str) -> Result<PageResult> {
        self.page_press_with(&PressRequest { key: key.to_owned(), ..PressRequest::default() }).await
    }

    /// Presses as asked.
    pub async fn page_press_with(&self, request: &PressRequest) -> Result<PageResult> {
        self.call(&contract::PRESS, &[], request).await
    }

    /// Waits (5 s at most) until an element that matches is visible.
    pub async fn page_wait(&self, selector: &str) -> Result<PageResult> {
        self.page_wait_with(&WaitRequest {
            selector: selector.to_owned(),
            ..WaitRequest::default()
        })
        .await
    }

    /// Waits as asked.
    pub async fn page_wait_with(&self, request: &WaitRequest) -> Result<PageResult> {
        self.call(&contract::WAIT, &[], request).await
    }

    /// Evaluates a JavaScript expression in the current tab.
    pub async fn evaluate(&self, expression: &str) -> Result<EvaluateResult> {
        self.evaluate_with(&EvaluateRequest {
            expression: expression.to_owned(),
            ..EvaluateRequest::default()
        })
        .await
    }

    /// Evaluates as asked.
    pub async fn evaluate_with(&self, request: &EvaluateRequest) -> Result<EvaluateResult> {
        self.call(&contract::EVALUATE, &[], request).await
    }

    /// A screenshot of a tab (the viewport, or the whole page).
    pub async fn page_screenshot(&self, options: &PageScreenshotOptions) -> Result<PageScreenshot> {
        let (url, rb) = self.open(&contract::PAGE_SCREENSHOT, &[])?;
        let response = self.send(&url, rb.query(options)).await?;
        let h = response.headers().clone();
        let num = |name: &str| -> Result<u32> {
            h.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()).ok_or_else(
                || ClientError::Protocol {
                    url: url.clone(),
                    message: format!("missing header {name}"),
                },
            )
        };
        let format = match h.get("content-type").and_then(|v| v.to_str().ok()) {
            Some("image/jpeg") => PageImageFormat::Jpeg,
            _ => PageImageFormat::Png,
        };
        let (width, height) = (num(headers::WIDTH)?, num(headers::HEIGHT)?);
        let bytes = response.bytes().await.map_err(transport(&url))?;
        Ok(PageScreenshot { bytes, format, width, height })
    }

    /// The text a person sees in a tab (default: the current one).
    pub async fn page_text(&self, tab: Option<&str>) -> Result<PageContent> {
        self.call_with(&contract::PAGE_TEXT, &[], &tab_query(tab), &()).await
    }

    /// The HTML of a tab (default: the current one).
    pub async fn page_html(&self, tab: Option<&str>) -> Result<PageContent> {
        self.call_with(&contract::PAGE_HTML, &[], &tab_query(tab), &()).await
    }

    /// The browser's cookies and the storage of every origin open in a tab.
    pub async fn save_state(&self) -> Result<StorageState> {
        self.call(&contract::SAVE_STATE, &[], &()).await
    }

    /// Puts cookies and storage (from [`BoxClient::save_state`], maybe of
    /// another box) into this box's browser.
    pub async fn load_state(&self, state: &StorageState) -> Result<LoadStateResult> {
        self.call(&contract::LOAD_STATE, &[], state).await
    }

    /// How to reach the box's Chromium from this host, with a fresh ticket
    /// (through holmd; a `Computer` answers its own).
    pub async fn bridge(&self, ttl_secs: Option<u32>) -> Result<BridgeAccess> {
        self.call_own(&server::BRIDGE, &[], &(), &BridgeRequest { ttl_secs, rotate: false }).await
    }

    /// [`Self::bridge`] after giving the bridge a new secret (through holmd
    /// only): every connection and ticket of the old secret ends.
    pub async fn rotate_bridge(&self, ttl_secs: Option<u32>) -> Result<BridgeAccess> {
        self.call_own(&server::BRIDGE, &[], &(), &BridgeRequest { ttl_secs, rotate: true }).await
    }

    /// Sets the bridge's secret (straight against a guest only).
    pub async fn set_bridge_secret(&self, secret: &str) -> Result<()> {
        self.call(&contract::BRIDGE_SECRET, &[], &BridgeSecret { secret: secret.into() }).await
    }

    /// Replaces the box secret (straight against a guest only; the server
    /// never forwards it). This client keeps the old one: make a new client
    /// with the new secret.
    pub async fn set_box_secret(&self, secret: &str) -> Result<()> {
        let body = BoxSecret { secret: Some(secret.into()), secret_sha256: None };
        self.call(&contract::SECRET, &[], &body).await
    }

    /// Replaces the box secret by the one whose SHA-256 is `digest` (64
    /// hexadecimal digits), for a caller that never holds the secret
    /// itself (straight against a guest only).
    pub async fn set_box_secret_digest(&self, digest: &str) -> Result<()> {
        let body = BoxSecret { secret: None, secret_sha256: Some(digest.into()) };
        self.call(&contract::SECRET, &[], &body).await
    }

    /// Issues a bridge ticket (straight against a guest only).
    pub async fn bridge_ticket(&self, ttl_secs: Option<u32>) -> Result<Ticket> {
        self.call(&contract::BRIDGE_TICKET, &[], &TicketRequest { ttl_secs }).await
    }

    /// The bridge's state (straight against a guest only).
    pub async fn bridge_status(&self) -> Result<BridgeStatus> {
        self.call(&contract::BRIDGE, &[], &()).await
    }
}

/// The query that names tab `tab`, or the current one.
fn tab_query(tab: Option<&str>) -> TabQuery {
    TabQuery { tab: tab.map(str::to_owned) }
}

/// Makes a [`BridgeAccess`] for a box: sets `secret` on its guest (the same
/// secret again changes nothing; a guest that restarted gets it back), issues
/// a ticket, and asks the bridge at its endpoint for the browser's address.
/// The headers answered are the endpoint's (a vendor proxy's token) and the
/// bridge's own `Authorization`.
pub async fn bridge_access(
    guest: &BoxClient,
    bridge: &Endpoint,
    secret: &str,
    ttl_secs: Option<u32>,
) -> Result<BridgeAccess> {
    guest.set_bridge_secret(secret).await?;
    let ticket = guest.bridge_ticket(ttl_secs).await?;
    let url = bridge.join("/json/version");
    let http = crate::address::client_builder(bridge.addresses())
        .no_proxy()
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(transport(&url))?;
    let request = bridge.apply(http.get(&url)).bearer_auth(secret);
    let response = request.send().await.map_err(transport(&url))?;
    let response = check(&url, response).await?;
    let v: serde_json::Value = response
        .json()
        .await
        .map_err(|e| ClientError::Protocol { url: url.clone(), message: e.to_string() })?;
    let ws_url = v["webSocketDebuggerUrl"]
        .as_str()
        .ok_or_else(|| ClientError::Protocol {
            url: url.clone(),
            message: "no webSocketDebuggerUrl".into(),
        })?
        .to_owned();
    // A ticket is for a client that cannot send headers: where the runtime's
    // proxy takes its credential in the query, the ticket URLs carry it.
    // Where it takes it only as a header, such a client cannot pass it, and
    // the URLs are answered as they are.
    let ticket_url = bridge.join(&format!("/t/{}", ticket.ticket));
    let ticket_url = bridge.headerless(&ticket_url).unwrap_or(ticket_url);
    let ticket_ws_url = with_ticket(&ws_url, &ticket.ticket);
    let ticket_ws_url = bridge.headerless(&ticket_ws_url).unwrap_or(ticket_ws_url);
    let mut headers: BTreeMap<String, String> =
        bridge.headers().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    headers.insert("Authorization".to_owned(), format!("Bearer {secret}"));
    let expires = SystemTime::now() + Duration::from_secs(u64::from(ticket.expires_in_secs));
    Ok(BridgeAccess {
        ticket_url,
        ticket_ws_url,
        http_url: bridge.url().to_owned(),
        ws_url,
        headers,
        expires_at: humantime::format_rfc3339_seconds(expires).to_string(),
    })
}

/// `ws://host/devtools/...` with `/t/<ticket>` after the host.
fn with_ticket(ws_url: &str, ticket: &str) -> String {
    let (scheme, rest) = ws_url.split_once("://").unwrap_or(("ws", ws_url));
    match rest.find('/') {
        Some(i) => format!("{scheme}://{}/t/{ticket}{}", &rest[..i], &rest[i..]),
        None => format!("{scheme}://{rest}/t/{ticket}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticket_goes_after_the_host() {
        assert_eq!(
            with_ticket("ws://127.0.0.1:49154/devtools/browser/abc", "tk"),
            "ws://127.0.0.1:49154/t/tk/devtools/browser/abc"
        );
        assert_eq!(with_ticket("wss://h", "tk"), "wss://h/t/tk");
    }
}
