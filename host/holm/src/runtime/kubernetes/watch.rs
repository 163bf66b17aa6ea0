//! A watch's answer: newline-delimited JSON events
//! (`{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":…}`), cut
//! into lines whatever the chunks the body arrives in.

use serde_json::Value;

use super::client::Status;

/// One event of a watch.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    /// An object appeared (or was there when the watch began).
    Added(Value),
    /// An object changed.
    Modified(Value),
    /// An object went.
    Deleted(Value),
    /// Nothing changed but the resource version (`metadata.resourceVersion`).
    Bookmark(Value),
    /// The watch failed: `410 Gone` (`Expired`) when its resource version
    /// is too old, which a watcher answers by reading the object again.
    Error(Status),
}

impl WatchEvent {
    /// The event a line holds.
    pub fn parse(line: &[u8]) -> Result<Self, String> {
        let mut v: Value =
            serde_json::from_slice(line).map_err(|e| format!("a watch event: {e}"))?;
        let object = v["object"].take();
        Ok(match v["type"].as_str() {
            Some("ADDED") => Self::Added(object),
            Some("MODIFIED") => Self::Modified(object),
            Some("DELETED") => Self::Deleted(object),
            Some("BOOKMARK") => Self::Bookmark(object),
            Some("ERROR") => Self::Error(Status::from_value(&object)),
            other => return Err(format!("a watch event of type {other:?}")),
        })
    }
}

/// Cuts a byte stream into lines: bytes are pushed as they come, whole
/// lines are taken out.
#[derive(Debug, Default)]
pub struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// Adds a chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next whole line that is not blank, without its `\n` (or `\r\n`).
    pub fn next_line(&mut self) -> Option<Vec<u8>> {
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some(line);
            }
        }
        None
    }

    /// What is left once the body ended: a last line without `\n`.
    pub fn rest(&mut self) -> Option<Vec<u8>> {
        let rest = std::mem::take(&mut self.buffer);
        (!rest.iter().all(u8::is_ascii_whitespace)).then_some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_come_out_whole() {
        let text = "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n\n{\"type\":\"ERROR\",\"object\":\
                    {\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"too old\",\"code\":410}}\r\n\
                    {\"type\":\"DELETED\",\"object\":{}}";
        for size in [1, 2, 7, 30, text.len()] {
            let mut lines = Lines::default();
            let mut events = Vec::new();
            for chunk in text.as_bytes().chunks(size) {
                lines.push(chunk);
                while let Some(line) = lines.next_line() {
                    events.push(WatchEvent::parse(&line).unwrap());
                }
            }
            assert!(lines.next_line().is_none());
            events.push(WatchEvent::parse(&lines.rest().unwrap()).unwrap());
            assert!(lines.rest().is_none());
            assert_eq!(events.len(), 3, "chunks of {size}");
            assert_eq!(events[0], WatchEvent::Added(serde_json::json!({"a": 1})));
            let WatchEvent::Error(s) = &events[1] else { panic!("{:?}", events[1]) };
            assert_eq!(
                (s.code, s.reason.as_str(), s.message.as_str()),
                (410, "Expired", "too old")
            );
            assert_eq!(events[2], WatchEvent::Deleted(serde_json::json!({})));
        }
    }

    #[test]
    fn a_line_that_is_not_an_event_is_an_error() {
        assert!(WatchEvent::parse(b"{\"type\":\"MOVED\",\"object\":{}}").is_err());
        assert!(WatchEvent::parse(b"not json").is_err());
    }
}
