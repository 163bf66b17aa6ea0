//! The bridge's credentials and the page tools.
//!
//! - `GET /v1/bridge`: a [`BridgeStatus`].
//! - `PUT /v1/bridge/secret`: a [`BridgeSecret`]; 204. A new secret restarts
//!   the bridge (its connections close, its tickets go).
//! - `POST /v1/bridge/tickets`: a [`TicketRequest`]; answers a [`Ticket`].
//! - `GET /v1/browser/tabs`, `POST /v1/browser/tabs` ([`OpenTab`]),
//!   `DELETE /v1/browser/tabs/{tab}`, `POST /v1/browser/tabs/{tab}/activate`.
//! - `POST /v1/browser/{navigate,click,type,fill,press,wait}`: answer a
//!   [`PageResult`]; `POST /v1/browser/evaluate`: an [`EvaluateResult`].
//! - `GET /v1/browser/screenshot`: the raw PNG or JPEG, with `x-holm-width`
//!   and `x-holm-height`.
//! - `GET /v1/browser/text`, `GET /v1/browser/html`: a [`PageContent`].
//! - `GET /v1/browser/state` (save), `POST /v1/browser/state` (load): a
//!   [`StorageState`].

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use holm_proto::guest::{
    BridgeSecret, BridgeStatus, ClickRequest, EvaluateRequest, EvaluateResult, FillRequest,
    LoadStateResult, NavigateRequest, OpenTab, Page, PageContent, PageImageFormat, PageResult,
    PageScreenshotOptions, PressRequest, StorageState, Tab, TabQuery, Ticket, TicketRequest,
    TypeRequest, WaitRequest, headers as h,
};

use holm_proto::contract;

use super::AppState;
use super::error::Error;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::BRIDGE.route, bridge_status)
        .on(&contract::BRIDGE_SECRET.route, set_secret)
        .on(&contract::BRIDGE_TICKET.route, ticket)
        .on(&contract::TABS.route, tabs)
        .on(&contract::OPEN_TAB.route, open)
        .on(&contract::CLOSE_TAB.route, close)
        .on(&contract::ACTIVATE_TAB.route, activate)
        .on(&contract::NAVIGATE.route, navigate)
        .on(&contract::BACK.route, back)
        .on(&contract::FORWARD.route, forward)
        .on(&contract::RELOAD.route, reload)
        .on(&contract::CLICK.route, click)
        .on(&contract::TYPE.route, type_text)
        .on(&contract::FILL.route, fill)
        .on(&contract::PRESS.route, press)
        .on(&contract::WAIT.route, wait)
        .on(&contract::EVALUATE.route, evaluate)
        .on(&contract::PAGE_SCREENSHOT, screenshot)
        .on(&contract::PAGE_TEXT.route, text)
        .on(&contract::PAGE_HTML.route, html)
        .on(&contract::SAVE_STATE.route, save_state)
        .on(&contract::LOAD_STATE.route, load_state)
}

async fn bridge_status(State(state): State<AppState>) -> Json<BridgeStatus> {
    Json(state.bridge.status())
}

async fn set_secret(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<BridgeSecret>,
) -> Result<StatusCode, Error> {
    state.bridge.set_secret(body.secret.expose())?;
    Ok(StatusCode::NO_CONTENT)
}

async fn ticket(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<TicketRequest>,
) -> Result<Json<Ticket>, Error> {
    Ok(Json(state.bridge.issue_ticket(body.ttl_secs)?))
}

async fn tabs(State(state): State<AppState>) -> Result<Json<Page<Tab>>, Error> {
    Ok(Json(Page::all(state.browser.tabs().await?)))
}

async fn open(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<OpenTab>,
) -> Result<Json<Tab>, Error> {
    Ok(Json(state.browser.open(&body).await?))
}

async fn close(
    State(state): State<AppState>,
    Path(tab): Path<String>,
) -> Result<StatusCode, Error> {
    state.browser.close(&tab).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn activate(
    State(state): State<AppState>,
    Path(tab): Path<String>,
) -> Result<StatusCode, Error> {
    state.browser.activate(&tab).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn navigate(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<NavigateRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.navigate(&body).await?))
}

async fn back(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TabQuery>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.back(q.tab.as_deref()).await?))
}

async fn forward(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TabQuery>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.forward(q.tab.as_deref()).await?))
}

async fn reload(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TabQuery>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.reload(q.tab.as_deref()).await?))
}

async fn click(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<ClickRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.click(&body).await?))
}

async fn type_text(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<TypeRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.type_text(&body).await?))
}

async fn fill(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<FillRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.fill(&body).await?))
}

async fn press(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<PressRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.press(&body).await?))
}

async fn wait(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<WaitRequest>,
) -> Result<Json<PageResult>, Error> {
    Ok(Json(state.browser.wait(&body).await?))
}

async fn evaluate(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<EvaluateRequest>,
) -> Result<Json<EvaluateResult>, Error> {
    Ok(Json(state.browser.evaluate(&body).await?))
}

async fn screenshot(
    State(state): State<AppState>,
    StrictQuery(opts): StrictQuery<PageScreenshotOptions>,
) -> Result<Response, Error> {
    let (format, bytes) = state.browser.screenshot(&opts).await?;
    let mime = match format {
        PageImageFormat::Png => "image/png",
        PageImageFormat::Jpeg => "image/jpeg",
    };
    let size = crate::browser::image_size(&bytes);
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some((w, hgt)) = size {
        headers.insert(h::WIDTH, HeaderValue::from(w));
        headers.insert(h::HEIGHT, HeaderValue::from(hgt));
    }
    Ok(response)
}

async fn text(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TabQuery>,
) -> Result<Json<PageContent>, Error> {
    Ok(Json(state.browser.content(q.tab.as_deref(), false).await?))
}

async fn html(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TabQuery>,
) -> Result<Json<PageContent>, Error> {
    Ok(Json(state.browser.content(q.tab.as_deref(), true).await?))
}

async fn save_state(State(state): State<AppState>) -> Result<Json<StorageState>, Error> {
    Ok(Json(state.browser.save_state().await?))
}

async fn load_state(
    State(state): State<AppState>,
    StrictJson(body): StrictJson<StorageState>,
) -> Result<Json<LoadStateResult>, Error> {
    Ok(Json(state.browser.load_state(&body).await?))
}
