//! Viewers and the handoff between an agent and a person.
//!
//! Through holmd ([`Client`]): viewer URLs (`/v1/boxes/{id}/viewers`), and
//! asking a person for help and waiting for them (`/v1/boxes/{id}/handoff`).
//! Straight against a guest ([`BoxClient`]): the viewer key holmd sets, and
//! the handoff as the guest sees it.

use holm_proto::contract::{self, server};
use holm_proto::viewer::{
    AskForHelp, ControlEvents, CreateViewer, EventsQuery, Handoff, HandoffState, HandoffStatus,
    HandoffWait, ViewerConfig, ViewerGrant,
};

use crate::boxes::BoxClient;
use crate::error::Result;
use crate::server::Client;

impl Client {
    /// A new viewer URL for one screen of a box (watch only, or takeover).
    pub async fn create_viewer(&self, id: &str, request: &CreateViewer) -> Result<ViewerGrant> {
        self.call(&server::CREATE_VIEWER, &[id], &(), request).await
    }

    /// The box's viewer grants of its current desktop.
    pub async fn viewers(&self, id: &str) -> Result<Vec<ViewerGrant>> {
        Ok(self.call(&server::VIEWERS, &[id], &(), &()).await?.data)
    }

    /// Revokes a viewer grant: its URL stops working and its connections close.
    pub async fn revoke_viewer(&self, id: &str, grant: &str) -> Result<ViewerGrant> {
        self.call(&server::REVOKE_VIEWER, &[id, grant], &(), &()).await
    }

    /// Asks a person for help: answers the takeover URL to send them.
    pub async fn ask_for_help(&self, id: &str, request: &AskForHelp) -> Result<Handoff> {
        self.call(&server::ASK_FOR_HELP, &[id], &(), request).await
    }

    /// The handoff; with `wait_secs`, answers once control is handed back
    /// (or after that many seconds, as it is then).
    pub async fn handoff(&self, id: &str, wait_secs: Option<u64>) -> Result<Handoff> {
        let query = HandoffWait {
            wait_for: wait_secs.map(|_| HandoffState::HandedBack),
            timeout_secs: wait_secs,
        };
        self.call(&server::HANDOFF, &[id], &query, &()).await
    }
}

impl BoxClient {
    /// Sets the viewer key, the box's title and the revoked grants
    /// (straight against a guest only).
    pub async fn set_viewer_config(&self, config: &ViewerConfig) -> Result<()> {
        self.call(&contract::VIEWER_CONFIG, &[], config).await
    }

    /// Asks a person for help (straight against a guest only).
    pub async fn guest_ask_for_help(&self, reason: &str, screen: u8) -> Result<HandoffStatus> {
        let body = AskForHelp { reason: reason.to_owned(), screen, expires_after_secs: None };
        self.call(&contract::ASK_FOR_HELP, &[], &body).await
    }

    /// The handoff as the guest sees it; with `wait`, answers once it is in
    /// that state or after that many seconds (straight against a guest only).
    pub async fn guest_handoff(&self, wait: Option<(HandoffState, u64)>) -> Result<HandoffStatus> {
        let query = HandoffWait {
            wait_for: wait.map(|(state, _)| state),
            timeout_secs: wait.map(|(_, secs)| secs),
        };
        self.call_with(&contract::HANDOFF, &[], &query, &()).await
    }

    /// The control events after sequence number `after`, waiting up to
    /// `timeout_secs` (at most 60) for one (straight against a guest; through
    /// holmd they are in the box's traces).
    pub async fn control_events(&self, after: u64, timeout_secs: u64) -> Result<ControlEvents> {
        let query = EventsQuery { after: Some(after), timeout_secs: Some(timeout_secs) };
        self.call_with(&contract::VIEWER_EVENTS, &[], &query, &()).await
    }
}
