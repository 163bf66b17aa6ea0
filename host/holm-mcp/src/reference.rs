//! The tool reference in docs/mcp.md, made from the tools' own definitions
//! ([`crate::tools::all`]: name, title, description and input schema), so
//! it cannot drift from what the server lists.

use serde_json::Value;

/// Every tool with what it does and its arguments, as Markdown.
pub fn markdown() -> String {
    let mut out = String::new();
    for tool in crate::tools::all() {
        out.push_str(&format!("#### `{}`\n\n", tool.name));
        if let Some(title) = &tool.title {
            out.push_str(&format!("*{title}.* "));
        }
        let description = tool.description.as_deref().unwrap_or_default();
        out.push_str(&format!("{}\n\n", one_line(description)));
        let schema = Value::Object((*tool.input_schema).clone());
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = schema["properties"].as_object().filter(|p| !p.is_empty()) else {
            out.push_str("No arguments.\n\n");
            continue;
        };
        out.push_str("| argument | type | what |\n|---|---|---|\n");
        for (name, prop) in props {
            let name = if required.contains(&name.as_str()) {
                format!("`{name}` (required)")
            } else {
                format!("`{name}`")
            };
            let what = prop["description"].as_str().map(one_line).unwrap_or_default();
            out.push_str(&format!(
                "| {name} | {} | {} |\n",
                type_of(prop, &schema).replace('|', "\\|"),
                what.replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    out
}

/// A property's type in a few words: `string`, `integer`, `array of
/// string`, one of its enum's values, or the name of a definition.
fn type_of(prop: &Value, schema: &Value) -> String {
    if let Some(c) = prop["const"].as_str() {
        return format!("`{c}`");
    }
    if let Some(tag) = prop["properties"]["type"]["const"].as_str() {
        return format!("`{tag}` action");
    }
    if let Some(values) = prop["enum"].as_array() {
        let names: Vec<String> =
            values.iter().map(|v| format!("`{}`", v.as_str().unwrap_or("?"))).collect();
        return names.join(", ");
    }
    if let Some(r) = prop["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        let def = &schema["$defs"][name];
        return if def.is_object() && def.get("$ref").is_none() {
            match type_of(def, schema).as_str() {
                "" | "object" => name.to_owned(),
                t => t.to_owned(),
            }
        } else {
            name.to_owned()
        };
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(choices) = prop[key].as_array() {
            let mut kinds: Vec<String> = Vec::new();
            for t in choices.iter().map(|c| type_of(c, schema)) {
                if !t.is_empty() && t != "null" && !kinds.contains(&t) {
                    kinds.push(t);
                }
            }
            return kinds.join(", ");
        }
    }
    let kind = match &prop["type"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    };
    if kind == "array" {
        let items = type_of(&prop["items"], schema);
        return if items.is_empty() { kind } else { format!("array of {items}") };
    }
    kind
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    /// docs/mcp.md's tool reference is the tools' own definitions
    /// (`HOLM_UPDATE_SNAPSHOTS=1` writes it).
    #[test]
    fn docs_mcp_md_reference_is_the_tools() {
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp.md");
        holm_proto::docgen::check_section(&doc, "tools", &super::markdown(), "holm-mcp").unwrap();
    }

    /// What `tools/list` answers, whole (names, descriptions, input
    /// schemas, annotations, `_meta`), checked in at
    /// `docs/api/mcp.tools.json`: a change to what a model sees is a
    /// reviewed change, as the REST APIs' are.
    #[test]
    fn tools_list_matches_its_snapshot() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api/mcp.tools.json");
        let tools = serde_json::to_value(crate::tools::all()).unwrap();
        let review = "check docs/mcp.md says the same";
        holm_proto::docgen::check_snapshot(&path, &tools, review).unwrap();
    }
}
