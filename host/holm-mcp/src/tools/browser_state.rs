//! The tools that carry a login between boxes: `save_state` (a browser's
//! cookies and storage) and `load_state` (the same, put into a box).

use holm_proto::guest::StorageState;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args;
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `save_state`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SaveStateArgs {
    /// The box's id.
    pub box_id: String,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&SaveState, &LoadState];

/// `save_state`.
#[derive(Debug)]
pub(crate) struct SaveState;

impl Tool for SaveState {
    const NAME: &'static str = "save_state";
    const DESCRIPTION: &'static str = "Read the browser state of a box: every cookie of its \
        browser, and the local and session storage of each http(s) origin open in a tab. Pass the \
        answer as load_state's state to carry a login to another box (or back to this one later).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Save browser state", effect: Effect::ReadOnly, open_world: false };
    type Args = SaveStateArgs;

    async fn call(mcp: &HolmMcp, a: SaveStateArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        // Cookies and storage are the user's data, not holm's secrets.
        let state = mcp.client.boxed(&a.box_id).save_state().await.map_err(from_client)?;
        let summary = format!(
            "{} cookie(s) and the storage of {} origin(s); pass this object as \
             load_state's state to put them into a box",
            state.cookies.len(),
            state.origins.len()
        );
        Ok(json_result(Some(summary), to_value(&state)))
    }
}

/// `load_state`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoadStateArgs {
    /// The box's id.
    pub box_id: String,
    /// The object save_state answered (of this box or another): cookies and
    /// origins.
    pub state: StorageState,
}

/// `load_state`.
#[derive(Debug)]
pub(crate) struct LoadState;

impl Tool for LoadState {
    const NAME: &'static str = "load_state";
    const DESCRIPTION: &'static str = "Put cookies and storage that save_state answered into a \
        box's browser: sets the cookies, and each origin's local and session storage without \
        loading anything from the site (a tab is left open on each origin that has session \
        storage). Answers how many cookies and origins were set and the tabs opened. Open the \
        site with page afterwards.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Load browser state",
        effect: Effect::Destructive { idempotent: false },
        open_world: false,
    };
    type Args = LoadStateArgs;

    async fn call(mcp: &HolmMcp, a: LoadStateArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let done = mcp.client.boxed(&a.box_id).load_state(&a.state).await.map_err(from_client)?;
        let summary = format!(
            "set {} cookie(s) and the storage of {} origin(s); {} tab(s) left open to \
             hold session storage",
            done.cookies,
            done.origins,
            done.tabs_opened.len()
        );
        Ok(json_result(Some(summary), to_value(&done)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{LoadStateArgs, SaveStateArgs};
    use crate::args::parse;
    use crate::args::testing::{obj, paths};

    #[test]
    fn a_state_parses_strictly() {
        let err =
            parse::<SaveStateArgs>(obj(json!({"box_id": "box_a", "path": "/x"}))).unwrap_err();
        assert_eq!(paths(&err), ["path"]);

        let state = json!({
            "cookies": [{"name": "s", "value": "v", "domain": "127.0.0.1", "path": "/",
                         "expires": -1, "http_only": false, "secure": false, "same_site": "Lax"}],
            "origins": [{"origin": "http://127.0.0.1:8000",
                         "local_storage": [{"name": "user", "value": "alice"}]}]
        });
        let l: LoadStateArgs =
            parse(obj(json!({"box_id": "box_a", "state": state.clone()}))).unwrap();
        assert_eq!(l.state.cookies[0].name, "s");
        assert!(l.state.origins[0].session_storage.is_empty());
        // Playwright's camelCase is refused, every wrong field named, inside the state.
        let mut playwright = state;
        playwright["cookies"][0]["httpOnly"] = json!(false);
        playwright["origins"][0]["localStorage"] = json!([]);
        let err = parse::<LoadStateArgs>(obj(json!({"box_id": "box_a", "state": playwright})))
            .unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"state.cookies[0].httpOnly".to_owned()), "{p:?}");
        assert!(p.contains(&"state.origins[0].localStorage".to_owned()), "{p:?}");
        let err = parse::<LoadStateArgs>(obj(json!({"box_id": "box_a"}))).unwrap_err();
        assert_eq!(paths(&err), ["state"]);
    }
}
