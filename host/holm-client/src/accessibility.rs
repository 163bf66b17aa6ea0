//! The accessibility tree of a box, on [`BoxClient`].
//!
//! Through holmd these are `/v1/boxes/{id}/accessibility...`; straight
//! against a guest, `/v1/accessibility...`.

use holm_proto::accessibility::{NodeActed, NodeAction, Tree, TreeQuery};

use crate::boxes::BoxClient;
use crate::error::Result;

impl BoxClient {
    /// The accessibility tree of the focused window of a screen, or of the
    /// whole screen (`query.all`), bounded in depth and count.
    pub async fn accessibility(&self, query: &TreeQuery) -> Result<Tree> {
        self.call_with(&holm_proto::contract::ACCESSIBILITY, &[], query, &()).await
    }

    /// Clicks a node or sets its value, found by id or by role and name.
    pub async fn accessibility_act(&self, action: &NodeAction) -> Result<NodeActed> {
        self.call(&holm_proto::contract::ACCESSIBILITY_ACT, &[], action).await
    }
}
