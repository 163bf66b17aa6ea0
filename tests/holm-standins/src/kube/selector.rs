//! Label selectors (`a=b`, `a==b`, `a!=b`, `a in (b,c)`, `a notin (b)`,
//! `a`, `!a`) and field selectors (`metadata.name=x`, `!=`), as the API
//! server parses and matches them.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
}

/// A parsed label selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Vec<(String, Op)>);

/// Splits at the commas outside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0u32);
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

/// Whether `s` is a label key (an optional DNS prefix and `/`, then a
/// name of at most 63 letters, digits, `-`, `_`, `.`, alphanumeric at both
/// ends) or, with `value`, a label value (the same, or empty).
fn valid(s: &str, value: bool) -> bool {
    let name = if value { s } else { s.rsplit_once('/').map_or(s, |(_, n)| n) };
    if value && name.is_empty() {
        return true;
    }
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    name.len() <= 63
        && ends(name.chars().next())
        && ends(name.chars().last())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Labels {
    /// Parses a selector, or answers the API server's complaint.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in split_top(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let bad =
                || format!("unable to parse requirement: found '{part}', expected: identifier");
            let (key, op) = if let Some(k) = part.strip_prefix('!') {
                (k.trim().to_owned(), Op::DoesNotExist)
            } else if let Some((k, v)) = part.split_once("!=") {
                (k.trim().to_owned(), Op::NotIn(vec![v.trim().to_owned()]))
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (k.trim().to_owned(), Op::In(vec![v.trim().to_owned()]))
            } else if let Some((k, rest)) = set_op(part, " notin ") {
                (k, Op::NotIn(rest))
            } else if let Some((k, rest)) = set_op(part, " in ") {
                (k, Op::In(rest))
            } else {
                (part.to_owned(), Op::Exists)
            };
            if !valid(&key, false) {
                return Err(bad());
            }
            if let Op::In(vs) | Op::NotIn(vs) = &op
                && let Some(v) = vs.iter().find(|v| !valid(v, true))
            {
                return Err(format!(
                    "values[0][{key}]: Invalid value: \"{v}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
                ));
            }
            out.push((key, op));
        }
        Ok(Self(out))
    }

    /// Whether an object's metadata matches.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|(k, op)| match op {
            Op::In(vs) => get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Op::NotIn(vs) => get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Op::Exists => get(k).is_some(),
            Op::DoesNotExist => get(k).is_none(),
        })
    }
}

/// `key in (a, b)` with `sep` `" in "` or `" notin "`.
fn set_op(part: &str, sep: &str) -> Option<(String, Vec<String>)> {
    let (k, rest) = part.split_once(sep)?;
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((k.trim().to_owned(), inner.split(',').map(|v| v.trim().to_owned()).collect()))
}

/// A parsed field selector: every `field=value` (or `!=`) must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(Vec<(String, bool, String)>);

/// The fields a field selector may name, beyond `metadata.name` and
/// `metadata.namespace`, per resource.
fn field_path(resource: &str, field: &str) -> Option<&'static str> {
    Some(match (resource, field) {
        (_, "metadata.name") => "/metadata/name",
        (_, "metadata.namespace") => "/metadata/namespace",
        ("pods", "status.phase") => "/status/phase",
        ("pods", "status.podIP") => "/status/podIP",
        ("pods", "spec.nodeName") => "/spec/nodeName",
        ("pods", "spec.restartPolicy") => "/spec/restartPolicy",
        ("secrets", "type") => "/type",
        _ => return None,
    })
}

impl Fields {
    /// Parses a selector for `resource`, or answers the API server's
    /// complaint.
    pub fn parse(s: &str, resource: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: '{s}'; can't understand '{part}'"));
            };
            let field = field.trim();
            if field_path(resource, field).is_none() {
                return Err(format!("field label not supported: {field}"));
            }
            out.push((field.to_owned(), eq, value.trim().to_owned()));
        }
        Ok(Self(out))
    }

    /// Whether an object of `resource` matches.
    pub fn matches(&self, resource: &str, object: &Value) -> bool {
        self.0.iter().all(|(f, eq, v)| {
            let path = field_path(resource, f).unwrap_or("/");
            let got = object.pointer(path).and_then(Value::as_str).unwrap_or("");
            (got == v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_match_as_the_api_server_does() {
        let o = json!({ "metadata": { "labels": { "app": "box", "tier": "desk" } } });
        let m = |s: &str| Labels::parse(s).unwrap().matches(&o);
        assert!(m("app=box"));
        assert!(m("app==box,tier"));
        assert!(!m("app!=box"));
        assert!(m("app in (box, other),tier notin (web)"));
        assert!(!m("app notin (box)"));
        assert!(m("!gone"));
        assert!(!m("!app"));
        assert!(m(""));
        assert!(Labels::parse("app in (a b)").is_err());
        assert!(Labels::parse("-bad=x").is_err());
    }

    #[test]
    fn field_selectors_name_only_supported_fields() {
        let o = json!({ "metadata": { "name": "a", "namespace": "d" }, "status": { "phase": "Running" } });
        assert!(Fields::parse("metadata.name=a", "pods").unwrap().matches("pods", &o));
        assert!(Fields::parse("status.phase!=Pending", "pods").unwrap().matches("pods", &o));
        assert_eq!(
            Fields::parse("spec.image=x", "pods").unwrap_err(),
            "field label not supported: spec.image"
        );
    }
}
