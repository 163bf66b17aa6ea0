//! The tools for recordings: `start_recording`, `stop_recording` and
//! `list_recordings`. A file is fetched outside MCP (`holm recording get`,
//! or `GET /v1/boxes/{id}/recordings/{file}`): a video is no tool result.

use holm_proto::recording::RecordingStart;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args;
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

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

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] =
    &[&StartRecording, &StopRecording, &ListRecordings];

/// `start_recording`.
#[derive(Debug)]
pub(crate) struct StartRecording;

impl Tool for StartRecording {
    const NAME: &'static str = "start_recording";
    const DESCRIPTION: &'static str = "Start recording a screen of a box to a video (H.264 MP4, \
        kept in the box). Answers the recording: file, screen, started_at (RFC 3339; frame n \
        shows the screen at started_at + n/fps), fps, width and height. A screen already recorded \
        is a conflict.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Start a recording", effect: Effect::Additive, open_world: false };
    type Args = StartRecordingArgs;

    async fn call(mcp: &HolmMcp, a: StartRecordingArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let start = RecordingStart { screen: a.screen, fps: a.fps };
        let rec = mcp.client.boxed(&a.box_id).start_recording(&start).await.map_err(from_client)?;
        let summary = format!("recording screen {} to {}", rec.screen, rec.file);
        Ok(json_result(Some(summary), to_value(&rec)))
    }
}

/// `stop_recording`.
#[derive(Debug)]
pub(crate) struct StopRecording;

impl Tool for StopRecording {
    const NAME: &'static str = "stop_recording";
    const DESCRIPTION: &'static str = "Stop a screen's running recording; answers it once its \
        file is complete (state, ended_at, bytes). No recording running there is a conflict and \
        changes nothing. Fetch the file with `holm recording get BOX FILE` or GET \
        /v1/boxes/{id}/recordings/{file}.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Stop a recording",
        effect: Effect::Destructive { idempotent: false },
        open_world: false,
    };
    type Args = StopRecordingArgs;

    async fn call(mcp: &HolmMcp, a: StopRecordingArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let rec =
            mcp.client.boxed(&a.box_id).stop_recording(a.screen).await.map_err(from_client)?;
        let summary = format!("{} is {} ({} bytes)", rec.file, rec.state, rec.bytes);
        Ok(json_result(Some(summary), to_value(&rec)))
    }
}

/// `list_recordings`.
#[derive(Debug)]
pub(crate) struct ListRecordings;

impl Tool for ListRecordings {
    const NAME: &'static str = "list_recordings";
    const DESCRIPTION: &'static str = "List a box's recordings, oldest first: file, screen, state \
        (recording, finished, failed), started_at, ended_at, stopped_by, fps, width, height and \
        bytes.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List recordings", effect: Effect::ReadOnly, open_world: false };
    type Args = ListRecordingsArgs;

    async fn call(mcp: &HolmMcp, a: ListRecordingsArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let list = mcp.client.boxed(&a.box_id).recordings().await.map_err(from_client)?;
        let running = list.iter().filter(|r| r.stopped_by.is_none()).count();
        let summary = format!("{} recording(s), {running} running", list.len());
        Ok(json_result(Some(summary), json!({ "recordings": list })))
    }
}
