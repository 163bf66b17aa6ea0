//! The three patch types the API server takes for built-in kinds: JSON
//! merge patch (RFC 7386), strategic merge patch (lists merged by their
//! merge keys, `$patch` and the `$setElementOrder`/`$retainKeys`
//! directives) and JSON patch (RFC 6902: `add`, `remove`, `replace`,
//! `test`).

use serde_json::{Map, Value};

/// RFC 7386: objects merge, `null` removes, anything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("an object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// The merge key of the list at `path` (field names joined by `.`), as
/// the built-in types' `patchMergeKey` tags say; `Some("")` for a list of
/// scalars merged as a set. A Deployment's pod template
/// (`spec.template.`) merges as a Pod does.
fn merge_key(path: &str) -> Option<&'static str> {
    Some(match path.strip_prefix("spec.template.").unwrap_or(path) {
        "spec.containers" | "spec.initContainers" | "spec.ephemeralContainers" => "name",
        "spec.volumes" | "spec.imagePullSecrets" => "name",
        "spec.containers.env" | "spec.initContainers.env" => "name",
        "spec.containers.ports" | "spec.initContainers.ports" => "containerPort",
        "spec.containers.volumeMounts" | "spec.initContainers.volumeMounts" => "mountPath",
        "spec.hostAliases" => "ip",
        "spec.ports" => "port",
        "metadata.ownerReferences" => "uid",
        "status.conditions" => "type",
        "metadata.finalizers" => "",
        _ => return None,
    })
}

/// A strategic merge patch of a built-in kind's object, or the API
/// server's complaint.
pub fn strategic(target: &mut Value, patch: &Value) -> Result<(), String> {
    strategic_at(target, patch, "")
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() { field.to_owned() } else { format!("{path}.{field}") }
}

fn strategic_at(target: &mut Value, patch: &Value, path: &str) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut p = p.clone();
            p.remove("$patch");
            *target = Value::Object(p);
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Null;
            return Ok(());
        }
        Some(other) => return Err(format!("Unknown patch type: {other}")),
        None => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("an object");
    for (k, v) in p {
        if k.starts_with("$setElementOrder/") || k == "$retainKeys" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Value::Array(gone)) = (t.get_mut(field), v) {
                list.retain(|x| !gone.contains(x));
            }
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        let here = join(path, k);
        match (t.get_mut(k), v, merge_key(&here)) {
            (Some(Value::Array(old)), Value::Array(new), Some(key)) => {
                merge_list(old, new, key, &here)?;
            }
            (Some(old @ Value::Object(_)), Value::Object(_), _) => {
                strategic_at(old, v, &here)?;
                if old.is_null() {
                    t.remove(k);
                }
            }
            (_, v, _) => {
                let mut fresh = Value::Null;
                strategic_at(&mut fresh, v, &here)?;
                strip_directives(&mut fresh);
                t.insert(k.clone(), fresh);
            }
        }
    }
    Ok(())
}

/// Merges the list `new` into `old` by `key` (`""`: a set of scalars).
fn merge_list(old: &mut Vec<Value>, new: &[Value], key: &str, path: &str) -> Result<(), String> {
    if key.is_empty() {
        for v in new {
            if !old.contains(v) {
                old.push(v.clone());
            }
        }
        return Ok(());
    }
    for item in new {
        let Some(id) = item.get(key) else {
            if item.get("$patch").and_then(Value::as_str) == Some("replace") {
                old.clear();
                continue;
            }
            return Err(format!("map: {item} does not contain declared merge key: {key}"));
        };
        let at = old.iter().position(|o| o.get(key) == Some(id));
        match (at, item.get("$patch").and_then(Value::as_str)) {
            (Some(i), Some("delete")) => {
                old.remove(i);
            }
            (None, Some("delete")) => {}
            (Some(i), _) => strategic_at(&mut old[i], item, path)?,
            (None, _) => {
                let mut fresh = item.clone();
                strip_directives(&mut fresh);
                old.push(fresh);
            }
        }
    }
    Ok(())
}

/// Removes the `$…` directives of a patch's new parts.
fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            m.values_mut().for_each(strip_directives);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

/// RFC 6901: the parent of `pointer` and the last token.
fn split(pointer: &str) -> Result<(String, String), String> {
    let (parent, last) =
        pointer.rsplit_once('/').ok_or_else(|| format!("invalid path {pointer}"))?;
    Ok((parent.to_owned(), last.replace("~1", "/").replace("~0", "~")))
}

/// RFC 6902, or the API server's complaint.
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops.as_array().ok_or("the JSON patch must be a list of operations")?;
    for op in ops {
        let name = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).ok_or("missing path")?;
        let value = op.get("value").cloned();
        match name {
            "test" => {
                if target.pointer(path) != value.as_ref() {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            "remove" | "replace" | "add" => {
                let (parent, last) = split(path)?;
                let p = target
                    .pointer_mut(&parent)
                    .ok_or_else(|| format!("doc is missing path: \"{path}\": missing value"))?;
                match p {
                    Value::Object(m) => {
                        if name != "add" && !m.contains_key(&last) {
                            return Err(format!(
                                "{name} operation does not apply: doc is missing path: \"{path}\": missing value"
                            ));
                        }
                        if name == "remove" {
                            m.remove(&last);
                        } else {
                            m.insert(last, value.ok_or("missing value")?);
                        }
                    }
                    Value::Array(a) => {
                        let i = if last == "-" {
                            a.len()
                        } else {
                            last.parse().map_err(|_| format!("invalid index {last}"))?
                        };
                        match name {
                            "remove" if i < a.len() => drop(a.remove(i)),
                            "replace" if i < a.len() => a[i] = value.ok_or("missing value")?,
                            "add" if i <= a.len() => a.insert(i, value.ok_or("missing value")?),
                            _ => return Err(format!("index {i} out of bounds at {path}")),
                        }
                    }
                    _ => return Err(format!("doc is missing path: \"{path}\"")),
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_strategic_patch_merges_containers_by_name_and_env_by_name() {
        let mut pod = json!({ "spec": { "containers": [
            { "name": "a", "image": "x", "env": [{ "name": "A", "value": "1" }] },
            { "name": "b", "image": "y" }
        ], "tolerations": [{ "key": "k" }] } });
        let patch = json!({ "spec": { "containers": [
            { "name": "a", "image": "x2", "env": [{ "name": "B", "value": "2" }] },
            { "name": "b", "$patch": "delete" }
        ], "tolerations": [{ "key": "z" }], "$setElementOrder/containers": [{ "name": "a" }] } });
        strategic(&mut pod, &patch).unwrap();
        assert_eq!(
            pod,
            json!({ "spec": { "containers": [
                { "name": "a", "image": "x2", "env": [{ "name": "A", "value": "1" }, { "name": "B", "value": "2" }] }
            ], "tolerations": [{ "key": "z" }] } })
        );
    }

    #[test]
    fn a_merge_patch_removes_with_null_and_replaces_lists() {
        let mut o = json!({ "metadata": { "labels": { "a": "1", "b": "2" } }, "l": [1, 2] });
        merge(&mut o, &json!({ "metadata": { "labels": { "a": null, "c": "3" } }, "l": [3] }));
        assert_eq!(o, json!({ "metadata": { "labels": { "b": "2", "c": "3" } }, "l": [3] }));
    }

    #[test]
    fn a_json_patch_adds_replaces_removes_and_tests() {
        let mut o = json!({ "metadata": { "labels": { "a": "1" } }, "l": [1] });
        let ops = json!([
            { "op": "test", "path": "/metadata/labels/a", "value": "1" },
            { "op": "add", "path": "/metadata/labels/b~1c", "value": "2" },
            { "op": "remove", "path": "/metadata/labels/a" },
            { "op": "add", "path": "/l/-", "value": 2 },
            { "op": "replace", "path": "/l/0", "value": 0 }
        ]);
        json_patch(&mut o, &ops).unwrap();
        assert_eq!(o, json!({ "metadata": { "labels": { "b/c": "2" } }, "l": [0, 2] }));
        assert!(
            json_patch(&mut o, &json!([{ "op": "test", "path": "/l/0", "value": 9 }])).is_err()
        );
    }
}
