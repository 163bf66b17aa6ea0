//! holmd's own manifests (`deploy/kubernetes/holmd.yaml`) on holm's
//! Kubernetes API stand-in, through the real kubectl: the file applies
//! unchanged (strict field validation) into a namespace, every object
//! reads back, and what it says agrees with holmd and its runtime: the
//! Role grants exactly what the `kubernetes` runtime's calls need, the
//! Deployment's pod carries the label boxes let in and names only
//! variables holmd declares, its runtimes file parses as holmd parses it,
//! the Ingress covers every route; then `delete -f` removes it all. A
//! Deployment with an unknown field is refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use holm_proto::contract::server::SERVER_ROUTES;
use holm_standins::kube::KubeStandin;
use holm_testkit::e2e_enabled;
use holm_testkit::kube::{kubectl, ok};
use serde_json::Value;

/// The namespace the test applies into: the one the runtimes file names.
const NS: &str = "holm";

const EXT: &str = "extensions.agents.x-k8s.io";
const AGENTS: &str = "agents.x-k8s.io";

/// What the `kubernetes` runtime's calls need, by API group and resource
/// (host/holm/src/runtime/kubernetes/): `ping` reads the namespace; plain
/// pods create, read, list, watch and delete pods, create and delete
/// each box's Secret and Service; agent-sandbox mode reads and makes the
/// pool's Secret (and a stopping box's own), makes templates and pools
/// (and lists pools, to see whether they are full), creates, reads,
/// lists, watches and deletes claims, reading their pods, and reads and
/// patches a claim's Sandbox to stop and start it. [`calls_in_the_source`]
/// checks every call the source makes on a named resource is here.
const NEEDED: &[(&str, &str, &[&str])] = &[
    ("", "namespaces", &["get"]),
    ("", "pods", &["create", "delete", "get", "list", "watch"]),
    ("", "secrets", &["create", "delete", "get"]),
    ("", "services", &["create", "delete"]),
    (EXT, "sandboxclaims", &["create", "delete", "get", "list", "watch"]),
    (EXT, "sandboxtemplates", &["create"]),
    (EXT, "sandboxwarmpools", &["create", "list"]),
    (AGENTS, "sandboxes", &["get", "patch"]),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn grants(list: &[(&str, &str, &[&str])]) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for (g, r, verbs) in list {
        for v in *verbs {
            out.insert((g.to_string(), r.to_string(), v.to_string()));
        }
    }
    out
}

/// The arguments of the call whose `(` is at `open` in `text`, split at
/// top-level commas.
fn args(text: &str, open: usize) -> Vec<String> {
    let (mut depth, mut out, mut cur) = (0, Vec::new(), String::new());
    for c in text[open + 1..].chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_owned());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_owned());
    out
}

/// Each (group, resource, verb) the runtime's source calls on a resource
/// constant (`client.get(ns, SECRETS, …)`, `watch_object(SANDBOX_CLAIMS,
/// …)`, `watch_pod(…)`, `client.namespace(…)`), tests left out.
fn calls_in_the_source() -> BTreeSet<(String, String, String)> {
    let consts = [
        ("PODS", ("", "pods")),
        ("SECRETS", ("", "secrets")),
        ("SERVICES", ("", "services")),
        ("SANDBOX_CLAIMS", (EXT, "sandboxclaims")),
        ("SANDBOX_TEMPLATES", (EXT, "sandboxtemplates")),
        ("SANDBOX_WARM_POOLS", (EXT, "sandboxwarmpools")),
        ("SANDBOXES", (AGENTS, "sandboxes")),
    ];
    let at = |c: &str| consts.iter().find(|(k, _)| *k == c.trim_start_matches("super::client::"));
    let mut found = BTreeSet::new();
    let mut add = |(g, r): (&str, &str), v: &str| {
        found.insert((g.to_owned(), r.to_owned(), v.to_owned()));
    };
    let dir = repo().join("host/holm/src/runtime/kubernetes");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap();
        for verb in ["get", "list", "watch", "create", "delete", "patch"] {
            for (i, _) in text.match_indices(&format!(".{verb}(")) {
                let a = args(text, i + verb.len() + 1);
                if let Some((_, gr)) = a.get(1).and_then(|c| at(c)) {
                    add(*gr, verb);
                }
            }
        }
        for (i, _) in text.match_indices("watch_object(") {
            if let Some((_, gr)) = at(&args(text, i + "watch_object".len())[0]) {
                // A watch too old reads the object again.
                add(*gr, "watch");
                add(*gr, "get");
            }
        }
        if text.contains("self.watch_pod(") {
            add(("", "pods"), "watch");
        }
        if text.contains("client.namespace(") {
            add(("", "namespaces"), "get");
        }
    }
    found
}

/// The Role's rules as (group, resource, verb), refusing what a Role of
/// holmd's should never hold: wildcards, non-resource URLs.
fn role_grants(role: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        assert!(rule.get("nonResourceURLs").is_none(), "{rule}");
        let list = |k: &str| -> Vec<String> {
            let l = rule[k].as_array().unwrap_or_else(|| panic!("{k} in {rule}"));
            l.iter().map(|v| v.as_str().unwrap().to_owned()).collect()
        };
        for g in list("apiGroups") {
            for r in list("resources") {
                for v in list("verbs") {
                    assert!(![&g, &r, &v].iter().any(|s| s.contains('*')), "{rule}");
                    out.insert((g.clone(), r.clone(), v));
                }
            }
        }
    }
    out
}

fn by_kind<'a>(items: &'a [Value], kind: &str) -> &'a Value {
    let mut of = items.iter().filter(|o| o["kind"] == kind);
    let one = of.next().unwrap_or_else(|| panic!("no {kind} in the file"));
    assert!(of.next().is_none(), "two {kind}s");
    one
}

#[test]
fn the_role_grants_every_call_the_runtimes_source_makes() {
    let called = calls_in_the_source();
    // The scan sees the calls it must (a scan that finds nothing proves nothing).
    assert!(called.len() >= 12, "{called:?}");
    let needed = grants(NEEDED);
    let missing: Vec<_> = called.difference(&needed).collect();
    assert!(missing.is_empty(), "the source calls what NEEDED lacks: {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holmds_manifests_apply_agree_with_holmd_and_delete() {
    if !e2e_enabled().await {
        return;
    }
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let ns_file = dir.path().join("ns.yaml");
    std::fs::write(
        &ns_file,
        format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}}}\n"),
    )
    .unwrap();
    ok(&config, &["apply", "-f", ns_file.to_str().unwrap()]).await;
    let file = repo().join("deploy/kubernetes/holmd.yaml");
    let file = file.to_str().unwrap();
    let applied = ok(&config, &["apply", "-n", NS, "-f", file]).await;
    for made in [
        "serviceaccount/holmd",
        "role.rbac.authorization.k8s.io/holmd",
        "rolebinding.rbac.authorization.k8s.io/holmd",
        "configmap/holmd-runtimes",
        "deployment.apps/holmd",
        "service/holmd",
        "ingress.networking.k8s.io/holmd",
    ] {
        assert!(applied.contains(&format!("{made} created")), "{applied}");
    }
    let again = ok(&config, &["apply", "-n", NS, "-f", file]).await;
    assert_eq!(again.matches(" unchanged").count(), 7, "{again}");
    let got: Value =
        serde_json::from_str(&ok(&config, &["get", "-n", NS, "-f", file, "-o", "json"]).await)
            .unwrap();
    let items = got["items"].as_array().unwrap();
    assert_eq!(items.len(), 7);
    assert!(items.iter().all(|o| o["metadata"]["namespace"] == NS), "{got:#}");
    assert!(!items.iter().any(|o| o["kind"].as_str().unwrap().starts_with("Cluster")));

    // RBAC: exactly what the runtime needs, to holmd's ServiceAccount.
    let sa = by_kind(items, "ServiceAccount");
    assert_eq!(role_grants(by_kind(items, "Role")), grants(NEEDED));
    let binding = by_kind(items, "RoleBinding");
    assert_eq!(binding["roleRef"]["kind"], "Role");
    assert_eq!(binding["roleRef"]["name"], by_kind(items, "Role")["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);

    // The pod: holmd's label, its ServiceAccount's token, confinement.
    let deployment = by_kind(items, "Deployment");
    let template = &deployment["spec"]["template"];
    let (key, value) = holm::runtime::kubernetes::HOLMD_LABEL;
    assert_eq!(template["metadata"]["labels"][key], value);
    assert_eq!(deployment["spec"]["selector"]["matchLabels"][key], value);
    // Two replicas serve one fleet from one shared store.
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");
    let env = template["spec"]["containers"][0]["env"].as_array().unwrap();
    let var = |n: &str| env.iter().find(|e| e["name"] == n).map(|e| e["value"].clone());
    assert_eq!(var("HOLM_SHARED_STORE"), Some(serde_json::json!("1")));
    assert_eq!(var("HOLM_STORAGE_BACKEND"), Some(serde_json::json!("postgres")));
    let pod = &template["spec"];
    assert_eq!(pod["serviceAccountName"], sa["metadata"]["name"]);
    assert_eq!(pod["automountServiceAccountToken"], true);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
    assert!(c["resources"]["requests"]["memory"].is_string(), "{c}");
    assert!(c["resources"]["limits"]["memory"].is_string(), "{c}");

    // Every variable is one holmd reads.
    let declared: BTreeSet<&str> = holmd::vars::VARS.iter().map(|v| v.name).collect();
    let env = |name: &str| c["env"].as_array().unwrap().iter().find(|e| e["name"] == name);
    for e in c["env"].as_array().unwrap() {
        assert!(declared.contains(e["name"].as_str().unwrap()), "holmd reads no {e}");
    }
    let value_of = |name: &str| env(name).unwrap()["value"].as_str().unwrap().to_owned();
    assert_eq!(value_of(holmd::vars::STORAGE_BACKEND), "postgres");
    let url = &env(holmd::vars::DATABASE_URL).unwrap()["valueFrom"]["secretKeyRef"];
    assert_eq!(url["name"], "holmd", "the store's URL from the Secret");

    // Files: the token and the runtimes file are where the variables say.
    let mounted = |volume: &str| -> String {
        let m = c["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == volume);
        m.unwrap()["mountPath"].as_str().unwrap().to_owned()
    };
    let volume = |name: &str| pod["volumes"].as_array().unwrap().iter().find(|v| v["name"] == name);
    let token = volume("token").unwrap();
    assert_eq!(token["secret"]["secretName"], "holmd");
    let item = token["secret"]["items"][0]["path"].as_str().unwrap();
    assert_eq!(value_of(holmd::vars::SERVER_TOKEN_FILE), format!("{}/{item}", mounted("token")));
    let runtimes = volume("runtimes").unwrap();
    let map = by_kind(items, "ConfigMap");
    assert_eq!(runtimes["configMap"]["name"], map["metadata"]["name"]);
    let config_path = value_of(holmd::vars::SERVER_CONFIG);
    let file_key = config_path.strip_prefix(&format!("{}/", mounted("runtimes"))).unwrap();
    let text = map["data"][file_key].as_str().unwrap();
    let parsed = holmd::runtimes_file::parse(Path::new(&config_path), text).unwrap();
    let offered = value_of(holmd::vars::SERVER_RUNTIMES);
    let table = &parsed.runtimes[&offered];
    assert_eq!(table.kind, "kubernetes");
    assert_eq!(table.kube.namespace, NS, "boxes go where the Role grants");
    assert!(table.kube.kubeconfig.is_none(), "in-cluster credentials");

    // Probes on the health route, through the Service and the Ingress.
    let health = SERVER_ROUTES.iter().find(|r| r.op.public && r.path.ends_with("/health"));
    let health = health.unwrap().path;
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(c[probe]["httpGet"]["path"], health, "{probe}");
        assert_eq!(c[probe]["httpGet"]["port"], c["ports"][0]["name"], "{probe}");
    }
    let service = by_kind(items, "Service");
    assert_eq!(service["spec"]["selector"][key], value);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], c["ports"][0]["name"]);
    let ingress = by_kind(items, "Ingress");
    let rule = &ingress["spec"]["rules"][0];
    assert_eq!(
        value_of(holmd::vars::PUBLIC_URL),
        format!("https://{}", rule["host"].as_str().unwrap())
    );
    let mut prefixes = Vec::new();
    for p in rule["http"]["paths"].as_array().unwrap() {
        assert_eq!(p["pathType"], "Prefix");
        assert_eq!(p["backend"]["service"]["name"], service["metadata"]["name"]);
        assert_eq!(p["backend"]["service"]["port"]["name"], service["spec"]["ports"][0]["name"]);
        prefixes.push(p["path"].as_str().unwrap().to_owned());
    }
    assert_eq!(prefixes, ["/v1", "/mcp"]);
    assert!(SERVER_ROUTES.iter().all(|r| r.path.starts_with("/v1/")), "a route the Ingress misses");
    let notes = &ingress["metadata"]["annotations"];
    for (k, v) in [
        ("proxy-read-timeout", "3600"),
        ("proxy-send-timeout", "3600"),
        ("proxy-buffering", "off"),
        ("proxy-request-buffering", "off"),
    ] {
        assert_eq!(notes[format!("nginx.ingress.kubernetes.io/{k}")], v, "{k}");
    }

    ok(&config, &["delete", "-n", NS, "-f", file]).await;
    let (found, _, stderr) = kubectl(&config, &["get", "-n", NS, "-f", file]).await;
    assert!(!found && stderr.matches("NotFound").count() == 7, "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_with_an_unknown_field_is_refused() {
    if !e2e_enabled().await {
        return;
    }
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let shipped = std::fs::read_to_string(repo().join("deploy/kubernetes/holmd.yaml")).unwrap();
    let deployment = shipped.split("---\n").find(|d| d.contains("kind: Deployment")).unwrap();
    let line = "        image: registry.example.com/holmd:latest\n";
    assert!(deployment.contains(line));
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, deployment.replace(line, &format!("{line}        colour: red\n")))
        .unwrap();
    let (applied, _, stderr) = kubectl(&config, &["apply", "-f", bad.to_str().unwrap()]).await;
    assert!(!applied, "{stderr}");
    assert!(
        stderr.contains(
            r#"strict decoding error: unknown field "spec.template.spec.containers[0].colour""#
        ),
        "{stderr}"
    );
    let (found, _, stderr) = kubectl(&config, &["get", "deployment", "holmd"]).await;
    assert!(!found && stderr.contains("NotFound"), "{stderr}");
}
