//! A box's timeline through holmd: its steps, its export (HTML or JSONL)
//! and the screenshots it keeps.

use holm_proto::guest::Page;
use holm_proto::timeline::{ExportFormat, Step};

use crate::error::{ClientError, Result, check, transport};
use crate::server::{Client, enc};

impl Client {
    /// One page of a box's timeline, oldest first.
    pub async fn timeline(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Step>> {
        let (url, mut rb) =
            self.request(reqwest::Method::GET, &format!("/v1/boxes/{}/timeline", enc(id)));
        if let Some(c) = cursor {
            rb = rb.query(&[("cursor", c)]);
        }
        if let Some(l) = limit {
            rb = rb.query(&[("limit", l)]);
        }
        self.call(&url, rb).await
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
        let (url, rb) =
            self.request(reqwest::Method::GET, &format!("/v1/boxes/{}/timeline/export", enc(id)));
        let format = match format {
            ExportFormat::Html => "html",
            ExportFormat::Jsonl => "jsonl",
        };
        self.bytes(&url, rb.query(&[("format", format)])).await
    }

    /// One screenshot a box's timeline keeps, by its id.
    pub async fn timeline_screenshot(&self, id: &str, shot: &str) -> Result<Vec<u8>> {
        let path = format!("/v1/boxes/{}/timeline/screenshots/{}", enc(id), enc(shot));
        let (url, rb) = self.request(reqwest::Method::GET, &path);
        self.bytes(&url, rb).await
    }

    async fn bytes(&self, url: &str, rb: reqwest::RequestBuilder) -> Result<Vec<u8>> {
        let response = check(url, rb.send().await.map_err(transport(url))?).await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ClientError::Protocol { url: url.to_owned(), message: e.to_string() })?;
        Ok(bytes.to_vec())
    }
}
