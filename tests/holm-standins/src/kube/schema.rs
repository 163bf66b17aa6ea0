//! The fields of the built-in kinds the stand-in knows, for server-side
//! field validation: an unknown field is refused under
//! `fieldValidation=Strict`, reported in a `Warning` header under `Warn`
//! (the default), and dropped under `Ignore`, as the API server's decoder
//! does (its Go types have no place for it, so it is never stored).
//!
//! A schema is JSON: an object of field to schema, `[schema]` for a list,
//! `"s"` string, `"i"` integer, `"n"` number, `"b"` boolean, `"m"` a map of
//! strings, `"x"` anything (a quantity, an int-or-string, a free map).

use serde_json::{Value, json};

fn meta() -> Value {
    json!({
        "name": "s", "generateName": "s", "namespace": "s", "uid": "s",
        "resourceVersion": "s", "generation": "i", "creationTimestamp": "x",
        "deletionTimestamp": "x", "deletionGracePeriodSeconds": "i",
        "labels": "m", "annotations": "m", "finalizers": ["s"],
        "ownerReferences": [{ "apiVersion": "s", "kind": "s", "name": "s", "uid": "s",
            "controller": "b", "blockOwnerDeletion": "b" }],
        "managedFields": ["x"], "selfLink": "s"
    })
}

fn env_var() -> Value {
    json!({ "name": "s", "value": "s", "valueFrom": {
        "secretKeyRef": { "name": "s", "key": "s", "optional": "b" },
        "configMapKeyRef": { "name": "s", "key": "s", "optional": "b" },
        "fieldRef": { "apiVersion": "s", "fieldPath": "s" },
        "resourceFieldRef": { "containerName": "s", "resource": "s", "divisor": "x" }
    } })
}

fn probe() -> Value {
    json!({
        "exec": { "command": ["s"] },
        "httpGet": { "path": "s", "port": "x", "host": "s", "scheme": "s",
            "httpHeaders": [{ "name": "s", "value": "s" }] },
        "tcpSocket": { "port": "x", "host": "s" },
        "grpc": { "port": "i", "service": "s" },
        "initialDelaySeconds": "i", "timeoutSeconds": "i", "periodSeconds": "i",
        "successThreshold": "i", "failureThreshold": "i", "terminationGracePeriodSeconds": "i"
    })
}

fn security_context() -> Value {
    json!({
        "runAsUser": "i", "runAsGroup": "i", "runAsNonRoot": "b", "privileged": "b",
        "readOnlyRootFilesystem": "b", "allowPrivilegeEscalation": "b", "procMount": "s",
        "capabilities": { "add": ["s"], "drop": ["s"] },
        "seccompProfile": { "type": "s", "localhostProfile": "s" },
        "appArmorProfile": { "type": "s", "localhostProfile": "s" },
        "seLinuxOptions": { "user": "s", "role": "s", "type": "s", "level": "s" },
        "fsGroup": "i", "fsGroupChangePolicy": "s", "supplementalGroups": ["i"],
        "supplementalGroupsPolicy": "s", "sysctls": [{ "name": "s", "value": "s" }],
        "seLinuxChangePolicy": "s"
    })
}

fn container() -> Value {
    json!({
        "name": "s", "image": "s", "command": ["s"], "args": ["s"], "workingDir": "s",
        "ports": [{ "name": "s", "containerPort": "i", "hostPort": "i", "hostIP": "s", "protocol": "s" }],
        "env": [env_var()],
        "envFrom": [{ "prefix": "s", "secretRef": { "name": "s", "optional": "b" },
            "configMapRef": { "name": "s", "optional": "b" } }],
        "resources": { "limits": "x", "requests": "x", "claims": ["x"] },
        "resizePolicy": [{ "resourceName": "s", "restartPolicy": "s" }],
        "restartPolicy": "s",
        "volumeMounts": [{ "name": "s", "mountPath": "s", "readOnly": "b", "subPath": "s",
            "subPathExpr": "s", "mountPropagation": "s", "recursiveReadOnly": "s" }],
        "livenessProbe": probe(), "readinessProbe": probe(), "startupProbe": probe(),
        "lifecycle": "x", "terminationMessagePath": "s", "terminationMessagePolicy": "s",
        "imagePullPolicy": "s", "securityContext": security_context(),
        "stdin": "b", "stdinOnce": "b", "tty": "b"
    })
}

fn pod_spec() -> Value {
    json!({
        "containers": [container()], "initContainers": [container()],
        "volumes": [{ "name": "s", "emptyDir": { "medium": "s", "sizeLimit": "x" },
            "secret": { "secretName": "s", "items": ["x"], "defaultMode": "i", "optional": "b" },
            "configMap": { "name": "s", "items": ["x"], "defaultMode": "i", "optional": "b" },
            "persistentVolumeClaim": { "claimName": "s", "readOnly": "b" },
            "hostPath": { "path": "s", "type": "s" }, "projected": "x", "downwardAPI": "x",
            "ephemeral": "x", "image": { "reference": "s", "pullPolicy": "s" } }],
        "restartPolicy": "s", "terminationGracePeriodSeconds": "i",
        "activeDeadlineSeconds": "i", "dnsPolicy": "s", "nodeSelector": "m",
        "serviceAccountName": "s", "serviceAccount": "s",
        "automountServiceAccountToken": "b", "nodeName": "s", "hostNetwork": "b",
        "hostPID": "b", "hostIPC": "b", "shareProcessNamespace": "b",
        "securityContext": security_context(),
        "imagePullSecrets": [{ "name": "s" }], "hostname": "s", "subdomain": "s",
        "affinity": "x", "schedulerName": "s",
        "tolerations": [{ "key": "s", "operator": "s", "value": "s", "effect": "s",
            "tolerationSeconds": "i" }],
        "hostAliases": [{ "ip": "s", "hostnames": ["s"] }], "priorityClassName": "s",
        "priority": "i", "dnsConfig": "x", "readinessGates": [{ "conditionType": "s" }],
        "runtimeClassName": "s", "enableServiceLinks": "b", "preemptionPolicy": "s",
        "overhead": "x", "topologySpreadConstraints": ["x"], "setHostnameAsFQDN": "b",
        "os": { "name": "s" }, "hostUsers": "b", "schedulingGates": [{ "name": "s" }],
        "resourceClaims": ["x"], "resources": { "limits": "x", "requests": "x" }
    })
}

fn pod_status() -> Value {
    json!({
        "phase": "s", "conditions": ["x"], "message": "s", "reason": "s",
        "hostIP": "s", "hostIPs": [{ "ip": "s" }], "podIP": "s", "podIPs": [{ "ip": "s" }],
        "startTime": "x", "initContainerStatuses": ["x"], "containerStatuses": ["x"],
        "qosClass": "s", "ephemeralContainerStatuses": ["x"], "nominatedNodeName": "s",
        "observedGeneration": "i", "resize": "s", "resourceClaimStatuses": ["x"]
    })
}

fn peer() -> Value {
    json!({ "podSelector": "x", "namespaceSelector": "x",
        "ipBlock": { "cidr": "s", "except": ["s"] } })
}

fn net_ports() -> Value {
    json!([{ "protocol": "s", "port": "x", "endPort": "i" }])
}

/// A `metav1.Condition`.
fn condition() -> Value {
    json!({ "type": "s", "status": "s", "observedGeneration": "i", "lastTransitionTime": "x",
        "reason": "s", "message": "s" })
}

/// agent-sandbox's `SandboxBlueprint` (`podTemplate`,
/// `volumeClaimTemplates`, `service`) with `rest`.
fn blueprint(rest: Value) -> Value {
    let mut o = json!({
        "podTemplate": { "metadata": { "labels": "m", "annotations": "m" }, "spec": pod_spec() },
        "volumeClaimTemplates": ["x"],
        "service": "b"
    });
    o.as_object_mut().expect("an object").extend(rest.as_object().cloned().unwrap_or_default());
    o
}

fn label_selector() -> Value {
    json!({ "matchLabels": "m",
        "matchExpressions": [{ "key": "s", "operator": "s", "values": ["s"] }] })
}

fn deployment() -> Value {
    json!({
        "spec": { "replicas": "i", "selector": label_selector(),
            "template": { "metadata": meta(), "spec": pod_spec() },
            "strategy": { "type": "s", "rollingUpdate": { "maxUnavailable": "x", "maxSurge": "x" } },
            "minReadySeconds": "i", "revisionHistoryLimit": "i", "paused": "b",
            "progressDeadlineSeconds": "i" },
        "status": { "observedGeneration": "i", "replicas": "i", "updatedReplicas": "i",
            "readyReplicas": "i", "availableReplicas": "i", "unavailableReplicas": "i",
            "terminatingReplicas": "i", "collisionCount": "i",
            "conditions": [{ "type": "s", "status": "s", "lastUpdateTime": "x",
                "lastTransitionTime": "x", "reason": "s", "message": "s" }] }
    })
}

fn ingress() -> Value {
    let backend = json!({
        "service": { "name": "s", "port": { "name": "s", "number": "i" } },
        "resource": { "apiGroup": "s", "kind": "s", "name": "s" }
    });
    json!({
        "spec": { "ingressClassName": "s", "defaultBackend": backend,
            "tls": [{ "hosts": ["s"], "secretName": "s" }],
            "rules": [{ "host": "s", "http": { "paths": [{ "path": "s", "pathType": "s",
                "backend": backend }] } }] },
        "status": { "loadBalancer": { "ingress": [{ "ip": "s", "hostname": "s",
            "ports": [{ "port": "i", "protocol": "s", "error": "s" }] }] } }
    })
}

/// The schema of a kind's whole object (the agent-sandbox kinds' from
/// their CRDs' `openAPIV3Schema`).
pub fn of(kind: &str) -> Value {
    let top = |rest: Value| {
        let mut o = json!({ "apiVersion": "s", "kind": "s", "metadata": meta() });
        o.as_object_mut().expect("an object").extend(rest.as_object().cloned().unwrap_or_default());
        o
    };
    match kind {
        "Pod" => top(json!({ "spec": pod_spec(), "status": pod_status() })),
        "Service" => top(json!({
            "spec": {
                "ports": [{ "name": "s", "protocol": "s", "appProtocol": "s", "port": "i",
                    "targetPort": "x", "nodePort": "i" }],
                "selector": "m", "clusterIP": "s", "clusterIPs": ["s"], "type": "s",
                "externalIPs": ["s"], "sessionAffinity": "s", "loadBalancerIP": "s",
                "loadBalancerSourceRanges": ["s"], "externalName": "s",
                "externalTrafficPolicy": "s", "healthCheckNodePort": "i",
                "publishNotReadyAddresses": "b", "sessionAffinityConfig": "x",
                "ipFamilies": ["s"], "ipFamilyPolicy": "s", "allocateLoadBalancerNodePorts": "b",
                "loadBalancerClass": "s", "internalTrafficPolicy": "s", "trafficDistribution": "s"
            },
            "status": { "loadBalancer": "x", "conditions": ["x"] }
        })),
        "Secret" => top(json!({ "data": "m", "stringData": "m", "type": "s", "immutable": "b" })),
        "ConfigMap" => top(json!({ "data": "m", "binaryData": "m", "immutable": "b" })),
        "PersistentVolumeClaim" => top(json!({
            "spec": { "accessModes": ["s"], "selector": "x", "resources": "x",
                "volumeName": "s", "storageClassName": "s", "volumeMode": "s",
                "dataSource": "x", "dataSourceRef": "x", "volumeAttributesClassName": "s" },
            "status": { "phase": "s", "accessModes": ["s"], "capacity": "m",
                "conditions": ["x"], "allocatedResources": "m" }
        })),
        "NetworkPolicy" => top(json!({ "spec": {
            "podSelector": "x", "policyTypes": ["s"],
            "ingress": [{ "from": [peer()], "ports": net_ports() }],
            "egress": [{ "to": [peer()], "ports": net_ports() }]
        } })),
        "ServiceAccount" => top(json!({
            "secrets": [{ "kind": "s", "namespace": "s", "name": "s", "uid": "s",
                "apiVersion": "s", "resourceVersion": "s", "fieldPath": "s" }],
            "imagePullSecrets": [{ "name": "s" }], "automountServiceAccountToken": "b"
        })),
        "Deployment" => top(deployment()),
        "Ingress" => top(ingress()),
        "Role" => top(json!({ "rules": [{ "verbs": ["s"], "apiGroups": ["s"],
            "resources": ["s"], "resourceNames": ["s"], "nonResourceURLs": ["s"] }] })),
        "RoleBinding" => top(json!({
            "subjects": [{ "kind": "s", "apiGroup": "s", "name": "s", "namespace": "s" }],
            "roleRef": { "apiGroup": "s", "kind": "s", "name": "s" }
        })),
        "Namespace" => top(json!({ "spec": { "finalizers": ["s"] }, "status": "x" })),
        "Sandbox" => top(json!({
            "spec": blueprint(json!({ "shutdownTime": "x", "shutdownPolicy": "s", "operatingMode": "s" })),
            "status": { "serviceFQDN": "s", "service": "s", "conditions": [condition()],
                "selector": "s", "podIPs": ["s"], "nodeName": "s" }
        })),
        "SandboxTemplate" => top(json!({ "spec": blueprint(json!({
            "networkPolicy": { "ingress": [{ "from": [peer()], "ports": net_ports() }],
                "egress": [{ "to": [peer()], "ports": net_ports() }] },
            "networkPolicyManagement": "s", "envVarsInjectionPolicy": "s",
            "volumeClaimTemplatesPolicy": "s"
        })) })),
        "SandboxWarmPool" => top(json!({
            "spec": { "replicas": "i", "sandboxTemplateRef": { "name": "s" },
                "updateStrategy": { "type": "s" } },
            "status": { "replicas": "i", "readyReplicas": "i", "selector": "s",
                "observedGeneration": "i" }
        })),
        "SandboxClaim" => top(json!({
            "spec": { "warmPoolRef": { "name": "s" },
                "lifecycle": { "shutdownTime": "x", "ttlSecondsAfterFinished": "i", "shutdownPolicy": "s" },
                "additionalPodMetadata": { "labels": "m", "annotations": "m" },
                "env": [{ "name": "s", "value": "s", "containerName": "s" }],
                "volumeClaimTemplates": ["x"] },
            "status": { "conditions": [condition()], "sandbox": { "name": "s", "podIPs": ["s"] } }
        })),
        _ => json!("x"),
    }
}

/// Checks `value` against `schema`, dropping unknown fields (as the
/// decoder does) and naming each at its path (`spec.containers[0].foo`);
/// answers a wrong type as the decoder's error.
pub fn check(
    value: &mut Value,
    schema: &Value,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<(), String> {
    let here = |k: &str| if path.is_empty() { k.to_owned() } else { format!("{path}.{k}") };
    match (schema, &mut *value) {
        (_, Value::Null) => Ok(()),
        (Value::String(t), v) => {
            let ok = match t.as_str() {
                "s" => v.is_string(),
                "i" => v.is_i64() || v.is_u64(),
                "n" => v.is_number(),
                "b" => v.is_boolean(),
                "m" => {
                    v.as_object().is_some_and(|m| m.values().all(|x| x.is_string() || x.is_null()))
                }
                _ => true,
            };
            if ok { Ok(()) } else { Err(type_error(t, v, path)) }
        }
        (Value::Array(item), Value::Array(list)) => {
            for (i, v) in list.iter_mut().enumerate() {
                check(v, &item[0], &format!("{path}[{i}]"), unknown)?;
            }
            Ok(())
        }
        (Value::Object(fields), Value::Object(map)) => {
            let mut gone = Vec::new();
            for (k, v) in map.iter_mut() {
                match fields.get(k) {
                    Some(s) => check(v, s, &here(k), unknown)?,
                    None => {
                        unknown.push(here(k));
                        gone.push(k.clone());
                    }
                }
            }
            for k in gone {
                map.remove(&k);
            }
            Ok(())
        }
        (s, v) => Err(type_error(if s.is_array() { "list" } else { "object" }, v, path)),
    }
}

fn type_error(want: &str, got: &Value, path: &str) -> String {
    let got = match got {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    };
    let want = match want {
        "s" => "string",
        "i" => "int32",
        "n" => "float64",
        "b" => "bool",
        "m" => "map[string]string",
        "list" => "slice",
        other => other,
    };
    format!("json: cannot unmarshal {got} into Go struct field .{path} of type {want}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_named_at_their_path_and_dropped() {
        let mut pod = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "a" },
            "spec": { "containers": [{ "name": "c", "image": "i", "colour": "red" }], "bogus": 1 } });
        let mut unknown = Vec::new();
        check(&mut pod, &of("Pod"), "", &mut unknown).unwrap();
        assert_eq!(unknown, ["spec.bogus", "spec.containers[0].colour"]);
        assert!(pod["spec"].get("bogus").is_none());
    }

    #[test]
    fn a_wrong_type_is_the_decoders_error() {
        let mut pod = json!({ "spec": { "containers": [{ "name": 3 }] } });
        let err = check(&mut pod, &of("Pod"), "", &mut Vec::new()).unwrap_err();
        assert!(err.contains("cannot unmarshal number"), "{err}");
    }
}
