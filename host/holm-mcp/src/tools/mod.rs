//! The tools: each one a `Tool`, its name, description, input schema,
//! annotations and handler together in the file of its group, and every one
//! listed once, in order, in its group's `TOOLS`.
//!
//! Descriptions are short and exact: they say the units and which coordinates
//! a tool takes. Annotations are truthful: read-only tools change nothing;
//! `desktop`, `exec` and `write_file` can change or destroy what is in a box,
//! so they are destructive; `openWorld` marks tools whose effects can reach
//! beyond holm (a cloud runtime, package mirrors, the web from the box).
//!
//! No tool adds a runtime (a vendor key given to an agent would pass through
//! its context) and no tool answers a secret: box secrets, bridge secrets and
//! the server token stay in holmd.
//!
//! To add a tool: a unit struct, its `impl Tool` and its place in `TOOLS`,
//! all in its group's file (a new group is a new file here, its `mod` line
//! and its place in `GROUPS`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use holm_proto::ApiError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::progress::Reporter;
use crate::server::HolmMcp;

pub(crate) mod accessibility;
pub(crate) mod boxes;
pub(crate) mod browser_state;
pub(crate) mod desk;
pub(crate) mod exec;
pub(crate) mod files;
pub(crate) mod lifecycle;
pub(crate) mod page;
pub(crate) mod record;
pub(crate) mod screen;
pub(crate) mod viewers;

/// Every group of tools, each listing its own in its file (`TOOLS`), in
/// the order `tools/list` answers them.
const GROUPS: &[&[&dyn DynTool]] = &[
    boxes::TOOLS,
    screen::TOOLS,
    exec::TOOLS,
    files::TOOLS,
    page::TOOLS,
    browser_state::TOOLS,
    viewers::TOOLS,
    desk::TOOLS,
    accessibility::TOOLS,
    record::TOOLS,
];

/// Every tool, in the order `tools/list` answers them.
pub(crate) fn tools() -> impl Iterator<Item = &'static dyn DynTool> {
    GROUPS.iter().flat_map(|group| group.iter().copied())
}

/// What a tool answers: its result, or a failure that becomes a tool result
/// ([`crate::errors::tool_error`]).
pub(crate) type Answer = Result<CallToolResult, ApiError>;

/// One tool: what `tools/list` says of it and what a call does.
///
/// A tool is a unit struct; everything about it is here, in its group's
/// file. [`DynTool`] is the same tool behind a reference, for [`TOOLS`].
pub(crate) trait Tool: Sync + 'static {
    /// The name on the wire.
    const NAME: &'static str;
    /// What the tool does, for a model: units, coordinates, what it answers.
    const DESCRIPTION: &'static str;
    /// Its title and what it does to the world.
    const ANNOTATIONS: Annotations;
    /// Its arguments: their JSON Schema is the tool's input schema, and a
    /// call's arguments are parsed into them strictly.
    type Args: JsonSchema + DeserializeOwned + Send + 'static;

    /// The input schema: the arguments' own, unless a tool words a part of
    /// it for a model.
    fn input_schema() -> Arc<JsonObject> {
        schema::<Self::Args>()
    }

    /// The `_meta` the tool carries (the live screen's, for some).
    fn meta() -> Option<MetaObject> {
        None
    }

    /// Parses a call's arguments strictly ([`crate::args::parse`]); a tool
    /// of one action a call, or of none, checks more.
    fn parse(arguments: Option<JsonObject>) -> Result<Self::Args, ApiError> {
        crate::args::parse(arguments)
    }

    /// Runs the tool: REST calls through the server's client, reporting
    /// progress to `progress` when the client asked for it.
    fn call(
        mcp: &HolmMcp,
        args: Self::Args,
        progress: Option<&Reporter>,
    ) -> impl Future<Output = Answer> + Send;
}

/// A tool's annotations, written as constants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Annotations {
    /// The title a host shows.
    pub title: &'static str,
    /// What it does to the world.
    pub effect: Effect,
    /// Whether its effects can reach beyond holm.
    pub open_world: bool,
}

/// What a tool does to the world, as its annotations say.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Effect {
    /// Changes nothing.
    ReadOnly,
    /// Adds, and never destroys.
    Additive,
    /// Can change or destroy; `idempotent` when repeating it changes nothing more.
    Destructive { idempotent: bool },
}

impl Annotations {
    fn to_mcp(self) -> ToolAnnotations {
        let a = ToolAnnotations::with_title(self.title).open_world(self.open_world);
        match self.effect {
            Effect::ReadOnly => a.read_only(true).destructive(false).idempotent(true),
            Effect::Additive => a.read_only(false).destructive(false).idempotent(false),
            Effect::Destructive { idempotent } => {
                a.read_only(false).destructive(true).idempotent(idempotent)
            }
        }
    }
}

/// A boxed call of a tool.
pub(crate) type Running<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// A [`Tool`] behind a reference: every `Tool` is one.
pub(crate) trait DynTool: Sync {
    /// The name on the wire.
    fn name(&self) -> &'static str;
    /// The definition `tools/list` answers.
    fn definition(&self) -> rmcp::model::Tool;
    /// Parses `arguments` and runs the tool.
    fn run<'a>(
        &self,
        mcp: &'a HolmMcp,
        arguments: Option<JsonObject>,
        progress: Option<&'a Reporter>,
    ) -> Running<'a>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn definition(&self) -> rmcp::model::Tool {
        let annotations = T::ANNOTATIONS.to_mcp();
        let mut tool = rmcp::model::Tool::new(T::NAME, T::DESCRIPTION, T::input_schema());
        tool.meta = T::meta();
        tool.title = annotations.title.clone();
        tool.annotations = Some(annotations);
        tool
    }

    fn run<'a>(
        &self,
        mcp: &'a HolmMcp,
        arguments: Option<JsonObject>,
        progress: Option<&'a Reporter>,
    ) -> Running<'a> {
        Box::pin(async move { T::call(mcp, T::parse(arguments)?, progress).await })
    }
}

/// The tool named `name`.
pub(crate) fn get(name: &str) -> Option<&'static dyn DynTool> {
    tools().find(|t| t.name() == name)
}

/// Every tool's definition, made once.
pub fn all() -> &'static [rmcp::model::Tool] {
    static DEFINITIONS: OnceLock<Vec<rmcp::model::Tool>> = OnceLock::new();
    DEFINITIONS.get_or_init(|| tools().map(|t| t.definition()).collect())
}

/// The definition of the tool named `name`.
pub fn find(name: &str) -> Option<rmcp::model::Tool> {
    get(name).map(|t| t.definition())
}

/// The input schema of arguments of type `T`.
pub(crate) fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    // The argument types are plain structs whose schemas are objects; a test
    // checks every one, so this cannot fail at run time.
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_empty_input())
}

/// A JSON answer: an optional sentence, the JSON as text, and the same JSON
/// as `structuredContent`.
pub(crate) fn json_result(summary: Option<String>, value: Value) -> CallToolResult {
    let mut content = Vec::new();
    if let Some(s) = summary {
        content.push(ContentBlock::text(s));
    }
    content.push(ContentBlock::text(value.to_string()));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(value);
    result
}

/// `v` as JSON (`null` if it cannot be: the wire types always can).
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::{all, find, get, tools};

    /// Every `$ref` in `schema` points at a definition that exists.
    fn refs_resolve(root: &Value, node: &Value) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let pointer =
                        r.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {r}"));
                    assert!(root.pointer(pointer).is_some(), "$ref {r} resolves");
                }
                map.values().for_each(|v| refs_resolve(root, v));
            }
            Value::Array(items) => items.iter().for_each(|v| refs_resolve(root, v)),
            _ => {}
        }
    }

    /// The JSON Schema keywords a schema may hold, for a structural check:
    /// every object that is a schema uses only known keywords and valid types.
    fn check_schema(node: &Value, path: &str) {
        let Value::Object(map) = node else {
            assert!(node.is_boolean(), "{path}: a schema is an object or a boolean");
            return;
        };
        const KEYWORDS: &[&str] = &[
            "$schema",
            "$ref",
            "$defs",
            "type",
            "properties",
            "required",
            "items",
            "enum",
            "const",
            "oneOf",
            "anyOf",
            "allOf",
            "description",
            "title",
            "default",
            "format",
            "minimum",
            "maximum",
            "additionalProperties",
            "minItems",
            "maxItems",
            "examples",
        ];
        for (k, v) in map {
            assert!(KEYWORDS.contains(&k.as_str()), "{path}: unknown keyword {k}");
            match k.as_str() {
                "type" => {
                    let types: Vec<&str> = match v {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => panic!("{path}: type is a string or an array"),
                    };
                    for t in types {
                        assert!(
                            ["object", "array", "string", "integer", "number", "boolean", "null"]
                                .contains(&t),
                            "{path}: type {t}"
                        );
                    }
                }
                "properties" | "$defs" => {
                    for (name, sub) in v.as_object().unwrap_or_else(|| panic!("{path}.{k}")) {
                        check_schema(sub, &format!("{path}.{k}.{name}"));
                    }
                }
                "items" | "additionalProperties" => check_schema(v, &format!("{path}.{k}")),
                "oneOf" | "anyOf" | "allOf" => {
                    for (i, sub) in
                        v.as_array().unwrap_or_else(|| panic!("{path}.{k}")).iter().enumerate()
                    {
                        check_schema(sub, &format!("{path}.{k}[{i}]"));
                    }
                }
                "required" => {
                    let props = map.get("properties").and_then(Value::as_object);
                    for r in v.as_array().unwrap_or_else(|| panic!("{path}.required")) {
                        let r = r.as_str().unwrap_or_else(|| panic!("{path}.required"));
                        assert!(
                            props.is_some_and(|p| p.contains_key(r)),
                            "{path}: required {r} is a property"
                        );
                    }
                }
                "description" => assert!(v.is_string(), "{path}.description"),
                _ => {}
            }
        }
    }

    #[test]
    fn each_tool_is_one_name_found_by_it() {
        // Which tools there are, in order, is docs/api/mcp.tools.json's
        // (tools_list_matches_its_snapshot).
        let names: Vec<&str> = all().iter().map(|t| t.name.as_ref()).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len());
        for t in tools() {
            assert_eq!(get(t.name()).map(|g| g.name()), Some(t.name()));
            assert_eq!(find(t.name()).map(|d| d.name), Some(t.name().into()));
        }
        assert!(get("add_runtime").is_none() && find("add_runtime").is_none());
    }

    #[test]
    fn no_tool_adds_a_runtime_or_speaks_of_secrets() {
        for t in all() {
            let name = t.name.to_lowercase();
            assert!(!name.contains("runtime") || name.starts_with("list_"), "{name}");
            assert!(
                !name.contains("secret") && !name.contains("token") && !name.contains("key"),
                "{name}"
            );
            let schema = serde_json::to_string(&t.input_schema).unwrap().to_lowercase();
            for word in ["secret", "token", "api_key", "password", "credential"] {
                assert!(!schema.contains(word), "{name}'s schema mentions {word}");
            }
        }
    }

    #[test]
    fn every_input_schema_is_a_valid_object_schema() {
        for t in all() {
            let schema = Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert!(
                schema["properties"].is_object()
                    || t.name == "list_runtimes"
                    || t.name == "list_boxes",
                "{}",
                t.name
            );
            assert_eq!(
                schema["additionalProperties"], false,
                "{}: unknown fields are refused",
                t.name
            );
            refs_resolve(&schema, &schema);
            check_schema(&schema, t.name.as_ref());
            // Every argument is described for the model.
            if let Some(props) = schema["properties"].as_object() {
                for (field, sub) in props {
                    let described = sub.get("description").is_some()
                        || sub.get("$ref").is_some()
                        || sub.get("allOf").is_some();
                    assert!(described, "{}.{field} has a description", t.name);
                }
            }
        }
    }

    #[test]
    fn box_tools_require_a_box_id() {
        for t in all() {
            let schema = Value::Object((*t.input_schema).clone());
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let box_tool =
                !matches!(t.name.as_ref(), "list_runtimes" | "launch_box" | "list_boxes");
            assert_eq!(required.contains(&"box_id"), box_tool, "{}", t.name);
        }
    }

    #[test]
    fn the_desktop_schema_lists_every_action() {
        let t = find("desktop").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        for action in [
            "move",
            "click",
            "mouse_down",
            "mouse_up",
            "drag",
            "scroll",
            "type",
            "key",
            "key_down",
            "key_up",
            "hold",
            "wait",
        ] {
            assert!(
                s.contains(&format!("\"const\":\"{action}\"")),
                "desktop's schema has {action}"
            );
            assert!(t.description.as_deref().unwrap().contains(action), "desktop says {action}");
        }
        let action = &Value::Object((*t.input_schema).clone())["$defs"]["Action"]["description"];
        assert!(action.as_str().unwrap().contains("screenshot pixels"), "{action}");
    }

    #[test]
    fn annotations_are_truthful() {
        let get = |n: &str| find(n).unwrap().annotations.unwrap();
        for n in [
            "list_runtimes",
            "list_boxes",
            "screenshot",
            "cursor",
            "read_file",
            "list_files",
            "list_tabs",
            "page_text",
            "page_html",
            "page_screenshot",
            "save_state",
            "wait_for_handback",
        ] {
            let a = get(n);
            assert_eq!(a.read_only_hint, Some(true), "{n} is read-only");
            assert_eq!(a.destructive_hint, Some(false), "{n}");
        }
        for n in ["remove_box", "box", "desktop", "exec", "write_file", "page", "load_state"] {
            let a = get(n);
            assert_eq!(a.read_only_hint, Some(false), "{n}");
            assert_eq!(a.destructive_hint, Some(true), "{n} is destructive");
        }
        let launch = get("launch_box");
        assert_eq!(
            (launch.read_only_hint, launch.destructive_hint, launch.idempotent_hint),
            (Some(false), Some(false), Some(false))
        );
        assert_eq!(get("remove_box").idempotent_hint, Some(true));
        assert_eq!(get("write_file").idempotent_hint, Some(true));
        assert_eq!(get("desktop").idempotent_hint, Some(false));
        assert_eq!(get("exec").idempotent_hint, Some(false));
        // A fork makes a box each time; an extend moves the deadline each time.
        assert_eq!(get("box").idempotent_hint, Some(false));
        // A page action can submit a form or run any script; loading a state
        // again opens more tabs.
        assert_eq!(get("page").idempotent_hint, Some(false));
        assert_eq!(get("load_state").idempotent_hint, Some(false));
        assert_eq!(get("page").open_world_hint, Some(true), "navigate reaches the web");
        assert_eq!(get("load_state").open_world_hint, Some(false), "it fetches nothing");
        for t in all() {
            let a = t.annotations.as_ref().unwrap();
            assert!(a.title.is_some() && a.open_world_hint.is_some(), "{}", t.name);
            assert_eq!(t.title, a.title);
        }
    }

    #[test]
    fn the_page_schema_and_description_list_every_action() {
        let t = find("page").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        let d = t.description.as_deref().unwrap();
        for action in [
            "navigate",
            "click",
            "type",
            "fill",
            "press",
            "wait",
            "evaluate",
            "open_tab",
            "close_tab",
            "activate_tab",
        ] {
            assert!(s.contains(&format!("\"{action}\"")), "page's schema has {action}");
            assert!(d.contains(&format!("{action} {{")), "page says {action}");
        }
        let schema = Value::Object((*t.input_schema).clone());
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(required, ["box_id", "action"]);
    }

    #[test]
    fn the_box_tool_lists_every_action_and_its_fields() {
        use crate::args::OneAction;
        use crate::tools::lifecycle::BoxAction;
        let t = find("box").unwrap();
        let s = serde_json::to_string(&t.input_schema).unwrap();
        let d = t.description.as_deref().unwrap();
        for a in BoxAction::ALL {
            let name = a.as_str();
            assert!(s.contains(&format!("\"{name}\"")), "box's schema has {name}");
            assert!(d.contains(name), "box says {name}");
            let (needs, takes) = a.fields();
            for field in needs.iter().chain(takes) {
                assert!(s.contains(&format!("\"{field}\"")), "box's schema has {field}");
            }
        }
        for word in ["unsupported", "conflict", "can"] {
            assert!(d.contains(word), "box says {word}");
        }
        let schema = Value::Object((*t.input_schema).clone());
        let required: Vec<&str> =
            schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert_eq!(required, ["box_id", "action"]);
    }

    #[test]
    fn descriptions_are_short_and_say_their_coordinates() {
        for t in all() {
            let d = t.description.as_deref().unwrap();
            assert!(d.len() <= 1600, "{}: {} characters", t.name, d.len());
            assert!(!d.contains("  "), "{}: no double spaces", t.name);
        }
        for n in ["screenshot", "desktop", "cursor"] {
            let d = find(n).unwrap().description.unwrap();
            assert!(d.contains("screenshot pixels") || d.contains("image pixels"), "{n}: {d}");
        }
        // A page screenshot's pixels are not what desktop takes, and it says so.
        let d = find("page_screenshot").unwrap().description.unwrap();
        assert!(d.contains("not the screen's"), "{d}");
    }
}
