//! The tools on a box's files: `read_file`, `write_file` and
//! `list_files`, by absolute path, as text or base64.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::StreamExt;
use holm_proto::{ApiError, Issue};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{self, invalid};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `read_file` answers this many bytes unless asked for more.
const READ_DEFAULT_BYTES: u64 = 100_000;
/// The most `read_file` (and `page_text`, `page_html`) answers.
pub(crate) const READ_MAX_BYTES: u64 = 10_000_000;
const LIST_MAX_ENTRIES: usize = 1000;

/// How file content travels in a tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// UTF-8 text.
    #[default]
    Text,
    /// Base64 of the raw bytes, for binary files.
    Base64,
}

/// `read_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path in the box.
    pub path: String,
    /// "text" (default; the file must be UTF-8) or "base64".
    #[serde(default)]
    pub encoding: Encoding,
    /// Read at most this many bytes (default 100000, at most 10000000).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&ReadFile, &WriteFile, &ListFiles];

/// `read_file`.
#[derive(Debug)]
pub(crate) struct ReadFile;

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a file in a box by absolute path. Answers its content \
        as text (the file must be UTF-8), or as base64 with encoding \"base64\", then a line \
        saying how many bytes were read and whether the file is longer than max_bytes.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Read a file", effect: Effect::ReadOnly, open_world: false };
    type Args = ReadFileArgs;

    async fn call(mcp: &HolmMcp, a: ReadFileArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let max = a.max_bytes.unwrap_or(READ_DEFAULT_BYTES);
        if !(1..=READ_MAX_BYTES).contains(&max) {
            return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
        }
        let max = max as usize;
        let mut stream =
            mcp.client.boxed(&a.box_id).read_file_stream(&a.path).await.map_err(from_client)?;
        // Read one byte past the limit, to know whether the file is longer,
        // and no further: a huge file costs no more than the limit.
        let mut bytes = Vec::new();
        while bytes.len() <= max {
            match stream.next().await {
                Some(chunk) => bytes.extend_from_slice(&chunk.map_err(from_client)?),
                None => break,
            }
        }
        drop(stream);
        let truncated = bytes.len() > max;
        bytes.truncate(max);
        let content = match a.encoding {
            Encoding::Base64 => BASE64.encode(&bytes),
            Encoding::Text => {
                // A limit can cut a character in two: keep the whole ones.
                let text = match std::str::from_utf8(&bytes) {
                    Ok(t) => t,
                    Err(e) if truncated && e.error_len().is_none() => {
                        std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
                    }
                    Err(_) => {
                        return Err(ApiError::invalid_fields(vec![Issue {
                            path: "encoding".into(),
                            problem: format!(
                                "{} is not UTF-8 text; read it with encoding \"base64\"",
                                a.path
                            ),
                        }]));
                    }
                };
                let text = text.to_owned();
                bytes.truncate(text.len());
                text
            }
        };
        let encoding = match a.encoding {
            Encoding::Text => "text",
            Encoding::Base64 => "base64",
        };
        let about = json!({ "path": a.path, "bytes": bytes.len(), "truncated": truncated, "encoding": encoding });
        Ok(CallToolResult::success(vec![
            ContentBlock::text(content),
            ContentBlock::text(about.to_string()),
        ]))
    }
}

/// `write_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path in the box; missing directories are made.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
    /// How `content` is written: "text" (default) or "base64".
    #[serde(default)]
    pub encoding: Encoding,
    /// Permission bits in octal, such as "755" (default "644" for a new file;
    /// an existing file keeps its own).
    #[serde(default)]
    pub mode: Option<String>,
}

/// `write_file`.
#[derive(Debug)]
pub(crate) struct WriteFile;

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Write a whole file in a box by absolute path, replacing it \
        atomically (a reader never sees half a file) and making missing directories. content is \
        text, or base64 with encoding \"base64\". Answers the file's path, size in bytes, mode \
        and modification time.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Write a file",
        effect: Effect::Destructive { idempotent: true },
        open_world: false,
    };
    type Args = WriteFileArgs;

    async fn call(mcp: &HolmMcp, a: WriteFileArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let body = match a.encoding {
            Encoding::Text => a.content.into_bytes(),
            Encoding::Base64 => BASE64
                .decode(a.content.trim())
                .map_err(|e| invalid("content", format!("is not valid base64: {e}")))?,
        };
        let info = mcp
            .client
            .boxed(&a.box_id)
            .write_file(&a.path, body, a.mode.as_deref())
            .await
            .map_err(from_client)?;
        Ok(json_result(
            Some(format!("wrote {} bytes to {}", info.size, info.path)),
            to_value(&info),
        ))
    }
}

/// `list_files`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// The box's id.
    pub box_id: String,
    /// An absolute path to a directory in the box.
    pub path: String,
    /// How many levels to descend, 1 to 32 (default 1).
    #[serde(default)]
    pub depth: Option<u32>,
}

/// `list_files`.
#[derive(Debug)]
pub(crate) struct ListFiles;

impl Tool for ListFiles {
    const NAME: &'static str = "list_files";
    const DESCRIPTION: &'static str = "List a directory in a box by absolute path, depth levels \
        down: each entry's path, type (file, dir, symlink, other), size in bytes, mode in octal \
        and modification time (RFC 3339). At most 1000 entries are answered.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List files", effect: Effect::ReadOnly, open_world: false };
    type Args = ListFilesArgs;

    async fn call(mcp: &HolmMcp, a: ListFilesArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let mut entries = mcp
            .client
            .boxed(&a.box_id)
            .list(&a.path, a.depth.unwrap_or(1))
            .await
            .map_err(from_client)?;
        let total = entries.len();
        entries.truncate(LIST_MAX_ENTRIES);
        let summary = if total > LIST_MAX_ENTRIES {
            format!(
                "the first {LIST_MAX_ENTRIES} of {total} entries; list a deeper directory for the rest"
            )
        } else {
            format!("{total} entries")
        };
        Ok(json_result(Some(summary), json!({ "entries": entries })))
    }
}
