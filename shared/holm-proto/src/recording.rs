//! Recordings: video of one screen, made in the box.
//!
//! - `POST /v1/recordings`: a [`RecordingStart`]; answers the [`Recording`]
//!   now running.
//! - `POST /v1/recordings/stop`: a [`RecordingStop`]; answers the
//!   [`Recording`] as it ended, its file complete.
//! - `GET /v1/recordings`: a page of [`Recording`], oldest first.
//! - `GET /v1/recordings/{file}`: the file (`video/mp4`), streamed.
//! - `DELETE /v1/recordings/{file}`: forgets a recording that is not running
//!   and removes its file.
//!
//! A file is H.264 in fragmented MP4: each fragment is playable on its own,
//! so a file cut short (a box killed mid-recording) still plays up to its
//! last fragment.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The frame rate when none is asked for.
pub const DEFAULT_FPS: u8 = 10;

/// The highest frame rate a recording takes.
pub const MAX_FPS: u8 = 30;

/// The most bytes one recording's file may have; the recording stops
/// (`stopped_by: size_limit`) when it reaches them.
pub const MAX_RECORDING_BYTES: u64 = 512 << 20;

/// The most bytes the box keeps of all its recordings: a start is refused
/// (`limit_reached`) at this total, and a running recording stops
/// (`stopped_by: size_limit`) when the total reaches it.
pub const MAX_RECORDINGS_BYTES: u64 = 2 << 30;

/// The MIME type of a recording's file.
pub const VIDEO_MIME: &str = "video/mp4";

/// `POST /v1/recordings`: what to record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordingStart {
    /// The screen, 0 when not given.
    #[serde(default)]
    pub screen: u8,
    /// Frames a second, 1 to 30 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<u8>,
}

/// `POST /v1/recordings/stop`: which screen's recording to stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordingStop {
    /// The screen, 0 when not given.
    #[serde(default)]
    pub screen: u8,
}

/// Whether a recording runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordingState {
    /// Frames are being written.
    Recording,
    /// It ended and its file is complete.
    Finished,
    /// The encoder failed; the file holds what was written before.
    Failed,
}

wire_names!(RecordingState { Recording => "recording", Finished => "finished", Failed => "failed" });

/// Why a recording ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Someone asked (`POST /v1/recordings/stop`).
    Requested,
    /// It reached [`MAX_RECORDING_BYTES`], or all recordings
    /// [`MAX_RECORDINGS_BYTES`].
    SizeLimit,
    /// The box was stopping.
    BoxStopping,
    /// The screen changed size; a video keeps one frame size.
    ScreenResized,
    /// The encoder ended or the screen could not be captured.
    Failed,
}

wire_names!(StopReason {
    Requested => "requested",
    SizeLimit => "size_limit",
    BoxStopping => "box_stopping",
    ScreenResized => "screen_resized",
    Failed => "failed",
});

/// One recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Recording {
    /// Its file's name, for `GET /v1/recordings/{file}`, such as
    /// `screen0-20261202T101500Z.mp4`.
    pub file: String,
    /// The screen recorded.
    pub screen: u8,
    /// Whether it runs.
    pub state: RecordingState,
    /// When its first frame was taken (RFC 3339, UTC): frame `n` of the
    /// video shows the screen at `started_at + n / fps`.
    pub started_at: String,
    /// When it ended (RFC 3339, UTC), once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why it ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StopReason>,
    /// Frames a second.
    pub fps: u8,
    /// The video's width, the screen's.
    pub width: u32,
    /// The video's height.
    pub height: u32,
    /// The file's size so far.
    pub bytes: u64,
    /// What went wrong, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_read_as_written() {
        let s: RecordingStart = serde_json::from_str(r#"{"screen":1,"fps":5}"#).unwrap();
        assert_eq!(s, RecordingStart { screen: 1, fps: Some(5) });
        assert_eq!(
            serde_json::from_str::<RecordingStart>("{}").unwrap(),
            RecordingStart::default()
        );
        assert!(serde_json::from_str::<RecordingStart>(r#"{"screen":-1}"#).is_err());
        assert_eq!(StopReason::SizeLimit.to_string(), "size_limit");
    }
}
