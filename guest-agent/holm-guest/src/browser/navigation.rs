//! Loading a URL in a tab and waiting for the lifecycle event asked for.

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
