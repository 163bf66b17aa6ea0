//! The house's own invariants, checked by the test command (issue 27's
//! "tidy" test): every Rust source file opens with a module doc; every
//! crate of the workspace has its section in ARCHITECTURE.md's code map and
//! every module a section names exists; every relative link in the README,
//! ARCHITECTURE.md and `docs/` resolves; and no source file is over 800
//! lines unless [`LONG_FILES`] lists it with its reason; and the guest's
//! modules import each other in no circle.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest a source file may be before it is split by concern.
const MAX_LINES: usize = 800;

/// Files over [`MAX_LINES`], each with why it is kept whole. A file that
/// shrinks under the limit must leave this list (the test says so).
const LONG_FILES: &[(&str, &str)] = &[
    (
        "host/holmd/tests/lifetimes.rs",
        "one fake runtime and the tests of the state machine that share it",
    ),
    ("tests/holm-testkit/src/mcp.rs", "the MCP test client and its one table of tool calls"),
    (
        "tests/holm-standins/src/runtime_cloud/api.rs",
        "the Runtime Cloud stand-in's routes, one per documented request",
    ),
    (
        "guest-agent/holm-guest/src/exec/mod.rs",
        "the command runner's one state machine; split planned with the guest's domain modules (issue 27.4)",
    ),
];

/// Rust files that cannot open with an inner doc comment.
const NO_MODULE_DOC: &[(&str, &str)] = &[(
    "host/holm/guest_inputs.rs",
    "pulled into build.rs and a test with include!, where `//!` is not allowed",
)];

/// Generated code, not held to the house's rules.
const GENERATED: &[&str] = &["shared/holm-modal-proto/src/generated/"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The files git tracks (so build output and untracked scratch are never
/// judged), relative to the root.
fn tracked() -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("run git ls-files");
    assert!(out.status.success(), "git ls-files failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|p| !p.is_empty() && root().join(p).exists())
        .map(str::to_owned)
        .collect()
}

fn rust_sources() -> Vec<String> {
    tracked()
        .into_iter()
        .filter(|p| p.ends_with(".rs") && !GENERATED.iter().any(|g| p.starts_with(g)))
        .collect()
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut missing = Vec::new();
    for path in rust_sources() {
        if NO_MODULE_DOC.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        if !first.trim_start().starts_with("//!") {
            missing.push(path);
        }
    }
    assert!(missing.is_empty(), "these files open without a `//!` module doc: {missing:#?}");
}

#[test]
fn no_file_is_over_800_lines_unless_listed_with_its_reason() {
    let mut over = BTreeSet::new();
    for path in rust_sources() {
        let lines = std::fs::read_to_string(root().join(&path)).unwrap().lines().count();
        if lines > MAX_LINES {
            over.insert(path);
        }
    }
    let listed: BTreeSet<String> = LONG_FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
    let unlisted: Vec<&String> = over.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "over {MAX_LINES} lines: split these by concern, or list them in LONG_FILES with why: {unlisted:#?}"
    );
    let stale: Vec<&String> = listed.difference(&over).collect();
    assert!(
        stale.is_empty(),
        "no longer over {MAX_LINES} lines: take them out of LONG_FILES: {stale:#?}"
    );
}

/// The workspace's members, as Cargo.toml lists them.
fn members() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let start = text.find("members = [").expect("a members list");
    let end = start + text[start..].find(']').unwrap();
    text[start..end]
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.trim().trim_end_matches(',').strip_prefix('"')?.strip_suffix('"').map(str::to_owned)
        })
        .collect()
}

/// The code map's sections: the path each `### \`path\`` heading names,
/// with the section's text.
fn code_map() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("## Code map").expect("ARCHITECTURE.md has a code map");
    let end = text[start + 3..].find("\n## ").map_or(text.len(), |e| start + 3 + e);
    let mut sections = Vec::new();
    for part in text[start..end].split("\n### `").skip(1) {
        let (name, body) = part.split_once('`').unwrap();
        sections.push((name.trim_end_matches('/').to_owned(), body.to_owned()));
    }
    sections
}

/// Whether `module` is a module of the crate at `dir` (at any depth of its
/// `src/`, as `a::b` or a file or directory name).
fn module_exists(dir: &Path, module: &str) -> bool {
    let src = dir.join("src");
    let rel = module.replace("::", "/");
    let direct = [src.join(format!("{rel}.rs")), src.join(&rel), dir.join(&rel)];
    if direct.iter().any(|p| p.exists()) {
        return true;
    }
    // A module nested one level down (`x11/damage.rs` named `damage`).
    let Ok(entries) = std::fs::read_dir(&src) else { return false };
    entries.flatten().any(|e| {
        let p = e.path();
        p.is_dir() && (p.join(format!("{rel}.rs")).exists() || p.join(&rel).is_dir())
    })
}

#[test]
fn the_code_map_names_every_crate_and_only_modules_that_exist() {
    let sections = code_map();
    let named: BTreeSet<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
    let unnamed: Vec<String> =
        members().into_iter().filter(|m| !named.contains(m.as_str())).collect();
    assert!(
        unnamed.is_empty(),
        "crates with no section in ARCHITECTURE.md's code map: {unnamed:?}"
    );
    let mut missing = Vec::new();
    for (name, body) in &sections {
        let dir = root().join(name);
        assert!(dir.exists(), "the code map names `{name}`, which does not exist");
        if !dir.join("src").is_dir() {
            continue;
        }
        // A module list: a bullet whose leading backticked names, before
        // the dash, are modules of this crate.
        for line in body.lines().filter(|l| l.starts_with("- `")) {
            let Some((names, _)) = line.split_once(" — ") else { continue };
            for module in names.split('`').skip(1).step_by(2) {
                if !module_exists(&dir, module) {
                    missing.push(format!("{name}: `{module}`"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "the code map names modules that do not exist: {missing:#?}");
}

/// The relative link targets of a Markdown text: `](target)`, without
/// an anchor, leaving out web addresses and anchors alone.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split_whitespace().next().unwrap_or_default();
        let path = target.split('#').next().unwrap_or_default();
        if !path.is_empty() && !path.contains("://") && !path.starts_with("mailto:") {
            out.push(path.to_owned());
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let docs: Vec<String> = tracked()
        .into_iter()
        .filter(|p| p.ends_with(".md"))
        .filter(|p| {
            p == "README.md"
                || p == "ARCHITECTURE.md"
                || p.starts_with("docs/")
                || p.starts_with("sdks/")
        })
        .collect();
    assert!(docs.len() > 10, "found the docs: {docs:?}");
    let mut broken = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(root().join(&doc)).unwrap();
        let base = root().join(&doc).parent().unwrap().to_owned();
        for link in links(&text) {
            if !base.join(&link).exists() {
                broken.push(format!("{doc}: {link}"));
            }
        }
    }
    assert!(broken.is_empty(), "links that lead nowhere: {broken:#?}");
}

/// The top-level modules of `src` that each file of `src` (tests left out)
/// names through `crate::`, by the module it belongs to.
fn crate_imports(src: &Path) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    files(src, &mut paths);
    let top = |p: &Path| {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        first.trim_end_matches(".rs").to_owned()
    };
    let modules: BTreeSet<String> =
        paths.iter().map(|p| top(p)).filter(|m| m != "lib" && m != "main").collect();
    let mut graph: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for path in &paths {
        let from = top(path);
        if !modules.contains(&from) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap_or_default().split(',').collect(),
                    None => vec![rest],
                };
                for name in names {
                    let name: String = name
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if name != from && modules.contains(&name) {
                        graph.entry(from.clone()).or_default().insert(name);
                    }
                }
            }
        }
    }
    graph
}

/// A path from `from` back to `to` through `graph`, if there is one.
fn path_back(
    graph: &std::collections::BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
    seen: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if from == to {
        return Some(vec![to.to_owned()]);
    }
    if !seen.insert(from.to_owned()) {
        return None;
    }
    for next in graph.get(from).into_iter().flatten() {
        if let Some(mut path) = path_back(graph, next, to, seen) {
            path.insert(0, from.to_owned());
            return Some(path);
        }
    }
    None
}

/// Issue 27.4: the guest's modules import each other in no circle (a
/// module may use another only if that one, directly or not, does not use
/// it back), so each can be read, tested and changed from the bottom up.
#[test]
fn the_guests_modules_import_each_other_in_no_circle() {
    let graph = crate_imports(&root().join("guest-agent/holm-guest/src"));
    assert!(graph.len() > 10, "the guest's imports were not found: {graph:?}");
    let mut circles = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            if let Some(back) = path_back(&graph, to, from, &mut BTreeSet::new()) {
                circles.push(format!("{from} -> {}", back.join(" -> ")));
            }
        }
    }
    assert!(circles.is_empty(), "the guest's modules import in circles:\n{}", circles.join("\n"));
}
