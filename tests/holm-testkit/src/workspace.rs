//! What the workspace's crates link, from `cargo metadata`: for the tests
//! that keep layers apart (the CLI links no server code) and builds honest
//! (the embedded guest follows every crate it is built from).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The resolved dependency graph of the workspace.
#[derive(Debug)]
pub struct Workspace {
    /// The workspace root.
    pub root: PathBuf,
    /// Each package by id: its name and, for a crate of this workspace, its
    /// directory relative to the root.
    packages: BTreeMap<String, (String, Option<PathBuf>)>,
    /// Each package's dependencies that are linked into it or its build
    /// script (not dev-dependencies).
    deps: BTreeMap<String, Vec<String>>,
}

impl Workspace {
    /// Reads the graph with the cargo running the tests, for this host's
    /// platform (which the guest and the CLI are built for): only its
    /// packages need be on the machine, so a fresh cache that never fetched
    /// another platform's crates answers offline.
    pub fn load() -> Self {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--offline", "--filter-platform"])
            .arg(host_triple())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run cargo metadata");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
        let root = PathBuf::from(v["workspace_root"].as_str().expect("workspace_root"));
        let members: BTreeSet<&str> = v["workspace_members"]
            .as_array()
            .expect("workspace_members")
            .iter()
            .filter_map(|m| m.as_str())
            .collect();
        let mut packages = BTreeMap::new();
        for p in v["packages"].as_array().expect("packages") {
            let id = p["id"].as_str().expect("id").to_owned();
            let name = p["name"].as_str().expect("name").to_owned();
            let dir = members.contains(id.as_str()).then(|| {
                let manifest = Path::new(p["manifest_path"].as_str().expect("manifest_path"));
                let dir = manifest.parent().expect("a manifest has a directory");
                dir.strip_prefix(&root).expect("a member is inside the root").to_owned()
            });
            packages.insert(id, (name, dir));
        }
        let mut deps = BTreeMap::new();
        for node in v["resolve"]["nodes"].as_array().expect("resolve.nodes") {
            let linked = node["deps"]
                .as_array()
                .expect("deps")
                .iter()
                .filter(|d| {
                    d["dep_kinds"].as_array().is_some_and(|kinds| {
                        kinds.iter().any(|k| k["kind"].as_str() != Some("dev"))
                    })
                })
                .filter_map(|d| d["pkg"].as_str().map(str::to_owned))
                .collect();
            deps.insert(node["id"].as_str().expect("id").to_owned(), linked);
        }
        Self { root, packages, deps }
    }

    fn id(&self, name: &str) -> &str {
        self.packages
            .iter()
            .find(|(_, (n, dir))| n == name && dir.is_some())
            .map(|(id, _)| id.as_str())
            .unwrap_or_else(|| panic!("no workspace crate named {name}"))
    }

    /// The names of every package `name` links, itself included.
    pub fn links(&self, name: &str) -> BTreeSet<String> {
        self.closure(name).into_iter().map(|id| self.packages[&id].0.clone()).collect()
    }

    /// The directories of the workspace crates `name` links, itself
    /// included, relative to the root.
    pub fn local_dirs(&self, name: &str) -> BTreeSet<PathBuf> {
        self.closure(name).into_iter().filter_map(|id| self.packages[&id].1.clone()).collect()
    }

    fn closure(&self, name: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![self.id(name).to_owned()];
        while let Some(id) = todo.pop() {
            if seen.insert(id.clone()) {
                todo.extend(self.deps.get(&id).into_iter().flatten().cloned());
            }
        }
        seen
    }
}

/// The host's target triple, as the compiler running the build says it.
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc).arg("-vV").output().expect("run rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .trim()
        .to_owned()
}
