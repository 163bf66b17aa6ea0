//! What the API server does to an object before it stores it: the
//! defaults of each kind, the checks that answer `Invalid`, the fields a
//! write may not change, and the metadata the server owns (`uid`,
//! `creationTimestamp`, `generation`).

use base64::Engine as _;
use serde_json::{Value, json};

use super::kinds::Kind;
use super::status::Failure;

type Causes = Vec<(String, &'static str, String)>;

fn required(causes: &mut Causes, field: impl Into<String>) {
    causes.push((field.into(), "FieldValueRequired", "Required value".into()));
}

/// Whether `s` is an RFC 1123 subdomain (names of most kinds).
fn subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !p.starts_with('-')
                && !p.ends_with('-')
        })
}

/// Whether `s` is an RFC 1035 label (names of Services).
fn label_1035(s: &str) -> bool {
    s.len() <= 63
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn check_name(kind: &Kind, name: &str, causes: &mut Causes) {
    let ok = if kind.kind == "Service" { label_1035(name) } else { subdomain(name) };
    if !ok {
        let what = if kind.kind == "Service" {
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        } else {
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        };
        causes.push((
            "metadata.name".into(),
            "FieldValueInvalid",
            format!("Invalid value: \"{name}\": {what}"),
        ));
    }
}

fn set_default(o: &mut Value, key: &str, v: Value) {
    if o.get(key).is_none_or(Value::is_null) {
        o[key] = v;
    }
}

/// Fills in a Pod's defaults and checks it.
fn pod(o: &mut Value, causes: &mut Causes) {
    let spec = &mut o["spec"];
    let containers = spec.get_mut("containers").and_then(Value::as_array_mut);
    match containers {
        None => required(causes, "spec.containers"),
        Some(list) if list.is_empty() => required(causes, "spec.containers"),
        Some(list) => {
            for (i, c) in list.iter_mut().enumerate() {
                if c.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
                    required(causes, format!("spec.containers[{i}].name"));
                }
                let image = c.get("image").and_then(Value::as_str).unwrap_or("").to_owned();
                if image.is_empty() {
                    required(causes, format!("spec.containers[{i}].image"));
                }
                let latest = !image.contains(':') || image.ends_with(":latest");
                set_default(
                    c,
                    "imagePullPolicy",
                    json!(if latest { "Always" } else { "IfNotPresent" }),
                );
                set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
                set_default(c, "terminationMessagePolicy", json!("File"));
                set_default(c, "resources", json!({}));
                for p in c.get_mut("ports").and_then(Value::as_array_mut).into_iter().flatten() {
                    set_default(p, "protocol", json!("TCP"));
                }
            }
        }
    }
    for (k, v) in [
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("priority", json!(0)),
    ] {
        set_default(spec, k, v);
    }
    let policy = spec["restartPolicy"].as_str().unwrap_or("");
    if !["Always", "OnFailure", "Never"].contains(&policy) {
        causes.push((
            "spec.restartPolicy".into(),
            "FieldValueNotSupported",
            format!("Unsupported value: \"{policy}\": supported values: \"Always\", \"OnFailure\", \"Never\""),
        ));
    }
    o["status"] = json!({ "phase": "Pending", "qosClass": "BestEffort" });
}

/// Fills in a Service's defaults (a cluster IP from `next_ip` unless
/// headless) and checks it.
fn service(o: &mut Value, causes: &mut Causes, next_ip: &mut dyn FnMut() -> String) {
    let spec = &mut o["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    match ports {
        Some(list) if !list.is_empty() => {
            for (i, p) in list.iter_mut().enumerate() {
                set_default(p, "protocol", json!("TCP"));
                match p.get("port").and_then(Value::as_i64) {
                    Some(n) if (1..=65535).contains(&n) => set_default(p, "targetPort", json!(n)),
                    Some(n) => causes.push((
                        format!("spec.ports[{i}].port"),
                        "FieldValueInvalid",
                        format!("Invalid value: {n}: must be between 1 and 65535, inclusive"),
                    )),
                    None => required(causes, format!("spec.ports[{i}].port")),
                }
            }
        }
        _ if headless => {}
        _ => required(causes, "spec.ports"),
    }
    if spec.get("clusterIP").and_then(Value::as_str).is_none_or(str::is_empty) {
        spec["clusterIP"] = json!(next_ip());
    }
    let ip = spec["clusterIP"].clone();
    set_default(spec, "clusterIPs", json!([ip]));
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
    o["status"] = json!({ "loadBalancer": {} });
}

/// Moves a Secret's `stringData` into `data` and checks `data` is base64,
/// as the API server's decoder does (a 400, not an `Invalid`).
fn secret(o: &mut Value) -> Result<(), Failure> {
    set_default(o, "type", json!("Opaque"));
    if let Some(Value::Object(data)) = o.get("data") {
        for v in data.values() {
            let s = v.as_str().unwrap_or("");
            if let Err(e) = base64::engine::general_purpose::STANDARD.decode(s) {
                let at = match e {
                    base64::DecodeError::InvalidByte(i, _)
                    | base64::DecodeError::InvalidLastSymbol(i, _) => i,
                    _ => s.len(),
                };
                return Err(Failure::bad_request(format!(
                    "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte {at}"
                )));
            }
        }
    }
    if let Some(Value::Object(plain)) = o.as_object_mut().and_then(|m| m.remove("stringData")) {
        set_default(o, "data", json!({}));
        for (k, v) in plain {
            let enc = base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or(""));
            o["data"][k] = json!(enc);
        }
    }
    Ok(())
}

fn network_policy(o: &mut Value, causes: &mut Causes) {
    let spec = &mut o["spec"];
    if spec.get("podSelector").is_none_or(Value::is_null) {
        required(causes, "spec.podSelector");
    }
    if spec.get("policyTypes").is_none_or(Value::is_null) && spec.is_object() {
        let mut types = vec![json!("Ingress")];
        if spec.get("egress").is_some_and(|e| !e.is_null()) {
            types.push(json!("Egress"));
        }
        spec["policyTypes"] = Value::Array(types);
    }
}

/// Fills in a Deployment's defaults (its pod template's as a Pod's) and
/// checks it: a selector that its template's labels match, and a valid
/// pod template.
fn deployment(o: &mut Value, causes: &mut Causes) {
    let spec = &mut o["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    set_default(spec, "replicas", json!(1));
    set_default(
        spec,
        "strategy",
        json!({ "type": "RollingUpdate",
            "rollingUpdate": { "maxUnavailable": "25%", "maxSurge": "25%" } }),
    );
    set_default(spec, "revisionHistoryLimit", json!(10));
    set_default(spec, "progressDeadlineSeconds", json!(600));
    let mut as_pod = json!({ "spec": spec["template"]["spec"].take() });
    let mut inner = Causes::new();
    pod(&mut as_pod, &mut inner);
    spec["template"]["spec"] = as_pod["spec"].take();
    causes.extend(inner.into_iter().map(|(f, t, m)| (format!("spec.template.{f}"), t, m)));
    let wanted = spec["selector"]["matchLabels"].as_object().cloned().unwrap_or_default();
    if spec["selector"].is_null() {
        required(causes, "spec.selector");
    } else if wanted.is_empty() && spec["selector"]["matchExpressions"].is_null() {
        causes.push((
            "spec.selector".into(),
            "FieldValueInvalid",
            "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment".into(),
        ));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    if !wanted.iter().all(|(k, v)| &labels[k] == v) {
        causes.push((
            "spec.template.metadata.labels".into(),
            "FieldValueInvalid",
            format!("Invalid value: {labels}: `selector` does not match template `labels`"),
        ));
    }
    set_default(o, "status", json!({}));
}

/// Checks a Role's rules: each names its verbs, and resource rules their
/// API groups (a Role cannot name non-resource URLs).
fn role(o: &Value, causes: &mut Causes) {
    for (i, rule) in o["rules"].as_array().into_iter().flatten().enumerate() {
        let empty = |k: &str| rule[k].as_array().is_none_or(Vec::is_empty);
        if empty("verbs") {
            causes.push((
                format!("rules[{i}].verbs"),
                "FieldValueRequired",
                "Required value: verbs must contain at least one value".into(),
            ));
        }
        if !empty("nonResourceURLs") {
            causes.push((
                format!("rules[{i}].nonResourceURLs"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: namespaced rules cannot apply to non-resource URLs",
                    rule["nonResourceURLs"]
                ),
            ));
        } else if empty("apiGroups") {
            causes.push((
                format!("rules[{i}].apiGroups"),
                "FieldValueRequired",
                "Required value: resource rules must supply at least one api group".into(),
            ));
        }
    }
}

/// Checks a RoleBinding's `roleRef` (a Role or ClusterRole by name) and
/// its subjects' names.
fn role_binding(o: &Value, causes: &mut Causes) {
    let r = &o["roleRef"];
    match r["kind"].as_str().unwrap_or("") {
        "Role" | "ClusterRole" => {}
        other => causes.push((
            "roleRef.kind".into(),
            "FieldValueNotSupported",
            format!("Unsupported value: \"{other}\": supported values: \"Role\", \"ClusterRole\""),
        )),
    }
    if r["apiGroup"].as_str() != Some("rbac.authorization.k8s.io") {
        causes.push((
            "roleRef.apiGroup".into(),
            "FieldValueNotSupported",
            format!(
                "Unsupported value: \"{}\": supported values: \"rbac.authorization.k8s.io\"",
                r["apiGroup"].as_str().unwrap_or("")
            ),
        ));
    }
    if r["name"].as_str().is_none_or(str::is_empty) {
        required(causes, "roleRef.name");
    }
    for (i, s) in o["subjects"].as_array().into_iter().flatten().enumerate() {
        if s["name"].as_str().is_none_or(str::is_empty) {
            required(causes, format!("subjects[{i}].name"));
        }
    }
}

/// Checks an Ingress's paths (each with a `pathType` and a backend).
fn ingress(o: &mut Value, causes: &mut Causes) {
    for (i, rule) in o["spec"]["rules"].as_array().into_iter().flatten().enumerate() {
        for (j, p) in rule["http"]["paths"].as_array().into_iter().flatten().enumerate() {
            let at = format!("spec.rules[{i}].http.paths[{j}]");
            match p["pathType"].as_str() {
                None => causes.push((
                    format!("{at}.pathType"),
                    "FieldValueRequired",
                    "Required value: pathType must be specified".into(),
                )),
                Some("Exact" | "Prefix" | "ImplementationSpecific") => {}
                Some(other) => causes.push((
                    format!("{at}.pathType"),
                    "FieldValueNotSupported",
                    format!("Unsupported value: \"{other}\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""),
                )),
            }
            if p["backend"]["service"].is_null() && p["backend"]["resource"].is_null() {
                causes.push((
                    format!("{at}.backend"),
                    "FieldValueInvalid",
                    "Invalid value: \"\": must specify a resource or service".into(),
                ));
            }
        }
    }
    set_default(o, "status", json!({ "loadBalancer": {} }));
}

/// Whether the API server counts the kind's spec changes in
/// `metadata.generation` (Pods since 1.33, NetworkPolicies, Deployments,
/// Ingresses, every custom resource; not Services, Secrets, ConfigMaps,
/// Namespaces, ServiceAccounts, Roles or RoleBindings).
fn has_generation(kind: &Kind) -> bool {
    matches!(kind.kind, "Pod" | "NetworkPolicy" | "Deployment" | "Ingress") || !kind.built_in()
}

/// The fields the agent-sandbox CRDs require.
fn custom(kind: &Kind, o: &Value, causes: &mut Causes) {
    let need: &[&str] = match kind.kind {
        "Sandbox" | "SandboxTemplate" => &["/spec", "/spec/podTemplate", "/spec/podTemplate/spec"],
        "SandboxWarmPool" => &["/spec"],
        "SandboxClaim" => &["/spec", "/spec/warmPoolRef", "/spec/warmPoolRef/name"],
        _ => &[],
    };
    for p in need {
        if o.pointer(p).is_none_or(Value::is_null) {
            required(causes, p.trim_start_matches('/').replace('/', "."));
            return;
        }
    }
    let mode = o.pointer("/spec/operatingMode").and_then(Value::as_str);
    if kind.kind == "Sandbox" && mode.is_some_and(|m| m != "Running" && m != "Suspended") {
        causes.push((
            "spec.operatingMode".into(),
            "FieldValueNotSupported",
            format!(
                "Unsupported value: \"{}\": supported values: \"Running\", \"Suspended\"",
                mode.unwrap_or("")
            ),
        ));
    }
}

/// What a write needs from the server: the time now (RFC 3339), a fresh
/// uid, and the next cluster IP.
pub struct Fresh<'a> {
    /// Now, RFC 3339.
    pub now: String,
    /// A new uid.
    pub uid: String,
    /// The next Service cluster IP.
    pub next_ip: &'a mut dyn FnMut() -> String,
}

/// Defaults and checks a new object of `kind` named `name`.
pub fn create(kind: &Kind, o: &mut Value, name: &str, fresh: Fresh<'_>) -> Result<(), Failure> {
    let mut causes = Causes::new();
    check_name(kind, name, &mut causes);
    match kind.kind {
        "Pod" => pod(o, &mut causes),
        "Service" => service(o, &mut causes, fresh.next_ip),
        "Secret" => secret(o)?,
        "NetworkPolicy" => network_policy(o, &mut causes),
        "Deployment" => deployment(o, &mut causes),
        "Role" => role(o, &mut causes),
        "RoleBinding" => role_binding(o, &mut causes),
        "Ingress" => ingress(o, &mut causes),
        _ if !kind.built_in() => custom(kind, o, &mut causes),
        "Namespace" => {
            o["spec"] = json!({ "finalizers": ["kubernetes"] });
            o["status"] = json!({ "phase": "Active" });
            o["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
        }
        _ => {}
    }
    if !causes.is_empty() {
        return Err(Failure::invalid(kind, name, &causes));
    }
    if !kind.built_in()
        && kind.status
        && let Some(m) = o.as_object_mut()
    {
        // A custom resource's status is written through its subresource.
        m.remove("status");
    }
    let m = &mut o["metadata"];
    m["uid"] = json!(fresh.uid);
    m["creationTimestamp"] = json!(fresh.now);
    if has_generation(kind) {
        m["generation"] = json!(1);
    }
    if let Some(meta) = m.as_object_mut() {
        meta.remove("deletionTimestamp");
        meta.remove("managedFields");
    }
    Ok(())
}

/// The parts of a Pod's spec an update may change.
fn pod_spec_mutable_stripped(spec: &Value) -> Value {
    let mut s = spec.clone();
    for c in s.get_mut("containers").and_then(Value::as_array_mut).into_iter().flatten() {
        c["image"] = Value::Null;
    }
    for k in ["activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"] {
        if let Some(m) = s.as_object_mut() {
            m.remove(k);
        }
    }
    s
}

/// Checks and completes an update of `old` to `new` on the main resource
/// (`status_only`: the `status` subresource), keeping what the server owns.
pub fn update(kind: &Kind, old: &Value, new: &mut Value, status_only: bool) -> Result<(), Failure> {
    let name = old["metadata"]["name"].as_str().unwrap_or("").to_owned();
    for k in ["uid", "creationTimestamp", "deletionTimestamp", "generation"] {
        new["metadata"][k] = old["metadata"][k].clone();
    }
    if let Some(m) = new["metadata"].as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    if status_only {
        let status = new.get("status").cloned().unwrap_or(Value::Null);
        let metadata = new["metadata"].clone();
        *new = old.clone();
        new["status"] = status;
        new["metadata"]["labels"] = metadata["labels"].clone();
        new["metadata"]["annotations"] = metadata["annotations"].clone();
        if let Some(m) = new["metadata"].as_object_mut() {
            m.retain(|_, v| !v.is_null());
        }
        return Ok(());
    }
    if kind.status {
        new["status"] = old["status"].clone();
    }
    let mut causes = Causes::new();
    match kind.kind {
        "Pod" => {
            let mut defaulted = new.clone();
            pod(&mut defaulted, &mut causes);
            let status = new["status"].clone();
            *new = defaulted;
            new["status"] = status;
            if pod_spec_mutable_stripped(&new["spec"]) != pod_spec_mutable_stripped(&old["spec"]) {
                causes.push(("spec".into(), "FieldValueForbidden", "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into()));
            }
        }
        "Service" => {
            let old_ip = old["spec"]["clusterIP"].clone();
            let mut keep = || old_ip.as_str().unwrap_or("").to_owned();
            let status = new["status"].clone();
            service(new, &mut causes, &mut keep);
            new["status"] = status;
            if new["spec"]["clusterIP"] != old_ip {
                causes.push((
                    "spec.clusterIPs[0]".into(),
                    "FieldValueInvalid",
                    "Invalid value: []string{}: may not change once set".into(),
                ));
            }
        }
        "Secret" => secret(new)?,
        "NetworkPolicy" => network_policy(new, &mut causes),
        "Deployment" => deployment(new, &mut causes),
        "Role" => role(new, &mut causes),
        "RoleBinding" => {
            role_binding(new, &mut causes);
            if new["roleRef"] != old["roleRef"] {
                causes.push((
                    "roleRef".into(),
                    "FieldValueInvalid",
                    format!("Invalid value: {}: cannot change roleRef", new["roleRef"]),
                ));
            }
        }
        "Ingress" => ingress(new, &mut causes),
        _ if !kind.built_in() => custom(kind, new, &mut causes),
        _ => {}
    }
    if !causes.is_empty() {
        return Err(Failure::invalid(kind, &name, &causes));
    }
    let body = |o: &Value| {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        o
    };
    if has_generation(kind) && body(old) != body(new) {
        let g = old["metadata"]["generation"].as_i64().unwrap_or(1);
        new["metadata"]["generation"] = json!(g + 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::kinds::find;

    fn fresh(next: &mut dyn FnMut() -> String) -> Fresh<'_> {
        Fresh { now: "2026-01-01T00:00:00Z".into(), uid: "u".into(), next_ip: next }
    }

    #[test]
    fn a_pod_without_an_image_is_invalid() {
        let kind = find("", "v1", "pods").unwrap();
        let mut o =
            json!({ "metadata": { "name": "p" }, "spec": { "containers": [{ "name": "c" }] } });
        let f = create(kind, &mut o, "p", fresh(&mut || String::new())).unwrap_err();
        assert_eq!(f.code, 422);
        assert_eq!(f.message, "Pod \"p\" is invalid: spec.containers[0].image: Required value");
    }

    #[test]
    fn a_pods_spec_may_change_only_its_images() {
        let kind = find("", "v1", "pods").unwrap();
        let mut old = json!({ "metadata": { "name": "p" }, "spec": { "containers": [{ "name": "c", "image": "a:1" }] } });
        create(kind, &mut old, "p", fresh(&mut || String::new())).unwrap();
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("a:2");
        update(kind, &old, &mut new, false).unwrap();
        new["spec"]["hostname"] = json!("x");
        assert_eq!(update(kind, &old, &mut new, false).unwrap_err().reason, "Invalid");
    }

    #[test]
    fn a_secrets_string_data_becomes_data() {
        let kind = find("", "v1", "secrets").unwrap();
        let mut o = json!({ "metadata": { "name": "s" }, "stringData": { "k": "v" } });
        create(kind, &mut o, "s", fresh(&mut || String::new())).unwrap();
        assert_eq!(o["data"]["k"], "dg==");
        assert_eq!(o["type"], "Opaque");
        let mut bad = json!({ "metadata": { "name": "s" }, "data": { "k": "!!" } });
        assert_eq!(
            create(kind, &mut bad, "s", fresh(&mut || String::new())).unwrap_err().code,
            400
        );
    }

    #[test]
    fn a_deployment_is_defaulted_and_its_selector_must_match_its_template() {
        let kind = find("apps", "v1", "deployments").unwrap();
        let mut o = json!({ "metadata": { "name": "d" }, "spec": {
            "selector": { "matchLabels": { "app": "a" } },
            "template": { "metadata": { "labels": { "app": "a" } },
                "spec": { "containers": [{ "name": "c", "image": "i:1" }] } } } });
        create(kind, &mut o, "d", fresh(&mut || String::new())).unwrap();
        assert_eq!(o["spec"]["replicas"], 1);
        assert_eq!(o["spec"]["strategy"]["type"], "RollingUpdate");
        assert_eq!(o["spec"]["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(o["metadata"]["generation"], 1);
        let mut bad = o.clone();
        bad["spec"]["template"]["metadata"]["labels"]["app"] = json!("b");
        bad["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        let f = create(kind, &mut bad, "d", fresh(&mut || String::new())).unwrap_err();
        assert!(f.message.contains("spec.template.spec.containers[0].image: Required"), "{f:?}");
        assert!(f.message.contains("`selector` does not match template `labels`"), "{f:?}");
    }

    #[test]
    fn a_role_names_its_verbs_and_a_bindings_role_ref_does_not_change() {
        let role = find("rbac.authorization.k8s.io", "v1", "roles").unwrap();
        let mut o = json!({ "metadata": { "name": "r" }, "rules": [{ "resources": ["pods"] }] });
        let f = create(role, &mut o, "r", fresh(&mut || String::new())).unwrap_err();
        assert!(f.message.contains("rules[0].verbs: Required value"), "{f:?}");
        assert!(f.message.contains("rules[0].apiGroups: Required value"), "{f:?}");
        let binding = find("rbac.authorization.k8s.io", "v1", "rolebindings").unwrap();
        let mut old = json!({ "metadata": { "name": "b" },
            "subjects": [{ "kind": "ServiceAccount", "name": "sa" }],
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r" } });
        create(binding, &mut old, "b", fresh(&mut || String::new())).unwrap();
        let mut new = old.clone();
        new["roleRef"]["name"] = json!("other");
        let f = update(binding, &old, &mut new, false).unwrap_err();
        assert!(f.message.contains("cannot change roleRef"), "{f:?}");
    }
}
