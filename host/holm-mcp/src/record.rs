//! The tools for recordings: `start_recording`, `stop_recording` and
//! `list_recordings`. A file is fetched outside MCP (`holm recording get`,
//! or `GET /v1/boxes/{id}/recordings/{file}`): a video is no tool result.

use std::sync::Arc;

use holm_proto::ApiError;
use holm_proto::recording::RecordingStart;
use rmcp::model::{CallToolResult, JsonObject, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args;
use crate::errors::from_client;
use crate::server::{HolmMcp, json_result, to_value};
use crate::tools::{Effect, Name, annotations, schema};

/// `start_recording`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StartRecordingArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// Frames a second, 1 to 30 (default 10).
    #[serde(default)]
    pub fps: Option<u8>,
}

/// `stop_recording`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StopRecordingArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
}

/// `list_recordings`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListRecordingsArgs {
    /// The box's id.
    pub box_id: String,
}

/// The description, input schema and annotations of a tool of this module.
pub(crate) fn tool(name: Name) -> (String, Arc<JsonObject>, ToolAnnotations) {
    match name {
        Name::StartRecording => (
            "Start recording a screen of a box to a video (H.264 MP4, kept in the box). Answers \
             the recording: file, screen, started_at (RFC 3339; frame n shows the screen at \
             started_at + n/fps), fps, width and height. A screen already recorded is a conflict."
                .into(),
            schema::<StartRecordingArgs>(),
            annotations("Start a recording", Effect::Additive, false),
        ),
        Name::StopRecording => (
            "Stop a screen's running recording; answers it once its file is complete (state, \
             ended_at, bytes). No recording running there is a conflict and changes nothing. \
             Fetch the file with `holm recording get BOX FILE` or GET /v1/boxes/{id}/recordings/{file}."
                .into(),
            schema::<StopRecordingArgs>(),
            annotations("Stop a recording", Effect::Destructive { idempotent: false }, false),
        ),
        Name::ListRecordings => (
            "List a box's recordings, oldest first: file, screen, state (recording, finished, \
             failed), started_at, ended_at, stopped_by, fps, width, height and bytes."
                .into(),
            schema::<ListRecordingsArgs>(),
            annotations("List recordings", Effect::ReadOnly, false),
        ),
        _ => unreachable!("{} is not a tool of recordings", name.as_str()),
    }
}

impl HolmMcp {
    pub(crate) async fn start_recording(
        &self,
        a: StartRecordingArgs,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let start = RecordingStart { screen: a.screen, fps: a.fps };
        let rec =
            self.client.boxed(&a.box_id).start_recording(&start).await.map_err(from_client)?;
        let summary = format!("recording screen {} to {}", rec.screen, rec.file);
        Ok(json_result(Some(summary), to_value(&rec)))
    }

    pub(crate) async fn stop_recording(
        &self,
        a: StopRecordingArgs,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let rec =
            self.client.boxed(&a.box_id).stop_recording(a.screen).await.map_err(from_client)?;
        let summary = format!("{} is {} ({} bytes)", rec.file, rec.state, rec.bytes);
        Ok(json_result(Some(summary), to_value(&rec)))
    }

    pub(crate) async fn list_recordings(
        &self,
        a: ListRecordingsArgs,
    ) -> Result<CallToolResult, ApiError> {
        args::check_box_id(&a.box_id)?;
        let list = self.client.boxed(&a.box_id).recordings().await.map_err(from_client)?;
        let running = list.iter().filter(|r| r.stopped_by.is_none()).count();
        let summary = format!("{} recording(s), {running} running", list.len());
        Ok(json_result(Some(summary), json!({ "recordings": list })))
    }
}
