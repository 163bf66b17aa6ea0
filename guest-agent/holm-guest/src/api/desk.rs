//! Windows and the clipboard.
//!
//! - `GET /v1/windows`: every top-level window of every screen.
//! - `POST /v1/windows/{window}`: a [`WindowAction`]; the window manager is
//!   asked, then the route watches the listing (at most [`APPLY_WAIT`]) until
//!   the change shows, and answers the window as it is then.
//! - `GET /v1/clipboard`: the clipboard's types, text and PNG image.
//! - `PUT /v1/clipboard`: text, a PNG image or both; the guest owns the
//!   clipboard until an app copies something else.
//!
//! An unknown window, a size out of range, or an image that is not a PNG is
//! refused in the one error shape before anything changes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, State};
use base64::Engine as _;
use holm_proto::contract;
use holm_proto::desk::{
    Clipboard, ClipboardSet, MAX_CLIPBOARD_IMAGE, MAX_CLIPBOARD_TEXT, MAX_WINDOW_SIDE, Window,
    WindowActed, WindowAction,
};
use holm_proto::guest::Page;
use holm_proto::{ApiError, ErrorCode, Issue};

use super::AppState;
use super::error::Error;
use super::extract::StrictJson;
use super::table::Routes;
use crate::display::{Clip, Desktop, DisplayError};

/// How long an action's effect is watched for.
const APPLY_WAIT: Duration = Duration::from_secs(4);

/// How long a move or a resize must hold to count as applied.
const STEADY: Duration = Duration::from_millis(300);

/// How often the listing is read while watching.
const APPLY_POLL: Duration = Duration::from_millis(40);

pub(super) fn routes() -> Routes {
    // Base64 of the largest image, and room for the rest of the body.
    let limit = MAX_CLIPBOARD_IMAGE / 3 * 4 + MAX_CLIPBOARD_TEXT * 2 + 4096;
    Routes::default()
        .on(&contract::WINDOWS.route, list)
        .on(&contract::WINDOW.route, act)
        .on(&contract::CLIPBOARD.route, get_clipboard)
        .on_with(&contract::SET_CLIPBOARD.route, set_clipboard, move |m| {
            m.layer(DefaultBodyLimit::max(limit))
        })
}

fn display_error(server: &str, e: DisplayError) -> Error {
    match e {
        DisplayError::Gone(why) => {
            tracing::info!(why, "{server} not answering");
            Error(ApiError::new(ErrorCode::NotReady, format!("the {server} is not answering")))
        }
        DisplayError::Unsupported(why) => Error(ApiError::new(ErrorCode::Unsupported, why)),
        DisplayError::Failed(why) => Error::internal(why),
    }
}

async fn blocking<T: Send + 'static>(
    desktop: &Arc<dyn Desktop>,
    f: impl FnOnce(&dyn Desktop) -> Result<T, DisplayError> + Send + 'static,
) -> Result<T, Error> {
    let desktop = Arc::clone(desktop);
    let server = desktop.server_name();
    tokio::task::spawn_blocking(move || f(desktop.as_ref()))
        .await
        .map_err(Error::internal)?
        .map_err(|e| display_error(server, e))
}

async fn list(State(state): State<AppState>) -> Result<Json<Page<Window>>, Error> {
    Ok(Json(Page::all(blocking(&state.desktop, |d| d.windows()).await?)))
}

fn invalid(path: &str, problem: impl Into<String>) -> Error {
    Error(ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem: problem.into() }]))
}

fn check(action: &WindowAction) -> Result<(), Error> {
    if let WindowAction::Resize { width, height } = *action {
        for (name, v) in [("width", width), ("height", height)] {
            if !(1..=MAX_WINDOW_SIDE).contains(&v) {
                return Err(invalid(name, format!("must be 1 to {MAX_WINDOW_SIDE}, not {v}")));
            }
        }
    }
    Ok(())
}

/// Whether `now` (the window's listing, `None` once gone) shows `action`.
fn applied(action: &WindowAction, now: Option<&Window>) -> bool {
    match (*action, now) {
        (WindowAction::Close, gone) => gone.is_none(),
        (_, None) => false,
        (WindowAction::Focus, Some(w)) => w.focused,
        (WindowAction::Move { x, y }, Some(w)) => (w.x, w.y) == (x, y),
        (WindowAction::Resize { width, height }, Some(w)) => (w.width, w.height) == (width, height),
    }
}

async fn act(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    StrictJson(action): StrictJson<WindowAction>,
) -> Result<Json<WindowActed>, Error> {
    check(&action)?;
    let unknown = || {
        Error(
            ApiError::new(ErrorCode::NotFound, format!("there is no window {raw:?}"))
                .with_hint("GET /v1/windows lists the windows and their ids"),
        )
    };
    let id = raw.parse::<u64>().map_err(|_| unknown())?;
    let action2 = action;
    let found = blocking(&state.desktop, move |d| {
        let Some(w) = d.windows()?.into_iter().find(|w| w.id == id) else { return Ok(None) };
        d.act(&w, &action2)?;
        Ok(Some(w))
    })
    .await?;
    if found.is_none() {
        return Err(unknown());
    }
    let deadline = Instant::now() + APPLY_WAIT;
    // A client busy with an earlier change may miss a move or a resize, or
    // answer the earlier one after it (Chromium on sway, made floating,
    // takes its floating size late); a window manager may hand the focus
    // to a window mapped just before (fluxbox focuses new windows a moment
    // after it lists them): the change must hold for STEADY, and is asked
    // again (at most twice) when it did not show or did not hold.
    let idempotent = !matches!(action, WindowAction::Close);
    let (mut asks, mut since) = (0, None::<Instant>);
    let mut last_ask = Instant::now();
    loop {
        let now =
            blocking(&state.desktop, move |d| Ok(d.windows()?.into_iter().find(|w| w.id == id)))
                .await?;
        let done = applied(&action, now.as_ref());
        let at = Instant::now();
        since = if done { since.or(Some(at)) } else { None };
        let steady = !idempotent || since.is_some_and(|t| at - t >= STEADY);
        if (done && steady) || at >= deadline {
            return Ok(Json(WindowActed { applied: done, window: now }));
        }
        if idempotent && !done && asks < 2 && at - last_ask >= APPLY_WAIT / 4 {
            asks += 1;
            last_ask = at;
            if let Some(w) = now {
                blocking(&state.desktop, move |d| d.act(&w, &action)).await?;
            }
        }
        tokio::time::sleep(APPLY_POLL).await;
    }
}

async fn get_clipboard(State(state): State<AppState>) -> Result<Json<Clipboard>, Error> {
    let clip = blocking(&state.desktop, |d| d.clipboard()).await?;
    Ok(Json(to_wire(clip)))
}

fn to_wire(clip: Clip) -> Clipboard {
    Clipboard {
        types: clip.types,
        text: clip.text,
        png_base64: clip.png.map(|p| base64::engine::general_purpose::STANDARD.encode(p)),
    }
}

/// Checks what is to be set: some text, or bytes that are a PNG image.
fn to_clip(set: ClipboardSet) -> Result<Clip, Error> {
    if set.text.is_none() && set.png_base64.is_none() {
        return Err(invalid("text", "give text, png_base64, or both"));
    }
    if let Some(t) = &set.text
        && t.len() > MAX_CLIPBOARD_TEXT
    {
        return Err(invalid("text", format!("at most {MAX_CLIPBOARD_TEXT} bytes")));
    }
    let png = match &set.png_base64 {
        None => None,
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| invalid("png_base64", format!("is not base64: {e}")))?;
            if bytes.len() > MAX_CLIPBOARD_IMAGE {
                return Err(invalid("png_base64", format!("at most {MAX_CLIPBOARD_IMAGE} bytes")));
            }
            png::Decoder::new(std::io::Cursor::new(&bytes))
                .read_info()
                .map_err(|e| invalid("png_base64", format!("is not a PNG image: {e}")))?;
            Some(bytes)
        }
    };
    let mut clip = Clip { types: Vec::new(), text: set.text, png };
    clip.types = clip.offered();
    Ok(clip)
}

async fn set_clipboard(
    State(state): State<AppState>,
    StrictJson(set): StrictJson<ClipboardSet>,
) -> Result<Json<Clipboard>, Error> {
    let clip = to_clip(set)?;
    let answer = to_wire(clip.clone());
    blocking(&state.desktop, move |d| d.set_clipboard(clip)).await?;
    Ok(Json(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pngs_and_text_are_set() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let none = to_clip(ClipboardSet::default()).unwrap_err();
        assert_eq!(none.0.code, ErrorCode::InvalidRequest);
        let jpeg = ClipboardSet {
            png_base64: Some(b64(b"\xff\xd8\xff\xe0 not a png")),
            text: None,
            sensitive: false,
        };
        assert!(to_clip(jpeg).unwrap_err().0.message.contains("png_base64"));
        let junk = ClipboardSet { png_base64: Some("%%%".into()), text: None, sensitive: false };
        assert!(to_clip(junk).is_err());
        let text =
            to_clip(ClipboardSet { text: Some("hi".into()), png_base64: None, sensitive: false })
                .unwrap();
        assert!(text.types.contains(&"UTF8_STRING".to_owned()) && text.png.is_none());
        assert!(check(&WindowAction::Resize { width: 0, height: 5 }).is_err());
        assert!(check(&WindowAction::Resize { width: 16385, height: 5 }).is_err());
        assert!(check(&WindowAction::Resize { width: 300, height: 200 }).is_ok());
    }
}
