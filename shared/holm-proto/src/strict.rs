//! Strict request parsing: every unknown field is refused, and one answer names
//! all of them.
//!
//! serde's `deny_unknown_fields` stops at the first unknown field and cannot see
//! through internally tagged enums, so instead the JSON value is walked against
//! the type's JSON Schema (from `schemars`) to collect every unknown field, and
//! then deserialized with `serde_path_to_error` to name the first field whose
//! value has the wrong type.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::Issue;

/// Parses a JSON request body into `T`, refusing unknown fields.
///
/// An empty body is read as `{}`, so a request whose fields are all optional
/// may be sent without one.
pub fn from_slice<T: DeserializeOwned + JsonSchema + 'static>(
    bytes: &[u8],
) -> Result<T, Vec<Issue>> {
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}".as_slice() } else { bytes };
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        vec![Issue {
            path: "(body)".into(),
            problem: format!("not valid JSON: {}", strip_position(&e)),
        }]
    })?;
    from_value(value)
}

/// Converts a JSON value into `T`, refusing unknown fields.
pub fn from_value<T: DeserializeOwned + JsonSchema + 'static>(
    value: Value,
) -> Result<T, Vec<Issue>> {
    let schema = schema_of::<T>();
    let mut issues = unknown_fields(&schema, &value);
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) if issues.is_empty() => Ok(v),
        Ok(_) => Err(issues),
        Err(e) => {
            issues.push(issue_from_serde(&e.path().to_string(), &e.inner().to_string()));
            Err(issues)
        }
    }
}

/// Parses a URL query string into `T`, refusing unknown parameters.
pub fn from_query<T: DeserializeOwned + JsonSchema + 'static>(
    query: &str,
) -> Result<T, Vec<Issue>> {
    let schema = schema_of::<T>();
    let walker = Walker { root: &schema };
    let known = walker.properties(&schema);
    let mut issues = Vec::new();
    if let Some(known) = &known {
        for (key, _) in
            serde_urlencoded::from_str::<Vec<(String, String)>>(query).unwrap_or_default()
        {
            if !known.contains_key(key.as_str()) {
                issues.push(unknown_issue(&key, known.keys().copied()));
            }
        }
    }
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    match serde_path_to_error::deserialize::<_, T>(de) {
        Ok(v) if issues.is_empty() => Ok(v),
        Ok(_) => Err(issues),
        Err(e) => {
            issues.push(issue_from_serde(&e.path().to_string(), &e.inner().to_string()));
            Err(issues)
        }
    }
}

/// The JSON Schema of `T`, generated once per type.
pub fn schema_of<T: JsonSchema + 'static>() -> Arc<Value> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let id = TypeId::of::<T>();
    if let Some(s) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return Arc::clone(s);
    }
    let schema = Arc::new(schemars::schema_for!(T).to_value());
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Arc::clone(&schema));
    schema
}

/// Every field in `value` that `schema` does not know, with its full path.
pub fn unknown_fields(schema: &Value, value: &Value) -> Vec<Issue> {
    let walker = Walker { root: schema };
    let mut out = Vec::new();
    walker.check(schema, value, &mut String::new(), &mut out);
    out
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(" at line ") {
        Some((head, _)) => head.to_owned(),
        None => s,
    }
}

fn issue_from_serde(path: &str, message: &str) -> Issue {
    let path = if path == "." { "" } else { path };
    let message = match message.rsplit_once(" at line ") {
        Some((head, _)) => head,
        None => message,
    };
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.trim_end_matches('`');
        return Issue { path: join(path, field), problem: "is required".into() };
    }
    Issue {
        path: if path.is_empty() { "(body)".into() } else { path.to_owned() },
        problem: message.to_owned(),
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() { field.to_owned() } else { format!("{path}.{field}") }
}

fn unknown_issue<'a>(path: &str, known: impl Iterator<Item = &'a str>) -> Issue {
    let known: Vec<&str> = known.collect();
    let problem = if known.is_empty() {
        "unknown field".to_owned()
    } else {
        format!("unknown field; expected one of: {}", known.join(", "))
    };
    Issue { path: path.to_owned(), problem }
}

struct Walker<'a> {
    root: &'a Value,
}

impl<'a> Walker<'a> {
    /// Follows `$ref` chains to the schema they point at.
    fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..32 {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { break };
            let Some(pointer) = reference.strip_prefix('#') else { break };
            match self.root.pointer(pointer) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// The named properties of an object schema, or `None` when the schema
    /// leaves the object open (no properties, or `additionalProperties`).
    fn properties(&self, schema: &'a Value) -> Option<BTreeMap<&'a str, &'a Value>> {
        let schema = self.resolve(schema);
        let mut props = BTreeMap::new();
        let mut found = false;
        if let Some(map) = schema.get("properties").and_then(Value::as_object) {
            found = true;
            props.extend(map.iter().map(|(k, v)| (k.as_str(), v)));
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for part in all {
                if let Some(more) = self.properties(part) {
                    found = true;
                    props.extend(more);
                }
            }
        }
        if matches!(schema.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_)))
        {
            return None;
        }
        found.then_some(props)
    }

    fn branches(&self, schema: &'a Value) -> Option<&'a Vec<Value>> {
        schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array)
    }

    fn check(&self, schema: &'a Value, value: &Value, path: &mut String, out: &mut Vec<Issue>) {
        let schema = self.resolve(schema);
        if let Some(branches) = self.branches(schema) {
            // A tag that names no variant has no branch: serde names it then.
            if let Some(branch) = self.pick(branches, value) {
                self.check(branch, value, path, out);
            }
            if schema.get("properties").is_none() {
                return;
            }
        }
        match value {
            Value::Object(map) => self.check_object(schema, map, path, out),
            Value::Array(items) => {
                let item_schema = schema.get("items").filter(|s| s.is_object());
                let prefix = schema.get("prefixItems").and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    let sub = prefix.and_then(|p| p.get(i)).or(item_schema);
                    if let Some(sub) = sub {
                        let len = path.len();
                        path.push_str(&format!("[{i}]"));
                        self.check(sub, item, path, out);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn check_object(
        &self,
        schema: &'a Value,
        map: &Map<String, Value>,
        path: &mut String,
        out: &mut Vec<Issue>,
    ) {
        let additional = schema.get("additionalProperties").filter(|s| s.is_object());
        let props = self.properties(schema);
        for (key, sub_value) in map {
            let sub_schema =
                props.as_ref().and_then(|p| p.get(key.as_str()).copied()).or(additional);
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            match (sub_schema, &props) {
                (Some(sub), _) => self.check(sub, sub_value, path, out),
                (None, Some(known)) => out.push(unknown_issue(path, known.keys().copied())),
                (None, None) => {}
            }
            path.truncate(len);
        }
    }

    /// Chooses the branch of a `oneOf`/`anyOf` that `value` is meant to be.
    ///
    /// A branch whose constant property (an enum tag) matches wins. When the
    /// branches have tags and none matches, there is no branch. Otherwise the
    /// branch with the fewest unknown fields wins.
    fn pick(&self, branches: &'a [Value], value: &Value) -> Option<&'a Value> {
        if let Value::Object(map) = value {
            let mut tagged = false;
            for branch in branches {
                let Some(props) = self.properties(branch) else { continue };
                for (key, prop) in &props {
                    let Some(constant) = self.resolve(prop).get("const") else { continue };
                    tagged = true;
                    if map.get(*key) == Some(constant) {
                        return Some(branch);
                    }
                }
            }
            if tagged {
                return None;
            }
        }
        branches
            .iter()
            .filter(|b| type_admits(self.resolve(b), value))
            .map(|b| {
                let mut issues = Vec::new();
                self.check(b, value, &mut String::new(), &mut issues);
                (issues.len(), b)
            })
            .min_by_key(|(n, _)| *n)
            .map(|(_, b)| b)
    }
}

fn type_admits(schema: &Value, value: &Value) -> bool {
    let name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let admits = |t: &str| t == name || (t == "number" && name == "integer");
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => admits(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(admits),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Inner {
        a: u32,
        #[serde(default)]
        b: Option<String>,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Act {
        Move { x: i32, y: i32 },
        Wait { ms: u64 },
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Outer {
        inner: Option<Inner>,
        #[serde(default)]
        acts: Vec<Act>,
        #[serde(default)]
        env: BTreeMap<String, String>,
    }

    #[test]
    fn accepts_a_valid_body() {
        let v: Outer = from_slice(
            br#"{"inner":{"a":1},"acts":[{"type":"move","x":0,"y":3}],"env":{"K":"V"}}"#,
        )
        .unwrap();
        assert_eq!(v.acts, vec![Act::Move { x: 0, y: 3 }]);
        assert_eq!(v.env["K"], "V");
    }

    #[test]
    fn names_every_unknown_field_including_inside_tagged_enums() {
        let err = from_slice::<Outer>(
            br#"{"inner":{"a":1,"zz":2},"colour":1,"acts":[{"type":"wait","ms":1},{"type":"move","x":1,"y":2,"z":3}]}"#,
        )
        .unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, vec!["acts[1].z", "colour", "inner.zz"]);
        assert!(err[0].problem.contains("expected one of"), "{}", err[0].problem);
    }

    #[test]
    fn names_a_wrongly_typed_field() {
        let err = from_slice::<Outer>(br#"{"inner":{"a":"one"}}"#).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].path, "inner.a");
        assert!(err[0].problem.contains("invalid type"), "{}", err[0].problem);
    }

    #[test]
    fn names_a_missing_field_with_its_path() {
        let err = from_slice::<Outer>(br#"{"acts":[{"type":"move","x":1}]}"#).unwrap_err();
        assert_eq!(err[0].path, "acts[0].y");
        assert_eq!(err[0].problem, "is required");
    }

    #[test]
    fn an_unknown_tag_is_reported_once_by_serde() {
        let err = from_slice::<Outer>(br#"{"acts":[{"type":"jump","x":1}]}"#).unwrap_err();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].problem.contains("unknown variant"), "{}", err[0].problem);
    }

    #[test]
    fn empty_body_is_an_empty_object() {
        #[derive(Debug, Deserialize, JsonSchema)]
        struct AllOptional {
            #[serde(default)]
            _x: Option<u8>,
        }
        from_slice::<AllOptional>(b"").unwrap();
        from_slice::<AllOptional>(b"  \n").unwrap();
    }

    #[test]
    fn bad_json_is_one_issue() {
        let err = from_slice::<Outer>(b"{").unwrap_err();
        assert_eq!(err[0].path, "(body)");
    }

    #[test]
    fn query_refuses_unknown_parameters() {
        #[derive(Debug, Deserialize, JsonSchema)]
        struct Q {
            #[serde(default)]
            format: Option<String>,
            #[serde(default)]
            max_width: Option<u32>,
        }
        let q: Q = from_query("format=png&max_width=10").unwrap();
        assert_eq!(q.max_width, Some(10));
        assert_eq!(q.format.as_deref(), Some("png"));
        let err = from_query::<Q>("fromat=png&scale=2").unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, vec!["fromat", "scale"]);
        let err = from_query::<Q>("max_width=wide").unwrap_err();
        assert_eq!(err[0].path, "max_width");
    }
}
