//! Failures as tool results.
//!
//! A user's mistake (bad arguments, an unknown box or runtime, a box that is
//! not running...) is a tool result with `isError: true`, never a protocol
//! error: hosts show a protocol error to nobody, while a tool result reaches
//! the model, which can fix its call. The result carries the one error shape:
//! a text block with the code, the message, each wrong field, the hint and
//! the request id ([`ApiError::describe`], the CLI's rendering too), and the
//! same error as `{"error": {...}}` in `structuredContent`. The hint is
//! worded here, in tool terms, from the error's typed details.

use holm_client::ClientError;
use holm_proto::{ApiError, NextStep};
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

/// The one error shape for any failure of a client call, with the hint in
/// tool terms when REST's error has typed details.
pub fn from_client(e: ClientError) -> ApiError {
    match e {
        ClientError::Api(api) => api.worded_by(tool_hint),
        ClientError::Protocol { url, message } => {
            tracing::warn!(url = %url, message = %message, "holmd answered something unexpected");
            ApiError::internal()
        }
        transport => transport.to_api_error(),
    }
}

/// The next step of an error in MCP's terms: the tools. REST's hints name
/// routes; a model has tools instead. A step no tool takes (changing a
/// runtime) keeps REST's hint.
pub fn tool_hint(step: NextStep<'_>) -> Option<String> {
    Some(
        match step {
            NextStep::ListBoxes => "list_boxes lists the boxes",
            NextStep::ShowBox { .. } => "list_boxes shows its state",
            NextStep::CheckBox { .. } => "the box may be stopping; list_boxes shows its state",
            NextStep::WaitUntilRunning { .. } => {
                "launch_box waits for a box to run; list_boxes shows its state"
            }
            NextStep::ResumeFirst { .. } => "resume it first: box with action resume",
            NextStep::CreateBox | NextStep::ClaimByCreate => "launch_box starts a new box",
            NextStep::CreateBoxWithBrowser => {
                "this box runs no browser; launch_box starts boxes with one"
            }
            NextStep::RetrySoon => "it may be starting or restarting; try again in a few seconds",
            NextStep::ListTabs => "list_tabs lists the tabs",
            NextStep::ShowRuntime { .. } => "list_runtimes says what each runtime can do",
            NextStep::AddRuntime => "list_runtimes lists the runtimes there are",
            NextStep::ChangeRuntime { .. } => return None,
        }
        .to_owned(),
    )
}

/// A failure as a tool result, with `request_id` filled in when the error
/// has none.
pub fn tool_error(mut error: ApiError, request_id: &str) -> CallToolResult {
    if error.request_id.is_none() {
        error.request_id = Some(request_id.to_owned());
    }
    let text = error.describe();
    let structured = serde_json::to_value(error.into_body()).unwrap_or(serde_json::Value::Null);
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

#[cfg(test)]
mod tests {
    use holm_proto::{ErrorCode, ErrorDetails, Issue};

    use super::*;

    use crate::args::testing::text as text_of;

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

    fn refused(details: ErrorDetails, rest_hint: &str) -> ClientError {
        ClientError::Api(
            ApiError::new(ErrorCode::NotFound, "x")
                .with_kind(details)
                .with_hint(rest_hint)
                .with_request_id("req_1"),
        )
    }

    #[test]
    fn typed_errors_are_worded_in_tool_terms() {
        let e = from_client(refused(
            ErrorDetails::NoSuchBox { box_id: "box_x".into() },
            "GET /v1/boxes lists the boxes",
        ));
        assert_eq!(e.hint.as_deref(), Some("list_boxes lists the boxes"));
        assert_eq!(e.request_id.as_deref(), Some("req_1"));
        // The REST wording does not matter: only the kind does.
        let e = from_client(refused(ErrorDetails::BoxStarting { box_id: "box_x".into() }, "?"));
        assert!(e.hint.unwrap().starts_with("launch_box waits"));
        let e = ApiError::new(ErrorCode::UnknownRuntime, "no runtime")
            .with_kind(ErrorDetails::UnknownRuntime { runtime: "x".into(), known: vec![] })
            .with_hint("use one of: docker");
        assert_eq!(from_client(ClientError::Api(e)).hint.as_deref(), Some("use one of: docker"));
        // An error without a kind keeps its hint as it came.
        let e = ApiError::new(ErrorCode::Conflict, "x").with_hint("GET /v1/boxes lists the boxes");
        let e = from_client(ClientError::Api(e));
        assert_eq!(e.hint.as_deref(), Some("GET /v1/boxes lists the boxes"));
    }

    #[test]
    fn the_same_error_is_worded_by_rest_on_the_wire_and_by_mcp_in_tools() {
        // The guest's and holmd's typed errors, as REST answers them.
        for details in [
            ErrorDetails::NoSuchTab { tab: "t".into(), tabs: None },
            ErrorDetails::BrowserStarting { retry_after_ms: 250 },
            ErrorDetails::NoBrowser,
            ErrorDetails::GuestUnreachable { box_id: "box_x".into() },
            ErrorDetails::BoxRefused {
                box_id: "box_x".into(),
                state: holm_proto::host::BoxState::Paused,
                request: holm_proto::BoxRequest::Stop,
            },
        ] {
            let step = details.next().unwrap();
            let rest = holm_http::error::rest_hint(step).unwrap();
            assert!(rest.contains("/v1/") || rest.contains("GET "), "{rest}");
            let got = from_client(refused(details.clone(), &rest)).hint.unwrap();
            assert_eq!(Some(got.clone()), tool_hint(step), "{details:?}");
            assert!(!got.contains("/v1/") && !got.contains("GET "), "{got}");
        }
    }
}
