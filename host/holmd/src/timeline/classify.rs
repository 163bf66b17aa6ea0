//! Which action a request to a box is, and its parameters with everything
//! secret or large taken out: a command's environment keeps its names, its
//! standard input and a file's content their sizes, a browser state and a
//! clipboard's text nothing but their sizes; typed text, filled or set
//! values and evaluated expressions (fields `text`, `value`,
//! `expression`) only their length in characters (`text_chars`, ...); a
//! URL loses its query, fragment and credentials; a command line or argv
//! keeps its words with credentials' values replaced ([`super::redact`]);
//! any field named like a credential is replaced. Long text is cut. An
//! action whose body says `"sensitive": true` keeps less ([`scrub`]): no
//! text nor its length, a command line or argv only as `[sensitive]`, no
//! environment names nor standard input size; its params say
//! `"sensitive": true`, and the image it answers is not kept. Reads
//! (listing, stat, reading a file, a process's output, tabs, a page's
//! text) are not actions: they stay in the traces only.
//!
//! Which action a request is comes from its route's record (its
//! [`Step`]: kind, name and where its parameters come from), which the
//! router matched; only the body and the query are read here, never the
//! path.

use holm_proto::contract::{Params, Step};
use holm_proto::guest::{SENSITIVE, SENSITIVE_SHOWN};
use holm_proto::timeline::{StepAction, StepKind};
use serde_json::{Map, Value, json};

use super::redact;

/// Text longer than this is cut, with `…` at the end.
const MAX_TEXT: usize = 200;
/// Lists longer than this are cut.
const MAX_ITEMS: usize = 50;
/// Nested deeper than this becomes `"…"`.
const MAX_DEPTH: usize = 6;
/// Fields whose text is never kept, only its length in characters (as
/// `<name>_chars`): typed text, filled or set values, expressions.
const TEXT_FIELDS: &[&str] = &["text", "value", "expression"];

/// What the middleware knows of a request to a box.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Its route's step ([`holm_proto::contract::GuestRoute::step`] or
    /// [`holm_proto::contract::server::ServerRoute::step`]); `None` for a
    /// read.
    pub step: Option<Step>,
    /// Its route's path parameters, as the router matched them (the box's
    /// `id` is left out of the action).
    pub params: &'a [(&'a str, &'a str)],
    /// Its query, undecoded.
    pub query: Option<&'a str>,
    /// Its body when it was small enough to read (JSON routes).
    pub body: Option<&'a [u8]>,
    /// How many bytes its raw body had (file contents, standard input);
    /// `None` for a route whose body is not raw.
    pub body_bytes: Option<u64>,
}

/// The action a request is, or `None` for a read.
pub fn classify(r: &Request<'_>) -> Option<StepAction> {
    let Some(scrubbed) = sensitive_body(r.body) else { return classify_plain(r) };
    let mut action = classify_plain(&Request { body: Some(&scrubbed), ..*r })?;
    action.params.remove("chars");
    action.params.insert(SENSITIVE.into(), Value::Bool(true));
    Some(action)
}

/// Whether an action was marked sensitive: its image is then not kept.
pub fn is_sensitive(action: &StepAction) -> bool {
    action.params.get(SENSITIVE) == Some(&Value::Bool(true))
}

/// A body marked `"sensitive": true`, scrubbed ([`scrub`]); `None` for any
/// other body.
fn sensitive_body(body: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut v = serde_json::from_slice::<Value>(body?).ok()?;
    if v.get(SENSITIVE) != Some(&Value::Bool(true)) {
        return None;
    }
    scrub(&mut v);
    serde_json::to_vec(&v).ok()
}

/// A sensitive body with every text taken out, at any depth: typed, filled
/// or set text and expressions (not even their length), a command's
/// environment and standard input (not even names or size); a command line
/// and an argv become [`SENSITIVE_SHOWN`].
fn scrub(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in TEXT_FIELDS.iter().chain(&["env", "stdin"]) {
                m.remove(*k);
            }
            if m.contains_key("command") {
                m.insert("command".into(), json!(SENSITIVE_SHOWN));
            }
            if m.contains_key("argv") {
                m.insert("argv".into(), json!([SENSITIVE_SHOWN]));
            }
            m.values_mut().for_each(scrub);
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}

/// The action a request is, its body taken as it came: the parameters
/// its step names, then its path parameters (`screen` as a number), then
/// the size of a raw body.
fn classify_plain(r: &Request<'_>) -> Option<StepAction> {
    let step = r.step?;
    let mut name = step.name.to_owned();
    let mut params = match step.params {
        Params::Path => Map::new(),
        Params::Body => body_params(r.body),
        Params::Input => {
            let p = body_params(r.body);
            name = input_name(&p, step.name);
            p
        }
        Params::Command => command_params(r.body),
        Params::Query => query_params(r.query),
        Params::BodySize => one_value("bytes", json!(r.body.map_or(0, <[u8]>::len))),
        Params::TextChars => one_value("chars", json!(text_chars(r.body))),
    };
    for (key, value) in r.params.iter().filter(|(key, _)| *key != "id") {
        let value = if *key == "screen" { screen_number(value) } else { json!(value) };
        params.insert((*key).to_owned(), value);
    }
    if let Some(bytes) = r.body_bytes {
        params.insert("bytes".into(), json!(bytes));
    }
    Some(StepAction { kind: step.kind, name, params })
}

/// How many characters a JSON body's `text` has (the clipboard's).
fn text_chars(body: Option<&[u8]>) -> usize {
    body.and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| v.get("text").and_then(Value::as_str).map(|t| t.chars().count()))
        .unwrap_or(0)
}

/// The action a change of control is.
pub fn control(event: &holm_proto::viewer::ControlEvent) -> StepAction {
    let value = serde_json::to_value(event).unwrap_or(Value::Null);
    let mut params = match redact(&value, 0) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    for k in ["seq", "at", "kind"] {
        params.remove(k);
    }
    StepAction { kind: StepKind::Control, name: event.kind.as_str().to_owned(), params }
}

fn one_value(key: &str, value: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    m
}

fn screen_number(s: &str) -> Value {
    s.parse::<u64>().map_or_else(|_| json!(s), |n| json!(n))
}

/// An input's name: its one action's type (`click`, `type`, ...),
/// `actions` for several, else `default`.
fn input_name(p: &Map<String, Value>, default: &str) -> String {
    match p.get("actions").and_then(Value::as_array).map(Vec::as_slice) {
        Some([one]) => one.get("type").and_then(Value::as_str).unwrap_or(default).to_owned(),
        Some(_) => "actions".to_owned(),
        None => default.to_owned(),
    }
}

/// A JSON body's fields, redacted; a body that is not a JSON object keeps
/// only its size.
fn body_params(body: Option<&[u8]>) -> Map<String, Value> {
    let Some(body) = body else { return Map::new() };
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => match redact(&v, 0) {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        _ => one_value("body_bytes", json!(body.len())),
    }
}

/// A command's parameters: its argv or command line and working directory
/// (cut when long), the names of its environment's variables (never their
/// values), the size of its standard input (never its text).
fn command_params(body: Option<&[u8]>) -> Map<String, Value> {
    let Some(Value::Object(mut m)) = body.and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return body_params(body);
    };
    if let Some(Value::Object(env)) = m.remove("env") {
        m.insert("env_names".into(), json!(env.keys().collect::<Vec<_>>()));
    }
    if let Some(stdin) = m.remove("stdin") {
        m.insert("stdin_bytes".into(), json!(stdin.as_str().map_or(0, str::len)));
    }
    match redact(&Value::Object(m), 0) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A query's parameters: names and values, decoded; a credential's value
/// replaced.
fn query_params(query: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()).take(16) {
        m.insert(cut(&k), redact_field(&k, &Value::String(v.into_owned()), 0));
    }
    m
}

fn redact_field(name: &str, v: &Value, depth: usize) -> Value {
    if redact::is_secret_name(name) {
        return json!(redact::REDACTED);
    }
    match (name, v) {
        ("url", Value::String(u)) => Value::String(cut(&redact::url(u))),
        (n, Value::String(u)) if n.ends_with("_url") => Value::String(cut(&redact::url(u))),
        ("command", Value::String(c)) => Value::String(cut(&redact::command_line(c))),
        ("argv", Value::Array(a)) => {
            let args: Vec<String> =
                a.iter().take(MAX_ITEMS).map(|x| x.as_str().unwrap_or("").to_owned()).collect();
            Value::Array(redact::argv(&args).iter().map(|x| Value::String(cut(x))).collect())
        }
        _ => redact(v, depth + 1),
    }
}

/// An object's fields, each redacted; a text field becomes its length.
fn redact_object(m: &Map<String, Value>, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, x) in m {
        if TEXT_FIELDS.contains(&k.as_str()) {
            match x {
                Value::String(t) => out.insert(format!("{k}_chars"), json!(t.chars().count())),
                Value::Null => out.insert(k.clone(), Value::Null),
                _ => out.insert(k.clone(), json!(redact::REDACTED)),
            };
        } else {
            out.insert(k.clone(), redact_field(k, x, depth));
        }
    }
    out
}

/// `v` with credentials replaced, long text cut, long lists and deep
/// nesting shortened.
fn redact(v: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return json!("…");
    }
    match v {
        Value::String(s) => Value::String(cut(s)),
        Value::Array(a) => {
            Value::Array(a.iter().take(MAX_ITEMS).map(|x| redact(x, depth + 1)).collect())
        }
        Value::Object(m) => Value::Object(redact_object(m, depth)),
        other => other.clone(),
    }
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(MAX_TEXT).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use holm_proto::contract::{self, server};

    use super::*;

    /// A request of the route whose step is `step`, its path parameters
    /// `params`, with a JSON `body`.
    fn req<'a>(
        step: Option<Step>,
        params: &'a [(&'a str, &'a str)],
        body: Option<&'a str>,
    ) -> Request<'a> {
        Request { step, params, query: None, body: body.map(str::as_bytes), body_bytes: None }
    }

    /// The tab tools' steps, by name.
    fn page_tool(name: &str) -> Option<Step> {
        [
            contract::NAVIGATE.route,
            contract::CLICK.route,
            contract::TYPE.route,
            contract::FILL.route,
            contract::EVALUATE.route,
        ]
        .into_iter()
        .find_map(|r| r.step.filter(|s| s.name == name))
    }

    #[test]
    fn reads_are_not_steps_and_actions_have_their_kind() {
        for read in [
            contract::LIST.route.step,
            contract::READ_FILE.step,
            contract::OUTPUT.step,
            contract::TABS.route.step,
            contract::INFO.route.step,
            contract::SCREEN.route.step,
            server::VIEWERS.route.step,
            server::BRIDGE.route.step,
            server::AGENT.route.step,
        ] {
            assert_eq!(classify(&req(read, &[("id", "box_a")], None)), None);
        }
        let kind =
            |step, params, body| classify(&req(step, params, body)).map(|a| (a.kind, a.name));
        let k = |kind: StepKind, name: &str| Some((kind, name.to_owned()));
        let click = r#"{"actions":[{"type":"click","x":5,"y":6}]}"#;
        let screen = &[("id", "box_a"), ("screen", "1")][..];
        assert_eq!(kind(contract::INPUT.step, screen, Some(click)), k(StepKind::Input, "click"));
        assert_eq!(kind(contract::INPUT.step, screen, Some("{}")), k(StepKind::Input, "input"));
        let shot = kind(contract::SCREENSHOT.step, screen, None);
        assert_eq!(shot, k(StepKind::Screenshot, "screen"));
        let page = kind(contract::PAGE_SCREENSHOT.step, &[], None);
        assert_eq!(page, k(StepKind::Screenshot, "page"));
        let run = kind(contract::RUN.route.step, &[], Some("{}"));
        assert_eq!(run, k(StepKind::Command, "run"));
        assert_eq!(kind(contract::WRITE_FILE.step, &[], None), k(StepKind::File, "write"));
        let rename = kind(contract::RENAME.route.step, &[], Some("{}"));
        assert_eq!(rename, k(StepKind::File, "rename"));
        assert_eq!(kind(page_tool("navigate"), &[], Some("{}")), k(StepKind::Page, "navigate"));
        let viewer = kind(server::CREATE_VIEWER.route.step, &[], Some("{}"));
        assert_eq!(viewer, k(StepKind::Control, "viewer_created"));
        let stop = kind(server::STOP_BOX.route.step, &[("id", "box_a")], None);
        assert_eq!(stop, k(StepKind::Lifecycle, "stop"));
        let remove = kind(server::REMOVE_BOX.route.step, &[("id", "box_a")], None);
        assert_eq!(remove, k(StepKind::Lifecycle, "remove"));
    }

    #[test]
    fn path_parameters_and_a_raw_bodys_size_are_the_steps_parameters() {
        let action = |step, params, body| classify(&req(step, params, body)).unwrap().params;
        let kill = action(contract::KILL.route.step, &[("id", "box_a"), ("process", "p_1")], None);
        assert_eq!(Value::Object(kill), json!({"process": "p_1"}));
        let click = r#"{"actions":[{"type":"click","x":5,"y":6}]}"#;
        let input = action(contract::INPUT.step, &[("id", "box_a"), ("screen", "0")], Some(click));
        assert_eq!(input["screen"], json!(0));
        let signal = action(
            contract::SIGNAL.route.step,
            &[("process", "p_2")],
            Some(r#"{"signal":"TERM"}"#),
        );
        assert_eq!(Value::Object(signal), json!({"signal": "TERM", "process": "p_2"}));
        let tab = action(contract::ACTIVATE_TAB.route.step, &[("tab", "T1")], None);
        assert_eq!(Value::Object(tab), json!({"tab": "T1"}));
        let grant =
            action(server::REVOKE_VIEWER.route.step, &[("id", "box_a"), ("grant", "g")], None);
        assert_eq!(Value::Object(grant), json!({"grant": "g"}));
        let stdin = Request {
            body_bytes: Some(7),
            query: Some("eof=true"),
            ..req(contract::STDIN.step, &[("process", "p_3")], None)
        };
        assert_eq!(
            Value::Object(classify(&stdin).unwrap().params),
            json!({"process": "p_3", "bytes": 7})
        );
        let clip = action(contract::SET_CLIPBOARD.route.step, &[], Some(r#"{"text":"héllo"}"#));
        assert_eq!(Value::Object(clip), json!({"chars": 5}));
        let state = action(contract::LOAD_STATE.route.step, &[], Some(r#"{"cookies":[]}"#));
        assert_eq!(Value::Object(state), json!({"bytes": 14}));
    }

    #[test]
    fn secrets_contents_and_long_text_never_stay() {
        let body = r#"{"command":"echo hi","env":{"API_TOKEN":"s3cr3t-env"},"stdin":"s3cr3t-in"}"#;
        let a = classify(&req(contract::RUN.route.step, &[], Some(body))).unwrap();
        let text = serde_json::to_string(&a).unwrap();
        assert!(!text.contains("s3cr3t"), "{text}");
        assert_eq!(a.params["env_names"], json!(["API_TOKEN"]));
        assert_eq!(a.params["stdin_bytes"], json!(9));
        assert_eq!(a.params["command"], json!("echo hi"));

        let write = Request {
            query: Some("path=%2Ftmp%2Fa.txt&mode=600"),
            body_bytes: Some(42),
            ..req(contract::WRITE_FILE.step, &[("id", "box_a")], None)
        };
        let a = classify(&write).unwrap();
        assert_eq!(a.params["path"], json!("/tmp/a.txt"));
        assert_eq!(a.params["bytes"], json!(42));

        let state = r#"{"cookies":[{"name":"sid","value":"s3cr3t-cookie"}]}"#;
        let a = classify(&req(contract::LOAD_STATE.route.step, &[], Some(state))).unwrap();
        assert!(!serde_json::to_string(&a).unwrap().contains("s3cr3t"));

        let long =
            format!(r#"{{"url":"https://example.test/{}","password":"pw"}}"#, "x".repeat(500));
        let a = classify(&req(page_tool("navigate"), &[], Some(&long))).unwrap();
        assert_eq!(a.params["password"], json!("<redacted>"));
        assert!(a.params["url"].as_str().unwrap().chars().count() <= MAX_TEXT + 1);
    }

    #[test]
    fn typed_text_values_expressions_and_credentials_keep_only_their_shape() {
        let text = |a: &StepAction| serde_json::to_string(a).unwrap();
        let typing =
            r#"{"actions":[{"type":"type","text":"hunter2-TYPED"},{"type":"key","key":"enter"}]}"#;
        let a = classify(&req(contract::INPUT.step, &[("screen", "0")], Some(typing))).unwrap();
        assert!(!text(&a).contains("hunter2"), "{}", text(&a));
        assert_eq!(a.params["actions"][0], json!({"type": "type", "text_chars": 13}));
        assert_eq!(a.params["actions"][1]["key"], "enter");
        for (tool, body, field) in [
            ("fill", r#"{"selector":"input.pw","value":"hunter2-FILL"}"#, "value_chars"),
            ("type", r#"{"text":"hunter2-PAGE"}"#, "text_chars"),
            ("evaluate", r#"{"expression":"login('hunter2-EVAL')"}"#, "expression_chars"),
        ] {
            let a = classify(&req(page_tool(tool), &[], Some(body))).unwrap();
            assert!(!text(&a).contains("hunter2"), "{}", text(&a));
            assert!(a.params[field].as_u64().is_some_and(|n| n > 0), "{}", text(&a));
        }
        let nav = r#"{"url":"https://u:hunter2@a.test/cb?code=hunter2-Q#hunter2-F"}"#;
        let a = classify(&req(page_tool("navigate"), &[], Some(nav))).unwrap();
        assert_eq!(a.params["url"], "https://a.test/cb");
        let run = r#"{"command":"true mysql -uroot -pS3CRET-IN-COMMAND"}"#;
        let a = classify(&req(contract::RUN.route.step, &[], Some(run))).unwrap();
        assert_eq!(a.params["command"], "true mysql -uroot -p<redacted>");
        let spawn = r#"{"argv":["tool","--token","S3CRET-ARG","--x"]}"#;
        let a = classify(&req(contract::SPAWN.route.step, &[], Some(spawn))).unwrap();
        assert_eq!(a.params["argv"], json!(["tool", "--token", "<redacted>", "--x"]));
    }

    #[test]
    fn a_sensitive_action_keeps_no_text_nor_its_length() {
        let text = |a: &StepAction| serde_json::to_string(a).unwrap();
        let secret = "hunter2-SENSITIVE";
        let typing = format!(
            r#"{{"actions":[{{"type":"type","text":"{secret}"}},{{"type":"key","key":"enter"}}],"sensitive":true}}"#
        );
        let a = classify(&req(contract::INPUT.step, &[("screen", "0")], Some(&typing))).unwrap();
        assert_eq!(a.name, "actions");
        assert_eq!(a.params["actions"][0], json!({"type": "type"}), "{}", text(&a));
        assert_eq!(a.params["actions"][1]["key"], "enter");
        assert!(is_sensitive(&a));
        for (tool, body) in [
            ("fill", format!(r#"{{"selector":"input.pw","value":"{secret}","sensitive":true}}"#)),
            ("type", format!(r#"{{"text":"{secret}","sensitive":true}}"#)),
        ] {
            let a = classify(&req(page_tool(tool), &[], Some(&body))).unwrap();
            assert!(!text(&a).contains(secret) && !text(&a).contains("_chars"), "{}", text(&a));
            assert!(is_sensitive(&a));
        }
        let run = format!(
            r#"{{"argv":["mysql","--password","{secret}"],"env":{{"PW":"{secret}"}},"stdin":"{secret}","sensitive":true}}"#
        );
        let a = classify(&req(contract::RUN.route.step, &[], Some(&run))).unwrap();
        assert_eq!(a.params["argv"], json!([SENSITIVE_SHOWN]), "{}", text(&a));
        for gone in ["env_names", "stdin_bytes", "env", "stdin"] {
            assert!(!a.params.contains_key(gone), "{}", text(&a));
        }
        let line = format!(r#"{{"command":"echo {secret}","sensitive":true}}"#);
        let a = classify(&req(contract::SPAWN.route.step, &[], Some(&line))).unwrap();
        assert_eq!(a.params["command"], json!(SENSITIVE_SHOWN), "{}", text(&a));
        let clip = format!(r#"{{"text":"{secret}","sensitive":true}}"#);
        let a = classify(&req(contract::SET_CLIPBOARD.route.step, &[], Some(&clip))).unwrap();
        assert_eq!(a.params, one_value(SENSITIVE, json!(true)), "{}", text(&a));

        // Marked false, or not at all, an action keeps its shape as before.
        let plain = format!(r#"{{"text":"{secret}","sensitive":false}}"#);
        let a = classify(&req(page_tool("type"), &[], Some(&plain))).unwrap();
        assert_eq!(a.params["text_chars"], json!(secret.len()));
        assert!(!is_sensitive(&a));
    }
}
