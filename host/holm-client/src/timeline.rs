//! A box's timeline through holmd: its steps, its export (HTML or JSONL)
//! and the screenshots it keeps.

use holm_proto::contract::server;
use holm_proto::guest::Page;
use holm_proto::timeline::{ExportFormat, ExportQuery, Step, TimelineQuery};

use crate::error::{ClientError, Result};
use crate::server::Client;

impl Client {
    /// One page of a box's timeline, oldest first.
    pub async fn timeline(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Step>> {
        let query = TimelineQuery { cursor: cursor.map(str::to_owned), limit };
        self.call(&server::TIMELINE, &[id], &query, &()).await
    }

    /// Every step of a box's timeline, page after page.
    pub async fn whole_timeline(&self, id: &str) -> Result<Vec<Step>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.timeline(id, cursor.as_deref(), Some(1000)).await?;
            out.extend(page.data);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// A box's timeline written out: one HTML page, or JSONL.
    pub async fn export_timeline(&self, id: &str, format: ExportFormat) -> Result<Vec<u8>> {
        let query = ExportQuery { format };
        bytes(self.open(&server::TIMELINE_EXPORT, &[id], &query, &()).await?).await
    }

    /// One screenshot a box's timeline keeps, by its id.
    pub async fn timeline_screenshot(&self, id: &str, shot: &str) -> Result<Vec<u8>> {
        bytes(self.open(&server::TIMELINE_SCREENSHOT, &[id, shot], &(), &()).await?).await
    }
}

/// The whole body of a checked response.
async fn bytes((url, response): (String, reqwest::Response)) -> Result<Vec<u8>> {
    let bytes = response
        .bytes()
        .await
        .map_err(|e| ClientError::Protocol { url: url.clone(), message: e.to_string() })?;
    Ok(bytes.to_vec())
}
