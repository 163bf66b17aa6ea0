//! What the CLI prints: results on standard output, errors on standard error.
//! With `--json`, both are JSON; an error is always the one error shape.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use holm_client::ClientError;
use holm_proto::{ApiError, ErrorCode};
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

/// Prints an error on standard error.
pub fn error(e: &anyhow::Error, json: bool) {
    let api = to_api_error(e);
    if json {
        match serde_json::to_string_pretty(&api.into_body()) {
            Ok(s) => eprintln!("{s}"),
            Err(_) => eprintln!("{e:#}"),
        }
        return;
    }
    eprintln!("error[{}]: {}", api.code, api.message);
    if let Some(issues) =
        api.details.as_ref().and_then(|d| d.get("issues")).and_then(|i| i.as_array())
    {
        for issue in issues {
            eprintln!(
                "  {}: {}",
                issue.get("path").and_then(|v| v.as_str()).unwrap_or(""),
                issue.get("problem").and_then(|v| v.as_str()).unwrap_or("")
            );
        }
    }
    if let Some(hint) = &api.hint {
        eprintln!("hint: {hint}");
    }
    if let Some(id) = &api.request_id {
        eprintln!("request_id: {id}");
    }
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
