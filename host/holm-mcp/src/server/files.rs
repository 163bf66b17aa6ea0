//! The tools for commands and files: `exec`, `read_file`, `write_file`
//! and `list_files`.

use super::*;

impl HolmMcp {
    pub(super) async fn exec(&self, a: ExecArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let timeout = a.timeout_secs.unwrap_or(EXEC_TIMEOUT_SECS);
        if !(1..=MAX_EXEC_TIMEOUT_SECS).contains(&timeout) {
            return Err(invalid(
                "timeout_secs",
                format!("must be 1 to {MAX_EXEC_TIMEOUT_SECS}, not {timeout}"),
            ));
        }
        let request = CommandRequest {
            argv: a.argv,
            command: a.command,
            cwd: a.cwd,
            env: a.env,
            stdin: a.stdin,
            timeout_ms: Some(timeout * 1000),
            output_limit: Some(EXEC_OUTPUT_LIMIT),
            sensitive: a.sensitive,
        };
        let result = self.client.boxed(&a.box_id).run(&request).await.map_err(from_client)?;
        let summary = match (result.exit_code, &result.signal, result.timed_out) {
            (_, _, true) => format!("timed out after {timeout} s and was killed"),
            (Some(code), _, _) => format!("exited with code {code}"),
            (None, Some(sig), _) => format!("ended by {sig}"),
            (None, None, _) => "ended".to_owned(),
        };
        Ok(json_result(Some(summary), to_value(&result)))
    }

    pub(super) async fn read_file(&self, a: ReadFileArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let max = a.max_bytes.unwrap_or(READ_DEFAULT_BYTES);
        if !(1..=READ_MAX_BYTES).contains(&max) {
            return Err(invalid("max_bytes", format!("must be 1 to {READ_MAX_BYTES}, not {max}")));
        }
        let max = max as usize;
        let mut stream =
            self.client.boxed(&a.box_id).read_file_stream(&a.path).await.map_err(from_client)?;
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

    pub(super) async fn write_file(&self, a: WriteFileArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let body = match a.encoding {
            Encoding::Text => a.content.into_bytes(),
            Encoding::Base64 => BASE64
                .decode(a.content.trim())
                .map_err(|e| invalid("content", format!("is not valid base64: {e}")))?,
        };
        let info = self
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

    pub(super) async fn list_files(&self, a: ListFilesArgs) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let mut entries = self
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
