//! Parsing a tool's arguments. Each tool's argument type, in its group's
//! file under `tools`, is both its input schema (through `schemars`; the doc
//! comments are what a model reads) and its parser. Arguments are parsed
//! strictly with [`holm_proto::strict`]: an unknown field is refused, and one
//! answer names every wrong field, as REST does.

use holm_proto::{ApiError, Issue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// No arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NoArgs {}

/// A tool whose calls are one action each, named by an `action` field, and
/// whose other fields depend on the action (`page`, `box`).
pub trait OneAction: DeserializeOwned + Copy {
    /// The action's name on the wire.
    fn as_str(self) -> &'static str;
    /// The fields the action needs, and the ones it also takes (besides
    /// `box_id` and `action`).
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]);
}

/// Parses the arguments of a tool of [`OneAction`]s strictly, and checks
/// each field against the action: one answer names every wrong field.
pub fn parse_action<T: DeserializeOwned + JsonSchema + 'static, A: OneAction>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ApiError> {
    let arguments = arguments.unwrap_or_default();
    let mut issues = action_field_issues::<T, A>(&arguments);
    match holm_proto::strict::from_value::<T>(serde_json::Value::Object(arguments)) {
        Ok(args) if issues.is_empty() => Ok(args),
        Ok(_) => Err(ApiError::invalid_fields(issues)),
        Err(strict) => {
            for issue in strict {
                if !issues.iter().any(|i| i.path == issue.path) {
                    issues.push(issue);
                }
            }
            Err(ApiError::invalid_fields(issues))
        }
    }
}

/// The fields given that `action` does not take, and the ones it needs that
/// are missing (nothing when the action itself is missing or unknown: the
/// strict parse names it).
fn action_field_issues<T: JsonSchema + 'static, A: OneAction>(
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Vec<Issue> {
    let Some(action) =
        arguments.get("action").and_then(|a| serde_json::from_value::<A>(a.clone()).ok())
    else {
        return Vec::new();
    };
    let (needs, takes) = action.fields();
    let name = action.as_str();
    let mut issues = Vec::new();
    let known = holm_proto::strict::schema_of::<T>();
    let known = known.get("properties").and_then(|p| p.as_object());
    for (field, value) in arguments {
        let is_known = known.is_some_and(|k| k.contains_key(field));
        let common = field == "box_id" || field == "action";
        if is_known
            && !common
            && !needs.contains(&field.as_str())
            && !takes.contains(&field.as_str())
        {
            // An explicit null is "not given".
            if value.is_null() {
                continue;
            }
            let all: Vec<&str> = needs.iter().chain(takes).copied().collect();
            let problem = if all.is_empty() {
                format!("{name} does not take {field}")
            } else {
                format!("{name} does not take {field}; it takes {}", all.join(", "))
            };
            issues.push(Issue { path: field.clone(), problem });
        }
    }
    for field in needs {
        if arguments.get(*field).is_none_or(serde_json::Value::is_null) {
            issues.push(Issue {
                path: (*field).to_owned(),
                problem: format!("{name} needs {field}"),
            });
        }
    }
    issues
}

/// Parses a tool's arguments strictly; missing arguments are `{}`.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, ApiError> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    holm_proto::strict::from_value(value).map_err(ApiError::invalid_fields)
}

/// Refuses any argument, naming each, for a tool that takes none. (The
/// schema walk of `strict` sees no properties to hold fields against in an
/// empty object schema, so this is done here.)
pub fn no_args(
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<NoArgs, ApiError> {
    let issues: Vec<Issue> = arguments
        .unwrap_or_default()
        .keys()
        .map(|k| Issue {
            path: k.clone(),
            problem: "unknown field; this tool takes no arguments".into(),
        })
        .collect();
    if issues.is_empty() { Ok(NoArgs {}) } else { Err(ApiError::invalid_fields(issues)) }
}

/// Checks a box id against the one grammar ([`holm_proto::BoxId`]), so a
/// wrong one is refused with a useful answer before any call, and nothing
/// else can reach a URL path.
pub fn check_box_id(id: &str) -> Result<holm_proto::BoxId, ApiError> {
    holm_proto::BoxId::parse(id).map_err(|e| {
        ApiError::invalid_fields(vec![Issue {
            path: "box_id".into(),
            problem: format!("{e}; list_boxes lists them"),
        }])
    })
}

/// A refusal of one field, `path`, for `problem`.
pub fn invalid(path: &str, problem: String) -> ApiError {
    ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem }])
}

/// What the tests of each tool's arguments share.
#[cfg(test)]
pub(crate) mod testing {
    use holm_proto::ApiError;

    /// Arguments as a call gives them.
    pub(crate) fn obj(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The text blocks of a tool result, one per line.
    pub(crate) fn text(r: &rmcp::model::CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The problems of the issues named in `e`'s details, one per line.
    pub(crate) fn problems(e: &ApiError) -> String {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(String::new, |issues| {
            issues
                .iter()
                .map(|i| i["problem"].as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// The paths of the issues named in `e`'s details.
    pub(crate) fn paths(e: &ApiError) -> Vec<String> {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(Vec::new, |issues| {
            issues.iter().map(|i| i["path"].as_str().unwrap_or_default().to_owned()).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::testing::{obj, paths};
    use super::{check_box_id, no_args, parse};
    use crate::tools::Tool;
    use crate::tools::boxes::BoxArgs;
    use crate::tools::exec::ExecArgs;
    use crate::tools::files::{Encoding, ReadFileArgs};
    use crate::tools::lifecycle::LaunchBoxArgs;
    use crate::tools::page::Page;
    use crate::tools::screen::{Coordinates, DesktopArgs, ScreenshotArgs, ShotFormat};

    #[test]
    fn missing_arguments_are_an_empty_object() {
        no_args(None).unwrap();
        no_args(obj(json!({}))).unwrap();
        let a: LaunchBoxArgs = parse(None).unwrap();
        assert!(a.runtime.is_none() && a.apps.is_empty());
    }

    #[test]
    fn defaults_are_what_the_descriptions_say() {
        let d: DesktopArgs = parse(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "click", "x": 1, "y": 2}]
        })))
        .unwrap();
        assert_eq!(d.screen, 0);
        assert_eq!(d.coordinates, Coordinates::Screenshot);
        assert!(d.screenshot && d.settle);
        let s: ScreenshotArgs = parse(obj(json!({"box_id": "box_abc"}))).unwrap();
        assert_eq!((s.screen, s.format, s.cursor), (0, ShotFormat::Png, false));
        let r: ReadFileArgs = parse(obj(json!({"box_id": "box_abc", "path": "/x"}))).unwrap();
        assert_eq!(r.encoding, Encoding::Text);
    }

    #[test]
    fn every_unknown_field_is_named_even_inside_actions() {
        let err = parse::<DesktopArgs>(obj(json!({
            "box_id": "box_abc",
            "actions": [{"type": "click", "x": 1, "y": 2, "buton": "left"}, {"type": "type", "txt": "a"}],
            "scren": 1,
        })))
        .unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"actions[0].buton".to_owned()), "{p:?}");
        assert!(p.contains(&"actions[1].txt".to_owned()), "{p:?}");
        assert!(p.contains(&"scren".to_owned()), "{p:?}");
        assert_eq!(err.code, holm_proto::ErrorCode::InvalidRequest);
    }

    #[test]
    fn wrong_types_and_missing_fields_are_named() {
        let err =
            parse::<ExecArgs>(obj(json!({"box_id": "box_a", "timeout_secs": "ten"}))).unwrap_err();
        assert_eq!(paths(&err), ["timeout_secs"]);
        let err = parse::<BoxArgs>(obj(json!({}))).unwrap_err();
        assert_eq!(paths(&err), ["box_id"]);
        let err =
            parse::<ReadFileArgs>(obj(json!({"box_id": "box_a", "path": "/x", "encoding": "hex"})))
                .unwrap_err();
        assert_eq!(paths(&err), ["encoding"]);
        let err = no_args(obj(json!({"all": true, "secret": 1}))).unwrap_err();
        assert_eq!(paths(&err), ["all", "secret"]);
    }

    #[test]
    fn an_unknown_action_type_is_refused() {
        let err = parse::<DesktopArgs>(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "teleport"}]
        })))
        .unwrap_err();
        assert!(
            err.message.contains("teleport") || format!("{:?}", err.details).contains("teleport")
        );
    }

    #[test]
    fn sensitive_is_taken_where_a_secret_is_sent_and_defaults_to_false() {
        let d: DesktopArgs = parse(obj(json!({
            "box_id": "box_abc", "actions": [{"type": "type", "text": "pw"}], "sensitive": true
        })))
        .unwrap();
        assert!(d.sensitive);
        let e: ExecArgs = parse(obj(json!({"box_id": "box_abc", "argv": ["true"]}))).unwrap();
        assert!(!e.sensitive, "false unless asked");
        for action in [
            json!({"action": "type", "text": "pw"}),
            json!({"action": "fill", "selector": "#pw", "value": "pw"}),
        ] {
            let mut case = action;
            case["box_id"] = json!("box_abc");
            case["sensitive"] = json!(true);
            assert!(Page::parse(obj(case)).unwrap().sensitive);
        }
        // An action that sends no secret does not take it.
        let err = Page::parse(obj(json!({
            "box_id": "box_abc", "action": "navigate", "url": "about:blank", "sensitive": true
        })))
        .unwrap_err();
        assert_eq!(paths(&err), ["sensitive"], "{err:?}");
    }

    #[test]
    fn box_ids_are_checked_like_holm_makes_them() {
        for _ in 0..100 {
            let id = holm::ids::new_box_id();
            check_box_id(&id).unwrap();
        }
        for bad in [
            "",
            "box_",
            "box_ABC",
            "box_../x",
            "box_a/b",
            "container",
            "box_a b",
            &format!("box_{}", "a".repeat(33)),
        ] {
            assert_eq!(check_box_id(bad).is_ok(), holm::ids::is_box_id(bad), "{bad:?}");
            let err = check_box_id(bad).unwrap_err();
            assert_eq!(paths(&err), ["box_id"]);
            assert!(err.message.contains("list_boxes"), "{}", err.message);
        }
    }
}
