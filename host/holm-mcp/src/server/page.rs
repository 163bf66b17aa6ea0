//! The page tools: `page` (one browser action a call), `page_content` and
//! `page_screenshot`.

use super::*;

impl HolmMcp {
    pub(super) async fn page(&self, a: PageArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let b = self.client.boxed(&a.box_id);
        let PageArgs {
            action,
            tab,
            url,
            selector,
            text,
            value,
            key,
            expression,
            await_promise,
            wait_until,
            state,
            button,
            count,
            timeout_ms,
            sensitive,
            ..
        } = a;
        // `parse_page` checked that the action has what it needs; this only
        // keeps a missing field an answer rather than a panic.
        let need = |v: Option<String>, field: &str| {
            v.ok_or_else(|| invalid(field, format!("{} needs {field}", action.as_str())))
        };
        let (did, result) = match action {
            PageAction::Navigate => {
                let url = need(url, "url")?;
                let request = NavigateRequest { url, tab, wait_until, timeout_ms };
                ("loaded the page".to_owned(), b.navigate_with(&request).await)
            }
            PageAction::Click => {
                let selector = need(selector, "selector")?;
                let did = format!("clicked {selector}");
                let request = ClickRequest { selector, tab, button, count, timeout_ms };
                (did, b.page_click_with(&request).await)
            }
            PageAction::Type => {
                let text = need(text, "text")?;
                let did = format!("typed {} character(s)", text.chars().count());
                let request = TypeRequest { text, selector, tab, timeout_ms, sensitive };
                (did, b.page_type_with(&request).await)
            }
            PageAction::Fill => {
                let selector = need(selector, "selector")?;
                let value = need(value, "value")?;
                let did = format!("filled {selector}");
                let request = FillRequest { selector, value, tab, timeout_ms, sensitive };
                (did, b.page_fill_with(&request).await)
            }
            PageAction::Press => {
                let key = need(key, "key")?;
                let did = format!("pressed {key}");
                let request = PressRequest { key, selector, tab, timeout_ms };
                (did, b.page_press_with(&request).await)
            }
            PageAction::Wait => {
                let selector = need(selector, "selector")?;
                let did = format!("{selector} is {}", state.unwrap_or_default());
                let request = WaitRequest { selector, state, tab, timeout_ms };
                (did, b.page_wait_with(&request).await)
            }
            PageAction::Evaluate => {
                let expression = need(expression, "expression")?;
                let request = EvaluateRequest { expression, tab, await_promise, timeout_ms };
                let r = b.evaluate_with(&request).await.map_err(from_client)?;
                return Ok(evaluate_result(r));
            }
            PageAction::OpenTab => {
                let t = b
                    .open_tab(&OpenTab { url, wait_until, timeout_ms })
                    .await
                    .map_err(from_client)?;
                let summary = format!(
                    "opened tab {} at {} ({:?}); it is the current tab",
                    t.id, t.url, t.title
                );
                return Ok(json_result(Some(summary), to_value(&t)));
            }
            PageAction::CloseTab => {
                let tab = need(tab, "tab")?;
                b.close_tab(&tab).await.map_err(from_client)?;
                return Ok(json_result(
                    Some(format!("closed tab {tab}; list_tabs shows the current one")),
                    json!({ "closed": tab }),
                ));
            }
            PageAction::ActivateTab => {
                let tab = need(tab, "tab")?;
                b.activate_tab(&tab).await.map_err(from_client)?;
                return Ok(json_result(
                    Some(format!("tab {tab} is in front and current")),
                    json!({ "current": tab }),
                ));
            }
        };
        let r: PageResult = result.map_err(from_client)?;
        let summary = format!("{did}; tab {} is at {} ({:?})", r.tab, r.url, r.title);
        Ok(json_result(Some(summary), to_value(&r)))
    }

    pub(super) async fn page_content(
        &self,
        a: PageContentArgs,
        html: bool,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let max = a.max_bytes.unwrap_or(PAGE_DEFAULT_BYTES);
        if !(1..=READ_MAX_BYTES).contains(&max) {
            return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
        }
        let b = self.client.boxed(&a.box_id);
        let page = if html {
            b.page_html(a.tab.as_deref()).await
        } else {
            b.page_text(a.tab.as_deref()).await
        }
        .map_err(from_client)?;
        let mut content = page.content;
        let whole = content.len();
        let truncated = whole > max as usize;
        content.truncate(char_boundary(&content, max as usize));
        let about = json!({
            "tab": page.tab,
            "url": page.url,
            "title": page.title,
            "bytes": content.len(),
            "total_bytes": whole,
            "truncated": truncated,
        });
        Ok(CallToolResult::success(vec![
            ContentBlock::text(content),
            ContentBlock::text(about.to_string()),
        ]))
    }

    pub(super) async fn page_screenshot(
        &self,
        a: PageScreenshotArgs,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let options = PageScreenshotOptions {
            tab: a.tab,
            format: Some(match a.format {
                ShotFormat::Png => PageImageFormat::Png,
                ShotFormat::Jpeg => PageImageFormat::Jpeg,
            }),
            quality: None,
            full_page: a.full_page.then_some(true),
        };
        let shot =
            self.client.boxed(&a.box_id).page_screenshot(&options).await.map_err(from_client)?;
        let mime = match shot.format {
            PageImageFormat::Png => "image/png",
            PageImageFormat::Jpeg => "image/jpeg",
        };
        let what = if a.full_page { "the whole page" } else { "the viewport" };
        let line = format!(
            "Page screenshot of {what}: image {}x{} pixels. Its pixels are the page's, not the \
             screen's: page takes CSS selectors, and desktop takes what screenshot shows.",
            shot.width, shot.height
        );
        Ok(CallToolResult::success(vec![
            ContentBlock::image(BASE64.encode(&shot.bytes), mime),
            ContentBlock::text(line),
        ]))
    }
}

/// An evaluated value: whole, or (when its JSON is longer than a model
/// should read) the first `PAGE_DEFAULT_BYTES` of its JSON, said so.
pub(super) fn evaluate_result(r: EvaluateResult) -> CallToolResult {
    let json_text = r.value.to_string();
    let limit = PAGE_DEFAULT_BYTES as usize;
    if json_text.len() <= limit {
        return json_result(None, to_value(&r));
    }
    let prefix = &json_text[..char_boundary(&json_text, limit)];
    let summary = format!(
        "the value's JSON is {} bytes; value_json holds its first {}; evaluate a smaller part \
         of it for the rest",
        json_text.len(),
        prefix.len()
    );
    json_result(
        Some(summary),
        json!({ "type": r.kind, "truncated": true, "bytes": json_text.len(), "value_json": prefix }),
    )
}

/// The largest index at most `max` that is a character boundary of `s`.
pub(super) fn char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}
