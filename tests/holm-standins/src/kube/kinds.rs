//! The kinds the stand-in serves, and the discovery documents that name
//! them (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}/{version}`
//! and the OpenAPI v3 index kubectl reads to learn that the server
//! validates fields itself).

use serde_json::{Value, json};

/// One kind of object, as discovery names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The version.
    pub version: &'static str,
    /// The resource, plural (the path's segment).
    pub resource: &'static str,
    /// The singular name.
    pub singular: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// kubectl's short names.
    pub short: &'static [&'static str],
    /// Whether it has a `status` subresource.
    pub status: bool,
}

impl Kind {
    /// `apiVersion` of its objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The path of its group version without the leading `/` (`api/v1`,
    /// `apis/networking.k8s.io/v1`), which keys the OpenAPI v3 index.
    pub fn openapi_key(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }

    /// The resource as errors name it (`pods`, `networkpolicies.networking.k8s.io`).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_owned()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// Whether this is one of the kinds compiled into the API server (as
    /// against a custom resource): lists of those carry no `kind` and
    /// `apiVersion` on their items.
    pub fn built_in(&self) -> bool {
        self.group.is_empty()
            || self.group == "apps"
            || self.group.ends_with(".k8s.io") && !self.group.contains("x-k8s")
    }
}

const VERBS: &[&str] =
    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// Every kind the stand-in serves.
pub const KINDS: &[Kind] = &[
    Kind {
        group: "",
        version: "v1",
        resource: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        short: &["ns"],
        status: true,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "pods",
        singular: "pod",
        kind: "Pod",
        namespaced: true,
        short: &["po"],
        status: true,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "services",
        singular: "service",
        kind: "Service",
        namespaced: true,
        short: &["svc"],
        status: true,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "secrets",
        singular: "secret",
        kind: "Secret",
        namespaced: true,
        short: &[],
        status: false,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        namespaced: true,
        short: &["cm"],
        status: false,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        kind: "PersistentVolumeClaim",
        namespaced: true,
        short: &["pvc"],
        status: true,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "serviceaccounts",
        singular: "serviceaccount",
        kind: "ServiceAccount",
        namespaced: true,
        short: &["sa"],
        status: false,
    },
    Kind {
        group: "apps",
        version: "v1",
        resource: "deployments",
        singular: "deployment",
        kind: "Deployment",
        namespaced: true,
        short: &["deploy"],
        status: true,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "roles",
        singular: "role",
        kind: "Role",
        namespaced: true,
        short: &[],
        status: false,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "rolebindings",
        singular: "rolebinding",
        kind: "RoleBinding",
        namespaced: true,
        short: &[],
        status: false,
    },
    Kind {
        group: "networking.k8s.io",
        version: "v1",
        resource: "networkpolicies",
        singular: "networkpolicy",
        kind: "NetworkPolicy",
        namespaced: true,
        short: &["netpol"],
        status: false,
    },
    Kind {
        group: "networking.k8s.io",
        version: "v1",
        resource: "ingresses",
        singular: "ingress",
        kind: "Ingress",
        namespaced: true,
        short: &["ing"],
        status: true,
    },
    Kind {
        group: "agents.x-k8s.io",
        version: "v1beta1",
        resource: "sandboxes",
        singular: "sandbox",
        kind: "Sandbox",
        namespaced: true,
        short: &["sandbox"],
        status: true,
    },
    Kind {
        group: "extensions.agents.x-k8s.io",
        version: "v1beta1",
        resource: "sandboxtemplates",
        singular: "sandboxtemplate",
        kind: "SandboxTemplate",
        namespaced: true,
        short: &["sandboxtemplate"],
        status: false,
    },
    Kind {
        group: "extensions.agents.x-k8s.io",
        version: "v1beta1",
        resource: "sandboxwarmpools",
        singular: "sandboxwarmpool",
        kind: "SandboxWarmPool",
        namespaced: true,
        short: &["swp"],
        status: true,
    },
    Kind {
        group: "extensions.agents.x-k8s.io",
        version: "v1beta1",
        resource: "sandboxclaims",
        singular: "sandboxclaim",
        kind: "SandboxClaim",
        namespaced: true,
        short: &["sandboxclaim"],
        status: true,
    },
];

/// The kind served at `group`/`version`/`resource`.
pub fn find(group: &str, version: &str, resource: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.version == version && k.resource == resource)
}

/// The groups other than the core one, in order, each with its versions.
fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for k in KINDS.iter().filter(|k| !k.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == k.group) {
            Some((_, versions)) if !versions.contains(&k.version) => versions.push(k.version),
            Some(_) => {}
            None => out.push((k.group, vec![k.version])),
        }
    }
    out
}

/// `GET /version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "37",
        "emulationMajor": "1",
        "emulationMinor": "37",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "36",
        "gitVersion": "v1.37.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z",
        "goVersion": "go1.25.3",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `GET /api`.
pub fn core_versions(server: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": server }]
    })
}

/// `GET /apis`.
pub fn group_list() -> Value {
    let groups: Vec<Value> = groups().into_iter().map(|(g, v)| group(g, &v)).collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `GET /apis/{group}`, when the stand-in serves `name`.
pub fn group_of(name: &str) -> Option<Value> {
    groups().into_iter().find(|(g, _)| *g == name).map(|(g, v)| {
        let mut doc = group(g, &v);
        doc["kind"] = json!("APIGroup");
        doc["apiVersion"] = json!("v1");
        doc
    })
}

fn group(name: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({ "groupVersion": format!("{name}/{v}"), "version": v }))
        .collect();
    json!({ "name": name, "versions": versions, "preferredVersion": versions[0] })
}

/// `GET /api/v1` or `GET /apis/{group}/{version}`, when the stand-in serves
/// that group version.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for k in KINDS.iter().filter(|k| k.group == group && k.version == version) {
        resources.push(json!({
            "name": k.resource,
            "singularName": k.singular,
            "namespaced": k.namespaced,
            "kind": k.kind,
            "verbs": VERBS,
            "shortNames": k.short,
            "storageVersionHash": "aaaaaaaaaaa="
        }));
        if k.status {
            resources.push(json!({
                "name": format!("{}/status", k.resource),
                "singularName": "",
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": ["get", "patch", "update"]
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources
    }))
}

/// The OpenAPI v3 index (`GET /openapi/v3`): one document per group version.
pub fn openapi_index() -> Value {
    let mut paths = serde_json::Map::new();
    let mut gvs: Vec<(&str, &str)> = Vec::new();
    for k in KINDS {
        if !gvs.contains(&(k.group, k.version)) {
            gvs.push((k.group, k.version));
        }
    }
    for (g, v) in gvs {
        let key = if g.is_empty() { format!("api/{v}") } else { format!("apis/{g}/{v}") };
        paths.insert(
            key.clone(),
            json!({ "serverRelativeURL": format!("/openapi/v3/{key}?hash=0123456789ABCDEF") }),
        );
    }
    json!({ "paths": paths })
}

/// The OpenAPI v3 document of a group version (`GET /openapi/v3/api/v1`):
/// each kind's paths, whose writes take `fieldValidation` (which kubectl
/// checks before it leaves validation to the server). It has no schemas,
/// so kubectl computes its patches from the types compiled into it, as it
/// does for a server without OpenAPI.
pub fn openapi_doc(key: &str) -> Option<Value> {
    let kinds: Vec<&Kind> = KINDS.iter().filter(|k| k.openapi_key() == key).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut paths = serde_json::Map::new();
    for k in kinds {
        let gvk = json!([{ "group": k.group, "version": k.version, "kind": k.kind }]);
        let write = |action: &str| {
            json!({
                "operationId": format!("{action}{}", k.kind),
                "parameters": [
                    { "name": "dryRun", "in": "query", "schema": { "type": "string" } },
                    { "name": "fieldManager", "in": "query", "schema": { "type": "string" } },
                    { "name": "fieldValidation", "in": "query", "schema": { "type": "string" } }
                ],
                "responses": { "200": { "description": "OK" } },
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk[0]
            })
        };
        let base = if k.namespaced {
            format!("/{key}/namespaces/{{namespace}}/{}", k.resource)
        } else {
            format!("/{key}/{}", k.resource)
        };
        paths.insert(base.clone(), json!({ "post": write("post") }));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({ "put": write("put"), "patch": write("patch") }),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": "v1.37.0" },
        "paths": paths,
        "components": { "schemas": {} }
    }))
}
