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
    /// Its method.
    pub method: &'a str,
    /// Its path after `/v1/boxes/{id}`, starting with `/` (empty for the
    /// box itself).
    pub rest: &'a str,
    /// Its query, undecoded.
    pub query: Option<&'a str>,
    /// Its body when it was small enough to read (JSON routes).
    pub body: Option<&'a [u8]>,
    /// How many bytes its body had (file contents, standard input).
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

/// The action a request is, its body taken as it came.
fn classify_plain(r: &Request<'_>) -> Option<StepAction> {
    let segs: Vec<&str> = r.rest.trim_start_matches('/').split('/').collect();
    let body = || body_params(r.body);
    let (kind, name, params) = match (r.method, segs.as_slice()) {
        ("POST", ["screens", screen, "input"]) => {
            let mut p = body();
            let name = input_name(&p);
            p.insert("screen".into(), screen_number(screen));
            (StepKind::Input, name, p)
        }
        ("GET", ["screens", screen, "screenshot"]) => {
            let mut p = query_params(r.query);
            p.insert("screen".into(), screen_number(screen));
            (StepKind::Screenshot, "screen".to_owned(), p)
        }
        ("GET", ["browser", "screenshot"]) => {
            (StepKind::Screenshot, "page".to_owned(), query_params(r.query))
        }
        ("POST", ["commands", what @ ("run" | "stream")]) => {
            (StepKind::Command, (*what).to_owned(), command_params(r.body))
        }
        ("POST", ["processes"]) => (StepKind::Command, "spawn".to_owned(), command_params(r.body)),
        ("DELETE", ["processes", p]) => (StepKind::Command, "kill".to_owned(), one("process", p)),
        ("POST", ["processes", p, "signal"]) => {
            let mut params = body();
            params.insert("process".into(), json!(p));
            (StepKind::Command, "signal".to_owned(), params)
        }
        ("POST", ["processes", p, "stdin"]) => {
            let mut params = one("process", p);
            params.insert("bytes".into(), json!(r.body_bytes.unwrap_or(0)));
            (StepKind::Command, "stdin".to_owned(), params)
        }
        ("GET", ["terminal"]) => (StepKind::Command, "terminal".to_owned(), Map::new()),
        ("PUT", ["files", "content"]) => {
            let mut p = query_params(r.query);
            p.insert("bytes".into(), json!(r.body_bytes.unwrap_or(0)));
            (StepKind::File, "write".to_owned(), p)
        }
        ("POST", ["files", what @ ("mkdir" | "remove" | "rename")]) => {
            (StepKind::File, (*what).to_owned(), body())
        }
        ("POST", ["browser", "state"]) => {
            let mut p = Map::new();
            p.insert("bytes".into(), json!(r.body.map_or(0, <[u8]>::len)));
            (StepKind::Page, "load_state".to_owned(), p)
        }
        ("POST", ["browser", "tabs"]) => (StepKind::Page, "open_tab".to_owned(), body()),
        ("DELETE", ["browser", "tabs", tab]) => {
            (StepKind::Page, "close_tab".to_owned(), one("tab", tab))
        }
        ("POST", ["browser", "tabs", tab, "activate"]) => {
            (StepKind::Page, "activate_tab".to_owned(), one("tab", tab))
        }
        ("POST", ["browser", tool]) => (StepKind::Page, (*tool).to_owned(), body()),
        ("POST" | "PATCH", ["windows", window]) => {
            let mut p = body();
            p.insert("window".into(), json!(window));
            (StepKind::Window, "window".to_owned(), p)
        }
        ("PUT", ["clipboard"]) => {
            let chars = r
                .body
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .and_then(|v| v.get("text").and_then(Value::as_str).map(|t| t.chars().count()))
                .unwrap_or(0);
            (StepKind::Window, "clipboard".to_owned(), one_value("chars", json!(chars)))
        }
        ("POST", ["viewers"]) => (StepKind::Control, "viewer_created".to_owned(), body()),
        ("DELETE", ["viewers", grant]) => {
            (StepKind::Control, "viewer_revoked".to_owned(), one("grant", grant))
        }
        ("POST", ["handoff"]) => (StepKind::Control, "ask_for_help".to_owned(), body()),
        ("DELETE", [""]) => (StepKind::Lifecycle, "remove".to_owned(), Map::new()),
        ("POST", [what @ ("stop" | "start" | "pause" | "resume" | "fork" | "extend")]) => {
            (StepKind::Lifecycle, (*what).to_owned(), body())
        }
        _ => return None,
    };
    Some(StepAction { kind, name, params })
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

fn one(key: &str, value: &str) -> Map<String, Value> {
    one_value(key, json!(value))
}

fn one_value(key: &str, value: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    m
}

fn screen_number(s: &str) -> Value {
    s.parse::<u64>().map_or_else(|_| json!(s), |n| json!(n))
}

/// An input's name: its one action's type (`click`, `type`, ...), or
/// `actions` for several.
fn input_name(p: &Map<String, Value>) -> String {
    match p.get("actions").and_then(Value::as_array).map(Vec::as_slice) {
        Some([one]) => one.get("type").and_then(Value::as_str).unwrap_or("input").to_owned(),
        Some(_) => "actions".to_owned(),
        None => "input".to_owned(),
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
    use super::*;

    fn req<'a>(method: &'a str, rest: &'a str, body: Option<&'a str>) -> Request<'a> {
        Request { method, rest, query: None, body: body.map(str::as_bytes), body_bytes: None }
    }

    #[test]
    fn reads_are_not_steps_and_actions_have_their_kind() {
        for (m, rest) in [
            ("GET", "/files/list"),
            ("GET", "/files/content"),
            ("GET", "/processes/p_1/output"),
            ("GET", "/browser/tabs"),
            ("GET", "/info"),
            ("GET", "/screens/0"),
            ("GET", "/viewers"),
            ("POST", "/bridge"),
            ("POST", "/agent"),
        ] {
            assert_eq!(classify(&req(m, rest, None)), None, "{m} {rest}");
        }
        let kind = |m, rest, body| classify(&req(m, rest, body)).map(|a| (a.kind, a.name));
        let k = |kind: StepKind, name: &str| Some((kind, name.to_owned()));
        let click = r#"{"actions":[{"type":"click","x":5,"y":6}]}"#;
        assert_eq!(kind("POST", "/screens/0/input", Some(click)), k(StepKind::Input, "click"));
        assert_eq!(kind("GET", "/screens/1/screenshot", None), k(StepKind::Screenshot, "screen"));
        assert_eq!(kind("GET", "/browser/screenshot", None), k(StepKind::Screenshot, "page"));
        assert_eq!(kind("POST", "/commands/run", Some("{}")), k(StepKind::Command, "run"));
        assert_eq!(kind("PUT", "/files/content", None), k(StepKind::File, "write"));
        assert_eq!(kind("POST", "/files/rename", Some("{}")), k(StepKind::File, "rename"));
        assert_eq!(kind("POST", "/browser/navigate", Some("{}")), k(StepKind::Page, "navigate"));
        assert_eq!(kind("POST", "/viewers", Some("{}")), k(StepKind::Control, "viewer_created"));
        assert_eq!(kind("POST", "/stop", None), k(StepKind::Lifecycle, "stop"));
        assert_eq!(kind("DELETE", "", None), k(StepKind::Lifecycle, "remove"));
    }

    #[test]
    fn secrets_contents_and_long_text_never_stay() {
        let body = r#"{"command":"echo hi","env":{"API_TOKEN":"s3cr3t-env"},"stdin":"s3cr3t-in"}"#;
        let a = classify(&req("POST", "/commands/run", Some(body))).unwrap();
        let text = serde_json::to_string(&a).unwrap();
        assert!(!text.contains("s3cr3t"), "{text}");
        assert_eq!(a.params["env_names"], json!(["API_TOKEN"]));
        assert_eq!(a.params["stdin_bytes"], json!(9));
        assert_eq!(a.params["command"], json!("echo hi"));

        let write = Request {
            method: "PUT",
            rest: "/files/content",
            query: Some("path=%2Ftmp%2Fa.txt&mode=600"),
            body: None,
            body_bytes: Some(42),
        };
        let a = classify(&write).unwrap();
        assert_eq!(a.params["path"], json!("/tmp/a.txt"));
        assert_eq!(a.params["bytes"], json!(42));

        let state = r#"{"cookies":[{"name":"sid","value":"s3cr3t-cookie"}]}"#;
        let a = classify(&req("POST", "/browser/state", Some(state))).unwrap();
        assert!(!serde_json::to_string(&a).unwrap().contains("s3cr3t"));

        let long =
            format!(r#"{{"url":"https://example.test/{}","password":"pw"}}"#, "x".repeat(500));
        let a = classify(&req("POST", "/browser/navigate", Some(&long))).unwrap();
        assert_eq!(a.params["password"], json!("<redacted>"));
        assert!(a.params["url"].as_str().unwrap().chars().count() <= MAX_TEXT + 1);
    }

    #[test]
    fn typed_text_values_expressions_and_credentials_keep_only_their_shape() {
        let text = |a: &StepAction| serde_json::to_string(a).unwrap();
        let typing =
            r#"{"actions":[{"type":"type","text":"hunter2-TYPED"},{"type":"key","key":"enter"}]}"#;
        let a = classify(&req("POST", "/screens/0/input", Some(typing))).unwrap();
        assert!(!text(&a).contains("hunter2"), "{}", text(&a));
        assert_eq!(a.params["actions"][0], json!({"type": "type", "text_chars": 13}));
        assert_eq!(a.params["actions"][1]["key"], "enter");
        for (tool, body, field) in [
            ("fill", r#"{"selector":"input.pw","value":"hunter2-FILL"}"#, "value_chars"),
            ("type", r#"{"text":"hunter2-PAGE"}"#, "text_chars"),
            ("evaluate", r#"{"expression":"login('hunter2-EVAL')"}"#, "expression_chars"),
        ] {
            let a = classify(&req("POST", &format!("/browser/{tool}"), Some(body))).unwrap();
            assert!(!text(&a).contains("hunter2"), "{}", text(&a));
            assert!(a.params[field].as_u64().is_some_and(|n| n > 0), "{}", text(&a));
        }
        let nav = r#"{"url":"https://u:hunter2@a.test/cb?code=hunter2-Q#hunter2-F"}"#;
        let a = classify(&req("POST", "/browser/navigate", Some(nav))).unwrap();
        assert_eq!(a.params["url"], "https://a.test/cb");
        let run = r#"{"command":"true mysql -uroot -pS3CRET-IN-COMMAND"}"#;
        let a = classify(&req("POST", "/commands/run", Some(run))).unwrap();
        assert_eq!(a.params["command"], "true mysql -uroot -p<redacted>");
        let spawn = r#"{"argv":["tool","--token","S3CRET-ARG","--x"]}"#;
        let a = classify(&req("POST", "/processes", Some(spawn))).unwrap();
        assert_eq!(a.params["argv"], json!(["tool", "--token", "<redacted>", "--x"]));
    }

    #[test]
    fn a_sensitive_action_keeps_no_text_nor_its_length() {
        let text = |a: &StepAction| serde_json::to_string(a).unwrap();
        let secret = "hunter2-SENSITIVE";
        let typing = format!(
            r#"{{"actions":[{{"type":"type","text":"{secret}"}},{{"type":"key","key":"enter"}}],"sensitive":true}}"#
        );
        let a = classify(&req("POST", "/screens/0/input", Some(&typing))).unwrap();
        assert_eq!(a.name, "actions");
        assert_eq!(a.params["actions"][0], json!({"type": "type"}), "{}", text(&a));
        assert_eq!(a.params["actions"][1]["key"], "enter");
        assert!(is_sensitive(&a));
        for (tool, body) in [
            ("fill", format!(r#"{{"selector":"input.pw","value":"{secret}","sensitive":true}}"#)),
            ("type", format!(r#"{{"text":"{secret}","sensitive":true}}"#)),
        ] {
            let a = classify(&req("POST", &format!("/browser/{tool}"), Some(&body))).unwrap();
            assert!(!text(&a).contains(secret) && !text(&a).contains("_chars"), "{}", text(&a));
            assert!(is_sensitive(&a));
        }
        let run = format!(
            r#"{{"argv":["mysql","--password","{secret}"],"env":{{"PW":"{secret}"}},"stdin":"{secret}","sensitive":true}}"#
        );
        let a = classify(&req("POST", "/commands/run", Some(&run))).unwrap();
        assert_eq!(a.params["argv"], json!([SENSITIVE_SHOWN]), "{}", text(&a));
        for gone in ["env_names", "stdin_bytes", "env", "stdin"] {
            assert!(!a.params.contains_key(gone), "{}", text(&a));
        }
        let line = format!(r#"{{"command":"echo {secret}","sensitive":true}}"#);
        let a = classify(&req("POST", "/processes", Some(&line))).unwrap();
        assert_eq!(a.params["command"], json!(SENSITIVE_SHOWN), "{}", text(&a));
        let clip = format!(r#"{{"text":"{secret}","sensitive":true}}"#);
        let a = classify(&req("PUT", "/clipboard", Some(&clip))).unwrap();
        assert_eq!(a.params, one_value(SENSITIVE, json!(true)), "{}", text(&a));

        // Marked false, or not at all, an action keeps its shape as before.
        let plain = format!(r#"{{"text":"{secret}","sensitive":false}}"#);
        let a = classify(&req("POST", "/browser/type", Some(&plain))).unwrap();
        assert_eq!(a.params["text_chars"], json!(secret.len()));
        assert!(!is_sensitive(&a));
    }
}
