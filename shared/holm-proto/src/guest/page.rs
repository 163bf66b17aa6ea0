//! The page tools and the browser state they save and load.

use super::*;

// ---------------------------------------------------------------------------
// Page tools

/// A tab of the box's browser (screen 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tab {
    /// The DevTools target id; pass it as `tab`.
    pub id: String,
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether page tools act on it when no `tab` is given.
    pub current: bool,
}

/// `POST /v1/browser/tabs`: open a tab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenTab {
    /// Where it goes (default `about:blank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Wait for this point of its loading (default `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    /// The longest wait, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// How far a navigation must get before the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    /// The `load` event: the page and its resources.
    #[default]
    Load,
    /// `DOMContentLoaded`: the document is parsed.
    DomContentLoaded,
    /// Answer once the navigation has started.
    Commit,
}

/// The query of the page routes that only read: which tab.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TabQuery {
    /// The tab (default: the current tab).
    #[serde(default)]
    pub tab: Option<String>,
}

/// `POST /v1/browser/navigate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NavigateRequest {
    /// The address, such as `http://127.0.0.1:8000/` or a `data:` URL.
    pub url: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait for this point of loading (default `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    /// The longest wait, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// Where a tab is after a page tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageResult {
    /// The tab.
    pub tab: String,
    /// Its address now.
    pub url: String,
    /// Its title now.
    pub title: String,
}

/// `POST /v1/browser/click`: click the first element that matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClickRequest {
    /// A CSS selector.
    pub selector: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Which button (default left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<Button>,
    /// 1 to 3 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u8>,
    /// Wait this long for the element to be visible, in milliseconds
    /// (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/type`: type text as key presses, into the element that
/// matches (focused first) or wherever the focus is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TypeRequest {
    /// The text; `\n` presses Enter and `\t` Tab.
    pub text: String,
    /// A CSS selector to focus first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// `POST /v1/browser/fill`: set an input's, text area's or editable element's
/// value at once, firing `input` and `change`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FillRequest {
    /// A CSS selector.
    pub selector: String,
    /// The new value.
    pub value: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// `POST /v1/browser/press`: press a key, such as `Enter`, `ArrowDown`, `a`
/// or `Control+a`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PressRequest {
    /// The key or chord, named as in docs/keys.md (`Enter`, `ArrowDown`, `a`,
    /// `Control+a`); a single character is sent to the page as written.
    pub key: String,
    /// A CSS selector to focus first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What an element must be for a wait to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ElementState {
    /// In the document and drawn with a size.
    #[default]
    Visible,
    /// In the document.
    Attached,
    /// Not drawn, or not in the document.
    Hidden,
    /// Not in the document.
    Detached,
}

wire_names!(ElementState {
    Visible => "visible",
    Attached => "attached",
    Hidden => "hidden",
    Detached => "detached",
});

/// `POST /v1/browser/wait`: wait until an element is in a state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WaitRequest {
    /// A CSS selector.
    pub selector: String,
    /// The state to wait for (default `visible`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ElementState>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// The longest wait, in milliseconds (default 5000, at most 60000). Not
    /// reaching the state in time is a `timeout` error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/evaluate`: run a JavaScript expression in the page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateRequest {
    /// The expression, such as `document.title` or `fetch('/x').then(r => r.status)`.
    pub expression: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait for a promise's value (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    /// The longest run, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The value of an evaluated expression. An exception thrown by the page is a
/// `page_error`, with the exception in `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateResult {
    /// The value as JSON; `null` for `undefined` and for values JSON cannot
    /// hold (see `unserializable`).
    pub value: serde_json::Value,
    /// The JavaScript type, such as `number`, `string`, `object` or `undefined`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `NaN`, `Infinity`, `-Infinity`, `-0` or a BigInt such as `12n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unserializable: Option<String>,
}

/// The image formats of a page screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum PageImageFormat {
    /// Lossless, the default.
    #[default]
    Png,
    /// Lossy; `quality` 1 to 100.
    Jpeg,
}

/// The query of `GET /v1/browser/screenshot`, whose answer is the raw image
/// with `x-holm-width` and `x-holm-height`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageScreenshotOptions {
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// `png` (default) or `jpeg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<PageImageFormat>,
    /// JPEG quality, 1 to 100 (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// The whole page, not only what the window shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_page: Option<bool>,
}

/// `GET /v1/browser/text` and `GET /v1/browser/html`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageContent {
    /// The tab.
    pub tab: String,
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The text a person sees (`innerText` of the body), or the HTML of the
    /// document.
    pub content: String,
}

// ---------------------------------------------------------------------------
// Browser state

/// A cookie, as `save_state` reads it and `load_state` sets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cookie {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The domain, such as `.example.com` or `127.0.0.1`.
    pub domain: String,
    /// The path.
    pub path: String,
    /// When it expires, in seconds since the epoch; `-1` for a session cookie.
    pub expires: f64,
    /// Hidden from scripts.
    pub http_only: bool,
    /// Sent over HTTPS only.
    pub secure: bool,
    /// `Strict`, `Lax` or `None`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
}

/// A cookie's `SameSite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    /// Same site only.
    Strict,
    /// Same site, and top-level navigations.
    Lax,
    /// Every request (needs `secure`).
    None,
}

/// One item of a storage area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StorageItem {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

/// The web storage of one origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OriginState {
    /// The origin, such as `http://127.0.0.1:8000`.
    pub origin: String,
    /// Its `localStorage`.
    #[serde(default)]
    pub local_storage: Vec<StorageItem>,
    /// Its `sessionStorage` (per tab: `load_state` leaves a tab open on the
    /// origin to hold it).
    #[serde(default)]
    pub session_storage: Vec<StorageItem>,
}

/// `GET /v1/browser/state` (save) and `POST /v1/browser/state` (load): the
/// browser's cookies, and the local and session storage of every origin open
/// in a tab. Like Playwright's storage state, in snake_case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorageState {
    /// Every cookie of the browser.
    #[serde(default)]
    pub cookies: Vec<Cookie>,
    /// The storage of each origin open in a tab when it was saved.
    #[serde(default)]
    pub origins: Vec<OriginState>,
}

/// What `load_state` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoadStateResult {
    /// Cookies set.
    pub cookies: usize,
    /// Origins whose storage was set.
    pub origins: usize,
    /// Tabs left open to hold session storage.
    pub tabs_opened: Vec<String>,
}
