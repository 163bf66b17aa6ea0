//! Generated sections of the docs: the text between `<!-- NAME -->` and
//! `<!-- /NAME -->` in a Markdown file is made from the code (the CLI's
//! commands, the MCP tools, holmd's variables, the key names) and checked by
//! a freshness test in the crate that declares it. `HOLM_UPDATE_SNAPSHOTS=1`
//! writes it instead, as it does for the wire snapshots ([`check_snapshot`]:
//! the two OpenAPI documents and MCP's `tools/list`, under `docs/api/`).

use std::path::Path;

/// The variable that makes [`check_section`] write a stale section.
pub const UPDATE_VAR: &str = "HOLM_UPDATE_SNAPSHOTS";

/// Checks that the file `path` (a wire snapshot under `docs/api/`) holds
/// `value` as pretty JSON; with [`UPDATE_VAR`] set, writes it. The error
/// says how to update it and what to review.
pub fn check_snapshot(path: &Path, value: &serde_json::Value, review: &str) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n";
    if std::env::var_os(UPDATE_VAR).is_some() {
        let written = path.parent().map_or(Ok(()), std::fs::create_dir_all);
        written
            .and_then(|()| std::fs::write(path, &text))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let kept = std::fs::read_to_string(path).unwrap_or_default();
    if kept == text {
        return Ok(());
    }
    Err(format!(
        "{} is not what the code says; if the change is on purpose, run with {UPDATE_VAR}=1, \
         review the diff, and {review}",
        path.display()
    ))
}

/// Checks that the section `name` of the Markdown file `doc` is `body`;
/// with [`UPDATE_VAR`] set, writes it. The error says how to update it.
pub fn check_section(doc: &Path, name: &str, body: &str, krate: &str) -> Result<(), String> {
    let (open, close) = (format!("<!-- {name} -->\n"), format!("<!-- /{name} -->"));
    let text =
        std::fs::read_to_string(doc).map_err(|e| format!("cannot read {}: {e}", doc.display()))?;
    let start = text
        .find(&open)
        .map(|i| i + open.len())
        .ok_or_else(|| format!("{} has no {open:?} marker", doc.display()))?;
    let end = text[start..]
        .find(&close)
        .map(|i| start + i)
        .ok_or_else(|| format!("{} has no {close:?} marker after {open:?}", doc.display()))?;
    let want = format!("{}\n", body.trim_end());
    if text[start..end] == want {
        return Ok(());
    }
    if std::env::var_os(UPDATE_VAR).is_some() {
        let new = format!("{}{want}{}", &text[..start], &text[end..]);
        return std::fs::write(doc, new)
            .map_err(|e| format!("cannot write {}: {e}", doc.display()));
    }
    Err(format!(
        "{}'s {name} section is not what the code says; run: {UPDATE_VAR}=1 cargo test -p {krate}",
        doc.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_checked_between_its_markers_only() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("d.md");
        std::fs::write(&doc, "# t\n<!-- x -->\nold\n<!-- /x -->\nafter\n").unwrap();
        assert!(check_section(&doc, "x", "old", "k").is_ok());
        let e = check_section(&doc, "x", "new", "k").unwrap_err();
        assert!(e.contains("HOLM_UPDATE_SNAPSHOTS=1 cargo test -p k"), "{e}");
        assert!(check_section(&doc, "y", "old", "k").unwrap_err().contains("no"));
    }
}
