//! Recordings of a box's screens, on [`BoxClient`].
//!
//! Through holmd these are `/v1/boxes/{id}/recordings...`; straight against
//! a guest, `/v1/recordings...`.

use bytes::Bytes;
use futures_util::{Stream, TryStreamExt};
use holm_proto::contract;
use holm_proto::recording::{Recording, RecordingStart, RecordingStop};

use crate::boxes::BoxClient;
use crate::error::{ClientError, Result};

impl BoxClient {
    /// Starts recording a screen.
    pub async fn start_recording(&self, start: &RecordingStart) -> Result<Recording> {
        self.call(&contract::RECORD, &[], start).await
    }

    /// Stops screen `screen`'s running recording; answers it once its file
    /// is complete.
    pub async fn stop_recording(&self, screen: u8) -> Result<Recording> {
        self.call(&contract::STOP_RECORDING, &[], &RecordingStop { screen }).await
    }

    /// The box's recordings, oldest first.
    pub async fn recordings(&self) -> Result<Vec<Recording>> {
        Ok(self.call(&contract::RECORDINGS, &[], &()).await?.data)
    }

    /// A recording's file as a stream of chunks.
    pub async fn recording_stream(
        &self,
        file: &str,
    ) -> Result<impl Stream<Item = Result<Bytes>> + use<>> {
        let (url, rb) = self.open(&contract::RECORDING_FILE, &[file])?;
        let response = self.send(&url, rb).await?;
        Ok(response
            .bytes_stream()
            .map_err(move |source| ClientError::Transport { url: url.clone(), source }))
    }

    /// Removes a recording that is not running, and its file.
    pub async fn remove_recording(&self, file: &str) -> Result<()> {
        self.call(&contract::REMOVE_RECORDING, &[file], &()).await
    }
}
