//! Files: `/v1/files/content` (read and write, streamed), `list`, `stat`,
//! `mkdir`, `remove` and `rename`.

use std::path::PathBuf;

use axum::Json;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::Response;
use holm_proto::guest::{
    FileInfo, FileStat, ListQuery, MkdirRequest, Page, PathQuery, RemoveRequest, RenameRequest,
    WriteQuery,
};

use holm_proto::contract;

use super::AppState;
use super::error::Error;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;
use crate::files;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::READ_FILE, read)
        // Uploads are streamed to disk, so no body limit applies to them.
        .on_with(&contract::WRITE_FILE, write, |m| m.layer(DefaultBodyLimit::disable()))
        .on(&contract::LIST.route, list)
        .on(&contract::STAT.route, stat)
        .on(&contract::MKDIR.route, mkdir)
        .on(&contract::REMOVE.route, remove)
        .on(&contract::RENAME.route, rename)
}

/// Checks the one path of a request.
fn one_path(state: &AppState, value: &str) -> Result<PathBuf, Error> {
    let mut issues = Vec::new();
    let path = files::absolute("path", value, &mut issues);
    if issues.is_empty() {
        Ok(path)
    } else {
        Err(files::refuse(issues, &state.config.home, Some(value)))
    }
}

async fn read(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<PathQuery>,
) -> Result<Response, Error> {
    let path = one_path(&state, &q.path)?;
    let reading = files::open(&path, &q.path).await?;
    Ok(reading.response())
}

async fn write(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<WriteQuery>,
    body: Body,
) -> Result<Json<FileInfo>, Error> {
    let mut issues = Vec::new();
    let path = files::absolute("path", &q.path, &mut issues);
    let mode = match q.mode.as_deref().map(files::parse_mode).transpose() {
        Ok(mode) => mode,
        Err(issue) => {
            issues.push(issue);
            None
        }
    };
    if !issues.is_empty() {
        return Err(files::refuse(issues, &state.config.home, Some(&q.path)));
    }
    Ok(Json(files::write(&path, &q.path, mode, body.into_data_stream()).await?))
}

async fn list(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<ListQuery>,
) -> Result<Json<Page<FileInfo>>, Error> {
    let mut issues = Vec::new();
    let path = files::absolute("path", &q.path, &mut issues);
    let depth = q.depth.unwrap_or(files::DEFAULT_DEPTH);
    if !(1..=files::MAX_DEPTH).contains(&depth) {
        issues.push(holm_proto::Issue {
            path: "depth".into(),
            problem: format!("must be 1 to {}, not {depth}", files::MAX_DEPTH),
        });
    }
    let limit = q.limit.unwrap_or(files::MAX_LIST);
    if !(1..=files::MAX_LIST).contains(&limit) {
        issues.push(holm_proto::Issue {
            path: "limit".into(),
            problem: format!("must be 1 to {}, not {limit}", files::MAX_LIST),
        });
    }
    if !issues.is_empty() {
        return Err(files::refuse(issues, &state.config.home, Some(&q.path)));
    }
    Ok(Json(files::list(path, q.path, depth, limit, q.cursor.map(PathBuf::from)).await?))
}

async fn stat(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<PathQuery>,
) -> Result<Json<FileStat>, Error> {
    let path = one_path(&state, &q.path)?;
    Ok(Json(files::stat(&path, &q.path).await?))
}

async fn mkdir(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<MkdirRequest>,
) -> Result<Json<FileInfo>, Error> {
    let path = one_path(&state, &req.path)?;
    Ok(Json(files::mkdir(&path, &req.path, req.parents).await?))
}

async fn remove(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<RemoveRequest>,
) -> Result<StatusCode, Error> {
    let path = one_path(&state, &req.path)?;
    files::remove(&path, &req.path, req.recursive).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn rename(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<RenameRequest>,
) -> Result<Json<FileInfo>, Error> {
    let mut issues = Vec::new();
    let from = files::absolute("from", &req.from, &mut issues);
    let to = files::absolute("to", &req.to, &mut issues);
    if !issues.is_empty() {
        let relative = [&req.from, &req.to].into_iter().find(|p| !p.starts_with('/'));
        return Err(files::refuse(issues, &state.config.home, relative.map(String::as_str)));
    }
    Ok(Json(files::rename(&from, &req.from, &to, &req.to, req.overwrite).await?))
}
