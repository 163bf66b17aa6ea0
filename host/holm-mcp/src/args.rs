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

#[cfg(test)]
mod tests {
    use holm_proto::guest::ElementState;
    use serde_json::json;

    use super::{OneAction, check_box_id, no_args, parse, parse_action};
    use crate::tools::boxes::BoxArgs;
    use crate::tools::browser_state::{LoadStateArgs, SaveStateArgs};
    use crate::tools::exec::ExecArgs;
    use crate::tools::files::{Encoding, ReadFileArgs};
    use crate::tools::lifecycle::{BoxAction, BoxLifeArgs, LaunchBoxArgs};
    use crate::tools::page::{PageAction, PageArgs, PageContentArgs, PageScreenshotArgs, TabsArgs};
    use crate::tools::screen::{Coordinates, DesktopArgs, ScreenshotArgs, ShotFormat};
    use holm_proto::ApiError;

    /// `page`'s parse: one action a call, each field checked against it.
    fn parse_page(
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<PageArgs, ApiError> {
        parse_action::<PageArgs, PageAction>(arguments)
    }

    fn obj(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The problems of the issues named in `e`'s details, one per line.
    fn problems(e: &ApiError) -> String {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(String::new, |issues| {
            issues
                .iter()
                .map(|i| i["problem"].as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    fn paths(e: &ApiError) -> Vec<String> {
        e.details.as_ref().and_then(|d| d["issues"].as_array()).map_or_else(Vec::new, |issues| {
            issues.iter().map(|i| i["path"].as_str().unwrap_or_default().to_owned()).collect()
        })
    }

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
            assert!(parse_page(obj(case)).unwrap().sensitive);
        }
        // An action that sends no secret does not take it.
        let err = parse_page(obj(json!({
            "box_id": "box_abc", "action": "navigate", "url": "about:blank", "sensitive": true
        })))
        .unwrap_err();
        assert_eq!(paths(&err), ["sensitive"], "{err:?}");
    }

    #[test]
    fn each_page_action_parses_with_what_it_needs() {
        let cases = [
            json!({"action": "navigate", "url": "http://127.0.0.1:8000/", "wait_until": "commit"}),
            json!({"action": "click", "selector": "#go", "button": "right", "count": 2}),
            json!({"action": "type", "text": "hi\n"}),
            json!({"action": "type", "text": "hi", "selector": "#name", "timeout_ms": 100}),
            json!({"action": "fill", "selector": "#name", "value": ""}),
            json!({"action": "press", "key": "Control+a", "selector": "#name"}),
            json!({"action": "wait", "selector": ".late", "state": "detached"}),
            json!({"action": "evaluate", "expression": "1 + 1", "await_promise": false}),
            json!({"action": "open_tab"}),
            json!({"action": "open_tab", "url": "about:blank"}),
            json!({"action": "close_tab", "tab": "ABC"}),
            json!({"action": "activate_tab", "tab": "ABC"}),
        ];
        for mut case in cases {
            case["box_id"] = json!("box_abc");
            let a = parse_page(obj(case.clone())).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(json!(a.action.as_str()), case["action"]);
        }
        let a = parse_page(obj(json!({
            "box_id": "box_abc", "action": "wait", "selector": "x", "state": "hidden", "tab": null
        })))
        .unwrap();
        assert_eq!(a.state, Some(ElementState::Hidden));
        assert_eq!(a.tab, None, "null is not given");
    }

    #[test]
    fn each_box_action_takes_its_own_fields_and_is_refused_others_each_named() {
        let parse = |v: serde_json::Value| parse_action::<BoxLifeArgs, BoxAction>(obj(v));
        for ok in [
            json!({"box_id": "box_a", "action": "stop"}),
            json!({"box_id": "box_a", "action": "start", "wait_secs": 10}),
            json!({"box_id": "box_a", "action": "pause"}),
            json!({"box_id": "box_a", "action": "resume", "minutes": null}),
            json!({"box_id": "box_a", "action": "fork", "name": "copy", "ttl_minutes": 5, "idle_minutes": 2}),
            json!({"box_id": "box_a", "action": "extend", "minutes": 30}),
        ] {
            let a = parse(ok.clone()).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(json!(a.action.as_str()), ok["action"]);
        }
        let err =
            parse(json!({"box_id": "box_a", "action": "pause", "minutes": 3, "wait_secs": 1}))
                .unwrap_err();
        assert_eq!(paths(&err), ["minutes", "wait_secs"]);
        assert!(problems(&err).contains("pause does not take minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "extend", "name": "x"})).unwrap_err();
        assert_eq!(paths(&err), ["name", "minutes"]);
        assert!(problems(&err).contains("extend needs minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "reboot", "colour": 1})).unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"action".to_owned()) && p.contains(&"colour".to_owned()), "{p:?}");
    }

    #[test]
    fn a_page_action_is_refused_fields_it_does_not_take_or_lacks_each_named() {
        let err = parse_page(obj(json!({
            "box_id": "box_abc", "action": "navigate", "selector": "#go", "text": "x", "urll": "y"
        })))
        .unwrap_err();
        let p = paths(&err);
        for want in ["selector", "text", "urll", "url"] {
            assert!(p.contains(&want.to_owned()), "{want} in {p:?}");
        }
        let issues = err.details.as_ref().unwrap()["issues"].to_string();
        assert!(issues.contains("navigate does not take selector; it takes url"), "{issues}");
        assert!(issues.contains("navigate needs url"), "{issues}");

        for (args, want) in [
            (json!({"action": "click"}), vec!["selector"]),
            (json!({"action": "fill", "selector": "#a"}), vec!["value"]),
            (json!({"action": "fill"}), vec!["selector", "value"]),
            (json!({"action": "press", "text": "a"}), vec!["key", "text"]),
            (json!({"action": "evaluate", "selector": "#a", "expression": "1"}), vec!["selector"]),
            (json!({"action": "close_tab"}), vec!["tab"]),
            (json!({"action": "activate_tab", "tab": "A", "url": "x"}), vec!["url"]),
            (json!({"action": "open_tab", "tab": "A"}), vec!["tab"]),
            (json!({"action": "click", "selector": "#a", "count": "two"}), vec!["count"]),
            (json!({"action": "wait", "selector": "#a", "state": "gone"}), vec!["state"]),
            (json!({"action": "scroll", "selector": "#a"}), vec!["action"]),
            (json!({"selector": "#a"}), vec!["action"]),
        ] {
            let mut args = args;
            args["box_id"] = json!("box_abc");
            let err = parse_page(obj(args.clone())).unwrap_err();
            let mut p = paths(&err);
            p.sort();
            assert_eq!(p, want, "{args}");
            assert_eq!(err.code, holm_proto::ErrorCode::InvalidRequest);
        }
    }

    #[test]
    fn every_page_field_is_taken_by_some_action() {
        let schema = holm_proto::strict::schema_of::<PageArgs>();
        let fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let actions = [
            PageAction::Navigate,
            PageAction::Click,
            PageAction::Type,
            PageAction::Fill,
            PageAction::Press,
            PageAction::Wait,
            PageAction::Evaluate,
            PageAction::OpenTab,
            PageAction::CloseTab,
            PageAction::ActivateTab,
        ];
        for f in fields {
            let taken = f == "box_id"
                || f == "action"
                || actions.iter().any(|a| {
                    let (needs, takes) = a.fields();
                    needs.contains(&f.as_str()) || takes.contains(&f.as_str())
                });
            assert!(taken, "{f} is taken by some action");
        }
        // And every field an action names is a field.
        for a in actions {
            let (needs, takes) = a.fields();
            for f in needs.iter().chain(takes) {
                assert!(schema["properties"].get(*f).is_some(), "{}: {f}", a.as_str());
            }
            let wire: PageAction = serde_json::from_value(json!(a.as_str())).unwrap();
            assert_eq!(wire, a);
        }
    }

    #[test]
    fn page_reads_and_state_parse_strictly() {
        let s: PageScreenshotArgs = parse(obj(json!({"box_id": "box_a"}))).unwrap();
        assert_eq!((s.format, s.full_page, s.tab), (ShotFormat::Png, false, None));
        let err = parse::<PageScreenshotArgs>(obj(json!({"box_id": "box_a", "fullPage": true})))
            .unwrap_err();
        assert_eq!(paths(&err), ["fullPage"]);
        let c: PageContentArgs = parse(obj(json!({"box_id": "box_a", "tab": "T"}))).unwrap();
        assert_eq!((c.tab.as_deref(), c.max_bytes), (Some("T"), None));
        let err = parse::<TabsArgs>(obj(json!({"box_id": "box_a", "all": true}))).unwrap_err();
        assert_eq!(paths(&err), ["all"]);
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
