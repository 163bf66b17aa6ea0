//! Windows and the clipboard of a box, on [`BoxClient`].
//!
//! Through holmd these are `/v1/boxes/{id}/windows...` and
//! `/v1/boxes/{id}/clipboard`; straight against a guest, `/v1/windows...`
//! and `/v1/clipboard`.

use holm_proto::contract;
use holm_proto::desk::{Clipboard, ClipboardSet, Window, WindowActed, WindowAction};

use crate::boxes::BoxClient;
use crate::error::Result;

impl BoxClient {
    /// The top-level windows of every screen.
    pub async fn windows(&self) -> Result<Vec<Window>> {
        Ok(self.call(&contract::WINDOWS, &[], &()).await?.data)
    }

    /// Focuses, moves, resizes or closes window `id`, and answers once the
    /// change shows (or the guest's wait ended).
    pub async fn window(&self, id: u64, action: WindowAction) -> Result<WindowActed> {
        self.call(&contract::WINDOW, &[&id.to_string()], &action).await
    }

    /// The clipboard: its types, text and PNG image (base64).
    pub async fn clipboard(&self) -> Result<Clipboard> {
        self.call(&contract::CLIPBOARD, &[], &()).await
    }

    /// Puts text, a PNG image (base64), or both on the clipboard.
    pub async fn set_clipboard(&self, set: &ClipboardSet) -> Result<Clipboard> {
        self.call(&contract::SET_CLIPBOARD, &[], set).await
    }
}
