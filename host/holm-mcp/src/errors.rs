//! Failures as tool results.
//!
//! A user's mistake (bad arguments, an unknown box or runtime, a box that is
//! not running...) is a tool result with `isError: true`, never a protocol
//! error: hosts show a protocol error to nobody, while a tool result reaches
//! the model, which can fix its call. The result carries the one error shape:
//! a text block with the code, the message, each wrong field, the hint and
//! the request id, and the same error as `{"error": {...}}` in
//! `structuredContent`.

use holm_client::ClientError;
use holm_proto::ApiError;
use rmcp::model::{CallToolResult, ContentBlock};

/// A new request id, such as `req_5f2c9a0e1b7d4c3a`, for a refusal made
/// here, before any REST call could give one (the same form as holmd's).
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 8];
    // The kernel's random source does not fail on Linux; an id of zeros
    // would still be a valid (if unhelpful) id.
    let _ = getrandom::fill(&mut bytes);
    let mut id = String::from("req_");
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The one error shape for any failure of a client call.
pub fn from_client(e: ClientError) -> ApiError {
    match e {
        ClientError::Api(api) => in_tool_terms(api),
        ClientError::Protocol { url, message } => {
            tracing::warn!(url = %url, message = %message, "holmd answered something unexpected");
            ApiError::internal()
        }
        transport => transport.to_api_error(),
    }
}

/// REST's hints name REST routes; a model has tools instead. The code,
/// message, details and request id stay as REST gave them.
fn in_tool_terms(mut e: ApiError) -> ApiError {
    if let Some(hint) = &e.hint {
        let tools = if hint.contains("wait_for=running") {
            Some("launch_box waits for a box to run; list_boxes shows its state")
        } else if hint.contains("GET /v1/boxes lists") {
            Some("list_boxes lists the boxes")
        } else if hint.contains("GET the box") {
            Some("the box may be stopping; list_boxes shows its state")
        } else if hint.contains("/v1/browser/tabs lists") {
            Some("list_tabs lists the tabs")
        } else if hint.contains("restarting; GET /health") {
            Some("it may be starting or restarting; try again in a few seconds")
        } else if hint.contains("with the browser on") {
            Some("this box runs no browser; launch_box starts boxes with one")
        } else {
            None
        };
        if let Some(t) = tools {
            e.hint = Some(t.to_owned());
        }
    }
    e
}

/// A failure as a tool result, with `request_id` filled in when the error
/// has none.
pub fn tool_error(mut error: ApiError, request_id: &str) -> CallToolResult {
    if error.request_id.is_none() {
        error.request_id = Some(request_id.to_owned());
    }
    let text = describe(&error);
    let structured = serde_json::to_value(error.into_body()).unwrap_or(serde_json::Value::Null);
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// The error as a model reads it: `error[code]: message`, one line per wrong
/// field, the hint, and the request id.
pub fn describe(e: &ApiError) -> String {
    let mut out = format!("error[{}]: {}", e.code, e.message);
    if let Some(issues) =
        e.details.as_ref().and_then(|d| d.get("issues")).and_then(|i| i.as_array())
    {
        for issue in issues {
            let path = issue.get("path").and_then(|v| v.as_str()).unwrap_or("");
            let problem = issue.get("problem").and_then(|v| v.as_str()).unwrap_or("");
            out.push_str(&format!("\n  {path}: {problem}"));
        }
    }
    if let Some(hint) = &e.hint {
        out.push_str(&format!("\nhint: {hint}"));
    }
    if let Some(id) = &e.request_id {
        out.push_str(&format!("\nrequest_id: {id}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use holm_proto::{ErrorCode, Issue};

    use super::*;

    fn text_of(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn an_error_is_a_tool_result_with_the_whole_shape() {
        let e = ApiError::new(ErrorCode::NotFound, "there is no box \"box_x\"")
            .with_hint("list_boxes lists the boxes")
            .with_request_id("req_0123456789abcdef");
        let r = tool_error(e, "req_unused");
        assert_eq!(r.is_error, Some(true));
        let text = text_of(&r);
        assert!(text.starts_with("error[not_found]: there is no box"), "{text}");
        assert!(text.contains("hint: list_boxes lists the boxes"), "{text}");
        assert!(text.contains("request_id: req_0123456789abcdef"), "{text}");
        let s = r.structured_content.unwrap();
        assert_eq!(s["error"]["code"], "not_found");
        assert_eq!(s["error"]["request_id"], "req_0123456789abcdef");
    }

    #[test]
    fn a_refusal_made_here_gets_a_request_id_and_names_each_field() {
        let e = ApiError::invalid_fields(vec![
            Issue { path: "actions[0].buton".into(), problem: "unknown field".into() },
            Issue { path: "scren".into(), problem: "unknown field".into() },
        ]);
        let id = new_request_id();
        assert!(id.starts_with("req_") && id.len() == 20, "{id}");
        assert_ne!(id, new_request_id());
        let r = tool_error(e, &id);
        let text = text_of(&r);
        assert!(text.starts_with("error[invalid_request]"), "{text}");
        assert!(text.contains("\n  actions[0].buton: unknown field"), "{text}");
        assert!(text.contains("\n  scren: unknown field"), "{text}");
        assert!(text.contains(&format!("request_id: {id}")), "{text}");
        assert!(text.contains("hint: "), "{text}");
    }

    #[test]
    fn a_protocol_surprise_carries_no_detail() {
        let e = from_client(ClientError::Protocol {
            url: "http://127.0.0.1:8080/v1/boxes".into(),
            message: "internal detail".into(),
        });
        assert_eq!(e.code, ErrorCode::Internal);
        assert!(!e.message.contains("internal detail"));
    }

    #[test]
    fn rest_hints_become_tool_hints() {
        let e = ApiError::new(ErrorCode::NotFound, "there is no box \"box_x\"")
            .with_hint("GET /v1/boxes lists the boxes")
            .with_request_id("req_1");
        let e = from_client(ClientError::Api(e));
        assert_eq!(e.hint.as_deref(), Some("list_boxes lists the boxes"));
        assert_eq!(e.request_id.as_deref(), Some("req_1"));
        let e = ApiError::new(ErrorCode::NotReady, "box box_x is still starting")
            .with_hint("wait with GET /v1/boxes/box_x?wait_for=running");
        assert!(from_client(ClientError::Api(e)).hint.unwrap().contains("list_boxes"));
        let e =
            ApiError::new(ErrorCode::UnknownRuntime, "no runtime").with_hint("use one of: docker");
        assert_eq!(from_client(ClientError::Api(e)).hint.as_deref(), Some("use one of: docker"));
    }

    #[test]
    fn browser_hints_become_tool_hints() {
        // The guest's own hints, as it writes them.
        for (hint, tools) in [
            ("GET /v1/browser/tabs lists the tabs", "list_tabs lists the tabs"),
            (
                "it may be starting or restarting; GET /health shows it",
                "it may be starting or restarting; try again in a few seconds",
            ),
            ("create the box with the browser on", "this box runs no browser; launch_box"),
        ] {
            let e = ApiError::new(ErrorCode::NotFound, "x").with_hint(hint);
            let got = from_client(ClientError::Api(e)).hint.unwrap();
            assert!(got.starts_with(tools), "{hint} became {got}");
            assert!(!got.contains("/v1/") && !got.contains("GET "), "{got}");
        }
    }
}
