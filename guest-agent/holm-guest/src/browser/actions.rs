//! Element work in a page: finding an element and acting on it, keys, and
//! evaluating scripts.

use super::*;

/// Finds the element and waits for `state`, in the page. Answers
/// `{found, x, y, fillable}`; `action` is done on the element once found.
pub(super) const ELEMENT_SCRIPT: &str = r#"(async (selector, state, timeoutMs, action, value) => {
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

/// Parses a key or chord in the one key grammar (`docs/keys.md`), as a
/// page receives it: DevTools' modifier bits and the key's DOM event.
pub(super) fn parse_chord(chord: &str) -> Result<(i64, PageKey), ApiError> {
    let c = keys::page::parse_page_chord(chord).map_err(|e| {
        ApiError::invalid_fields(vec![Issue { path: "key".into(), problem: e.to_string() }])
    })?;
    Ok((i64::from(c.modifiers), c.key))
}

/// A named key, as a page receives it.
pub(super) fn named_key(name: &str) -> PageKey {
    keys::page::parse_page_chord(name).map(|c| c.key).unwrap_or_default()
}
impl Browser {
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
        let since = Since::now();
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
        self.result(id, since).await
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
        let since = Since::now();
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.focus(&page, req.selector.as_deref(), timeout).await?;
        for c in req.text.chars() {
            match c {
                '\n' | '\r' => press(&page, 0, &named_key("Enter")).await?,
                '\t' => press(&page, 0, &named_key("Tab")).await?,
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
        self.result(id, since).await
    }

    /// Sets a field's value at once.
    pub async fn fill(&self, req: &FillRequest) -> Result<PageResult, ApiError> {
        let since = Since::now();
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
        self.result(id, since).await
    }

    /// Presses a key or chord.
    pub async fn press(&self, req: &PressRequest) -> Result<PageResult, ApiError> {
        let since = Since::now();
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let (modifiers, key) = parse_chord(&req.key)?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.focus(&page, req.selector.as_deref(), timeout).await?;
        press(&page, modifiers, &key).await?;
        self.set_current(&id);
        self.result(id, since).await
    }

    /// Waits until an element is in a state.
    pub async fn wait(&self, req: &WaitRequest) -> Result<PageResult, ApiError> {
        let since = Since::now();
        let timeout =
            bounded(req.timeout_ms, ELEMENT_TIMEOUT_MS, MAX_ELEMENT_TIMEOUT_MS, "timeout_ms")?;
        let id = self.resolve(req.tab.as_deref()).await?;
        let page = self.page(&id).await?;
        self.element(&page, &req.selector, req.state.unwrap_or_default(), timeout, "none", None)
            .await?;
        self.result(id, since).await
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
}

/// An exception thrown by the page, as a `page_error`.
pub(super) fn check_exception(r: &Value) -> Result<(), ApiError> {
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

/// When a page tool began, in the page's clock (milliseconds since the
/// epoch): a document whose navigation started after it is new to the tool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Since(f64);

impl Since {
    pub(super) fn now() -> Self {
        let d =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Self(d.as_secs_f64() * 1000.0)
    }

    /// The URL and title, once what the tool did is on the screen (an
    /// expression for [`evaluate_value`]).
    ///
    /// - The frame after the one being made now has begun: the first
    ///   `requestAnimationFrame` runs before the next paint, the second once
    ///   that paint is done.
    /// - A document the tool navigated to (begun after [`Since`]) that has
    ///   painted nothing yet is also waited for until its first paint is
    ///   recorded, since Chromium records it once the frame was presented:
    ///   two frames alone answered, one time in a few hundred under full
    ///   load on Wayland, while the compositor still showed the old page.
    ///   A page that paints nothing but the default background has no first
    ///   paint; six frames end that wait.
    /// - A tab that is not shown paints nothing (answered at once), and a
    ///   page too busy to paint is waited for 3 s at most (1 s was too
    ///   short: with every CPU busy, a new page's first frames took longer).
    pub(super) fn after_a_frame(self) -> String {
        format!(
            "new Promise((resolve) => {{ \
            const done = () => resolve({{url: location.href, title: document.title}}); \
            if (document.visibilityState !== 'visible') {{ done(); return; }} \
            setTimeout(done, 3000); \
            let frames = 0; \
            let painted = performance.timeOrigin < {since} || performance.getEntriesByType('paint').length > 0; \
            const check = () => {{ if (frames >= 2 && (painted || frames >= 6)) done(); }}; \
            const tick = () => {{ frames += 1; check(); if (frames < 6) requestAnimationFrame(tick); }}; \
            requestAnimationFrame(tick); \
            if (!painted) new PerformanceObserver((l, o) => {{ o.disconnect(); painted = true; check(); }}).observe({{type: 'paint'}}); }})",
            since = self.0
        )
    }
}

/// Evaluates an expression (awaiting promises) and answers its JSON value.
pub(super) async fn evaluate_value(
    page: &Cdp,
    expression: &str,
    timeout_ms: u64,
) -> Result<Value, ApiError> {
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
pub(super) async fn press(page: &Cdp, modifiers: i64, k: &PageKey) -> Result<(), ApiError> {
    let PageKey { key, code, key_code: vk, text } = k;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse() {
        let (m, k) = parse_chord("Control+a").unwrap();
        assert_eq!(m, 2);
        assert_eq!((k.key.as_str(), k.code.as_str(), k.key_code), ("a", "KeyA", 65));
        let (m, k) = parse_chord("shift+Enter").unwrap();
        assert_eq!(m, 8);
        assert_eq!(k.key, "Enter");
        assert_eq!(parse_chord("Shift++").unwrap().1.key, "+");
        assert_eq!(parse_chord("+").unwrap().1.key, "+");
        assert_eq!(parse_chord("F5").unwrap().1.key_code, 116);
        assert_eq!(parse_chord("ArrowDown").unwrap().1.key, "ArrowDown");
        assert_eq!(parse_chord("Space").unwrap().1.key, " ");
        assert_eq!(parse_chord("é").unwrap().1.text.as_deref(), Some("é"));
        assert_eq!(parse_chord("Hyper+a").unwrap_err().code, ErrorCode::InvalidRequest);
        assert!(parse_chord("NoSuchKey").is_err());
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
}
