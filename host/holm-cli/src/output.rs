//! What the CLI prints: results on standard output, errors on standard error.
//! With `--json`, both are JSON; an error is always the one error shape.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use holm_client::ClientError;
use holm_proto::{ApiError, ErrorCode, NextStep};
use serde::Serialize;

/// Prints a value as pretty JSON.
pub fn json<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("cannot print the result: {e}"),
    }
}

/// Prints a line.
pub fn line(text: &str) {
    println!("{text}");
}

/// Prints a value as JSON on one line (NDJSON), for streams of events.
pub fn json_line<T: Serialize>(value: &T) {
    match serde_json::to_string(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("cannot print the result: {e}"),
    }
}

/// Prints a note for people on standard error.
pub fn note(text: &str) {
    eprintln!("{text}");
}

/// Turns any failure into the one error shape.
pub fn to_api_error(e: &anyhow::Error) -> ApiError {
    if let Some(ce) = e.downcast_ref::<ClientError>() {
        return ce.to_api_error();
    }
    if let Some(he) = e.downcast_ref::<holm::Error>() {
        return match he {
            holm::Error::Invalid(issues) => ApiError::invalid_fields(issues.clone()),
            other => ApiError::new(ErrorCode::Unavailable, other.to_string()),
        };
    }
    if let Some(api) = e.downcast_ref::<ApiError>() {
        return api.clone();
    }
    ApiError::new(ErrorCode::InvalidRequest, format!("{e:#}"))
}

/// Prints an error on standard error, with its hint in the CLI's terms.
pub fn error(e: &anyhow::Error, json: bool) {
    let api = to_api_error(e).worded_by(cli_hint);
    if json {
        match serde_json::to_string_pretty(&api.into_body()) {
            Ok(s) => eprintln!("{s}"),
            Err(_) => eprintln!("{e:#}"),
        }
        return;
    }
    eprintln!("{}", api.describe());
}

/// The next step of an error in the CLI's terms: its commands (REST's hint,
/// on the wire, names routes).
pub fn cli_hint(step: NextStep<'_>) -> Option<String> {
    Some(match step {
        NextStep::ListBoxes => "`holm ls` lists the boxes".to_owned(),
        NextStep::ShowBox { box_id } => format!("`holm get {box_id}` shows its state"),
        NextStep::CheckBox { box_id } => {
            format!("the box may be stopping; `holm get {box_id}` shows its state")
        }
        NextStep::WaitUntilRunning { box_id } => {
            format!("wait until it runs; `holm get {box_id}` shows its state")
        }
        NextStep::ResumeFirst { box_id } => format!("resume it first: `holm resume {box_id}`"),
        NextStep::CreateBox | NextStep::ClaimByCreate => "`holm new` makes a new box".to_owned(),
        NextStep::CreateBoxWithBrowser => {
            "this box runs no browser; `holm new` without --no-browser makes one that does"
                .to_owned()
        }
        NextStep::RetrySoon => {
            "it may be starting or restarting; try again in a few seconds".to_owned()
        }
        NextStep::ListTabs => "`holm page BOX tabs` lists the tabs".to_owned(),
        NextStep::ShowRuntime { runtime } => {
            format!("`holm runtime get {runtime}` says what it can do")
        }
        NextStep::AddRuntime => {
            "`holm runtime add` adds one; `holm runtime ls` lists them".to_owned()
        }
        NextStep::ChangeRuntime { runtime } => format!("`holm runtime set {runtime}` changes it"),
    })
}

/// Prints a table with a header row.
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let fmt = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    println!("{}", fmt(header.iter().map(|s| (*s).to_owned()).collect()));
    for row in rows {
        println!("{}", fmt(row.clone()));
    }
}

#[cfg(test)]
mod tests {
    use holm_proto::{ApiError, ErrorCode, ErrorDetails};

    use super::cli_hint;

    #[test]
    fn a_typed_error_is_worded_in_commands_where_rest_names_routes() {
        let wire = ApiError::new(ErrorCode::NotFound, "there is no box \"box_x\"")
            .with_kind(ErrorDetails::NoSuchBox { box_id: "box_x".into() })
            .with_hint("GET /v1/boxes lists the boxes")
            .with_request_id("req_1");
        let shown = wire.worded_by(cli_hint).describe();
        assert_eq!(
            shown,
            "error[not_found]: there is no box \"box_x\"\nhint: `holm ls` lists the boxes\n\
             request_id: req_1"
        );
        let refused = ApiError::new(ErrorCode::Conflict, "box box_x is paused; ...").with_kind(
            ErrorDetails::BoxRefused {
                box_id: "box_x".into(),
                state: holm_proto::host::BoxState::Paused,
                request: holm_proto::BoxRequest::Stop,
            },
        );
        let hint = refused.worded_by(cli_hint).hint.unwrap();
        assert_eq!(hint, "resume it first: `holm resume box_x`");
    }
}
