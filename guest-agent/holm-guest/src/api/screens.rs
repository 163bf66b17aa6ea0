//! The screen routes: a screen, its pointer, screenshots and input.
//!
//! - `GET /v1/screens/{screen}`: a [`Screen`].
//! - `GET /v1/screens/{screen}/cursor`: a [`CursorPosition`].
//! - `GET /v1/screens/{screen}/screenshot?format=&quality=&region=&max_width=&max_height=&scale=&cursor=`:
//!   the raw image, described by the `x-holm-*` headers of
//!   [`holm_proto::guest::headers`]. The `ETag` is the frame tag (xxh3 of the
//!   pixels, seeded with the options); `If-None-Match` with it answers 304
//!   without encoding anything.
//! - `POST /v1/screens/{screen}/input`: an [`InputRequest`]; answers an
//!   [`InputResult`], or with `screenshot` the image taken after the actions
//!   (and after settling), with `x-holm-settled` when `settle` was asked for.
//!
//! A screen index that does not exist is `not_found` naming the screens; a
//! screen whose X server is not up (after a short wait) is `not_ready`.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use holm_proto::guest::{
    CursorPosition, InputRequest, InputResult, Point, Screen, ScreenshotOptions, headers as h,
};
use holm_proto::{ApiError, ErrorCode, ErrorDetails, Issue};

use holm_proto::contract;

use super::AppState;
use super::error::Error;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;
use crate::display::{Desktop, DisplayError};
use crate::image::{self, Plan};

/// How long a request waits for a screen's X server to come up.
const READY_WAIT: Duration = Duration::from_secs(5);

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::SCREEN.route, screen)
        .on(&contract::CURSOR.route, cursor)
        .on(&contract::SCREENSHOT, screenshot)
        .on(&contract::INPUT, input)
}

/// What can go wrong in the blocking part of a request.
enum Fail {
    X(u8, DisplayError),
    Invalid(Vec<Issue>),
    Encode(String),
    Stopped { screen: u8, performed: usize, error: DisplayError },
    Join(String),
}

impl Fail {
    fn into_error(self, server: &str) -> Error {
        match self {
            Self::X(screen, e) => x_error(server, screen, e, None),
            Self::Invalid(issues) => Error(ApiError::invalid_fields(issues)),
            Self::Encode(e) => Error::internal(e),
            Self::Stopped { screen, performed, error } => {
                x_error(server, screen, error, Some(performed))
            }
            Self::Join(e) => Error::internal(e),
        }
    }
}

fn x_error(server: &str, screen: u8, e: DisplayError, performed: Option<usize>) -> Error {
    let details = performed.map(|n| serde_json::json!({ "screen": screen, "performed": n }));
    let with = |err: ApiError| match &details {
        Some(d) => err.with_details(d.clone()),
        None => err.with_details(serde_json::json!({ "screen": screen })),
    };
    match e {
        DisplayError::Gone(why) => {
            tracing::info!(screen, why, "{server} not answering");
            let ran = performed.map(|n| format!("; {n} actions ran")).unwrap_or_default();
            Error(
                ApiError::new(
                    ErrorCode::NotReady,
                    format!("the {server} of screen {screen} is not answering{ran}"),
                )
                .with_kind(ErrorDetails::ScreenStarting { screen, performed }),
            )
        }
        DisplayError::Unsupported(why) => Error(with(ApiError::new(ErrorCode::Unsupported, why))),
        DisplayError::Failed(why) => Error::internal(format!("screen {screen}: {why}")),
    }
}

/// Parses `{screen}` and waits briefly for its X server.
pub(super) async fn ready(state: &AppState, raw: &str) -> Result<u8, Error> {
    let count = state.desktop.len();
    let index = raw.parse::<u8>().ok().filter(|i| usize::from(*i) < count);
    let Some(index) = index else {
        let list: Vec<usize> = (0..count).collect();
        let names = list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        return Err(Error(
            ApiError::new(
                ErrorCode::NotFound,
                format!("there is no screen {raw:?}; this box has screens {names}"),
            )
            .with_details(serde_json::json!({ "screens": list })),
        ));
    };
    if !state.supervisor.display_ready(index)
        && !state.supervisor.wait_display(index, READY_WAIT).await
    {
        return Err(Error(
            ApiError::new(
                ErrorCode::NotReady,
                format!("the {} of screen {index} is not up yet", state.desktop.server_name()),
            )
            .with_kind(ErrorDetails::ScreenStarting { screen: index, performed: None }),
        ));
    }
    Ok(index)
}

/// Runs blocking display work for screen `index` on the blocking pool.
async fn blocking<T: Send + 'static>(
    desktop: &Arc<dyn Desktop>,
    f: impl FnOnce(&dyn Desktop) -> Result<T, Fail> + Send + 'static,
) -> Result<T, Error> {
    let desktop = Arc::clone(desktop);
    let server = desktop.server_name();
    let joined = tokio::task::spawn_blocking(move || f(desktop.as_ref())).await;
    match joined {
        Ok(r) => r.map_err(|f| f.into_error(server)),
        Err(e) => Err(Fail::Join(format!("blocking task: {e}")).into_error(server)),
    }
}

async fn screen(
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Json<Screen>, Error> {
    let count = state.desktop.len();
    let index = raw.parse::<u8>().ok().filter(|i| usize::from(*i) < count);
    // Not ready is an answer here (`ready: false`), not an error.
    let index = match index {
        Some(i) => i,
        None => ready(&state, &raw).await?,
    };
    let mut info = super::core::screen_list(&state)
        .into_iter()
        .nth(usize::from(index))
        .ok_or_else(|| Error::internal("screen list is short"))?;
    if info.ready {
        let size =
            blocking(&state.desktop, move |d| d.size(index).map_err(|e| Fail::X(index, e))).await;
        if let Ok((w, h)) = size {
            info.width = w;
            info.height = h;
        }
    }
    Ok(Json(info))
}

async fn cursor(
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Json<CursorPosition>, Error> {
    let index = ready(&state, &raw).await?;
    let (x, y) =
        blocking(&state.desktop, move |d| d.pointer(index).map_err(|e| Fail::X(index, e))).await?;
    Ok(Json(CursorPosition { screen: index, x, y }))
}

/// A screenshot, encoded or known to be unchanged.
struct Shot {
    plan: Plan,
    tag: u64,
    pointer: Option<(i32, i32)>,
    /// `None` when `If-None-Match` matched.
    body: Option<bytes::Bytes>,
}

/// Captures, draws the pointer when asked, tags, and encodes unless the tag
/// matches `if_none_match`.
fn shoot(
    desktop: &dyn Desktop,
    encoded: &image::LastEncoded,
    index: u8,
    plan: Plan,
    if_none_match: Option<&str>,
) -> Result<Shot, Fail> {
    let captured =
        desktop.capture(index, plan.region, plan.cursor).map_err(|e| Fail::X(index, e))?;
    let mut frame = captured.frame;
    if let Some(cursor) = &captured.cursor {
        image::draw_cursor(&mut frame, (plan.region.x, plan.region.y), cursor);
    }
    let tag = image::frame_tag(&frame, &plan);
    if if_none_match.is_some_and(|v| image::if_none_match(v, tag)) {
        return Ok(Shot { plan, tag, pointer: captured.pointer, body: None });
    }
    let bytes = encoded
        .get_or_render(index, tag, || image::render(&frame, &plan).map(|(b, _)| b))
        .map_err(Fail::Encode)?;
    Ok(Shot { plan, tag, pointer: captured.pointer, body: Some(bytes) })
}

fn shot_response(shot: Shot, settled: Option<bool>) -> Response {
    let mut headers = HeaderMap::new();
    let mut put = |name: &'static str, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    };
    put(h::WIDTH, shot.plan.out_width.to_string());
    put(h::HEIGHT, shot.plan.out_height.to_string());
    put(h::SCALE, image::format_scale(shot.plan.scale));
    put(h::REGION, shot.plan.region.to_string());
    if let Some((x, y)) = shot.pointer {
        put(h::CURSOR, format!("{x},{y}"));
    }
    if let Some(s) = settled {
        put(h::SETTLED, s.to_string());
    }
    put("etag", image::etag(shot.tag));
    // The same URL gives a new frame each time: caches must ask again.
    put("cache-control", "no-cache".into());
    match shot.body {
        None => (StatusCode::NOT_MODIFIED, headers).into_response(),
        Some(body) => {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(shot.plan.format.mime()));
            (StatusCode::OK, headers, body).into_response()
        }
    }
}

async fn screenshot(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    request_headers: HeaderMap,
    StrictQuery(opts): StrictQuery<ScreenshotOptions>,
) -> Result<Response, Error> {
    let index = ready(&state, &raw).await?;
    let inm =
        request_headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let encoded = Arc::clone(&state.encoded);
    let shot = blocking(&state.desktop, move |d| {
        let (w, h) = d.size(index).map_err(|e| Fail::X(index, e))?;
        let plan = image::plan(&opts, w, h, "").map_err(Fail::Invalid)?;
        shoot(d, &encoded, index, plan, inm.as_deref())
    })
    .await?;
    Ok(shot_response(shot, None))
}

async fn input(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    StrictJson(req): StrictJson<InputRequest>,
) -> Result<Response, Error> {
    let index = ready(&state, &raw).await?;
    let encoded = Arc::clone(&state.encoded);
    let outcome = blocking(&state.desktop, move |d| {
        // One request's actions at a time on a screen.
        let _turn = d.input_turn(index);
        let (w, h) = d.size(index).map_err(|e| Fail::X(index, e))?;
        // Everything is checked before anything is done.
        let checked = crate::input::check(&req, w, h);
        let plan = req.screenshot.as_ref().map(|o| image::plan(o, w, h, "screenshot."));
        let (checked, plan) = match (checked, plan.transpose()) {
            (Ok(c), Ok(p)) => (c, p),
            (c, p) => {
                let mut issues = c.err().unwrap_or_default();
                issues.extend(p.err().unwrap_or_default());
                return Err(Fail::Invalid(issues));
            }
        };
        d.run(index, &checked.ops).map_err(|stop| Fail::Stopped {
            screen: index,
            performed: stop.performed,
            error: stop.error,
        })?;
        let performed = checked.ops.len();
        let settled = match checked.settle {
            Some(settle) => Some(d.settle(index, settle).map_err(|e| Fail::Stopped {
                screen: index,
                performed,
                error: e,
            })?),
            None => None,
        };
        match plan {
            Some(plan) => Ok(Err((shoot(d, &encoded, index, plan, None)?, settled))),
            None => {
                // Where the pointer is, when the display server can say.
                // After a settle a person may have moved it meanwhile.
                let cursor =
                    if settled.is_some() { d.pointer(index) } else { d.pointer_after_input(index) };
                let cursor = match cursor {
                    Ok((x, y)) => Some(Point { x, y }),
                    Err(DisplayError::Unsupported(_)) => None,
                    Err(e) => return Err(Fail::X(index, e)),
                };
                Ok(Ok(InputResult { performed, cursor, settled }))
            }
        }
    })
    .await?;
    Ok(match outcome {
        Ok(result) => {
            let settled = result.settled;
            let mut response = Json(result).into_response();
            if let Some(s) = settled {
                response
                    .headers_mut()
                    .insert(h::SETTLED, HeaderValue::from_static(if s { "true" } else { "false" }));
            }
            response
        }
        Err((shot, settled)) => shot_response(shot, settled),
    })
}
