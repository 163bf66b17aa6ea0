//! Server-side printing: a list or watch asked for with `Accept: …;as=Table;
//! v=v1;g=meta.k8s.io` (kubectl's `get` without `-o`) is answered as a
//! `meta.k8s.io/v1` Table, with each kind's columns as the API server
//! prints them (a Pod's READY, STATUS, RESTARTS, AGE, IP, NODE; a
//! Service's TYPE, CLUSTER-IP, PORT(S); a custom resource's
//! `additionalPrinterColumns`: a Sandbox's Ready and Reason, a claim's
//! Ready, Sandbox and Reason, a pool's Ready and Desired; NAME and AGE
//! otherwise), and each row's object as `PartialObjectMetadata` (or the
//! whole object with `includeObject=Object`).

use serde_json::{Value, json};

use super::kinds::Kind;
use crate::common::Clock;

/// Whether an `Accept` header asks for a Table.
pub fn wanted(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| first.contains("as=Table"))
}

/// The API server's short age (`duration.HumanDuration`): `45s`, `3m20s`,
/// `5h`, `2d3h`.
fn age(created: &Value) -> String {
    let Some(at) = created.as_str().and_then(|s| humantime::parse_rfc3339(s).ok()) else {
        return "<unknown>".into();
    };
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(Clock::default().now());
    let s = now.duration_since(at).map(|d| d.as_secs()).unwrap_or(0);
    human(s)
}

/// `duration.HumanDuration` of `s` seconds.
fn human(s: u64) -> String {
    let (m, h) = (s / 60, s / 3600);
    let with = |big: u64, a: &str, small: u64, b: &str| {
        if small == 0 { format!("{big}{a}") } else { format!("{big}{a}{small}{b}") }
    };
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        with(m, "m", s % 60, "s")
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        with(h, "h", m % 60, "m")
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        with(h / 24, "d", h % 24, "h")
    } else if h < 24 * 365 * 2 {
        format!("{}d", h / 24)
    } else if h < 24 * 365 * 8 {
        with(h / 24 / 365, "y", (h / 24) % 365, "d")
    } else {
        format!("{}y", h / 24 / 365)
    }
}

fn column(name: &str, kind: &str, priority: u8) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({ "name": name, "type": kind, "format": format, "description": "", "priority": priority })
}

/// The columns of `kind`, and the cells of one object.
fn columns(kind: &Kind) -> Vec<Value> {
    let s = |n: &str| column(n, "string", 0);
    let wide = |n: &str| column(n, "string", 1);
    match kind.kind {
        "Pod" => vec![
            s("Name"),
            s("Ready"),
            s("Status"),
            column("Restarts", "string", 0),
            s("Age"),
            wide("IP"),
            wide("Node"),
        ],
        "Service" => vec![
            s("Name"),
            s("Type"),
            s("Cluster-IP"),
            s("External-IP"),
            s("Port(s)"),
            s("Age"),
            wide("Selector"),
        ],
        "Secret" => vec![s("Name"), s("Type"), column("Data", "integer", 0), s("Age")],
        "ConfigMap" => vec![s("Name"), column("Data", "integer", 0), s("Age")],
        "NetworkPolicy" => vec![s("Name"), s("Pod-Selector"), s("Age")],
        "Namespace" => vec![s("Name"), s("Status"), s("Age")],
        "Sandbox" => vec![s("Name"), s("Ready"), s("Reason"), column("Age", "date", 0)],
        "SandboxClaim" => {
            vec![s("Name"), s("Ready"), s("Sandbox"), s("Reason"), column("Age", "date", 0)]
        }
        "SandboxWarmPool" => vec![
            s("Name"),
            column("Ready", "integer", 0),
            column("Desired", "integer", 0),
            column("Age", "date", 0),
        ],
        _ => vec![s("Name"), column("Age", "date", 0)],
    }
}

fn selector_text(sel: &Value) -> String {
    let labels = sel["matchLabels"]
        .as_object()
        .or_else(|| sel.as_object().filter(|m| !m.contains_key("matchExpressions")));
    let parts: Vec<String> = labels
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "matchLabels")
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    if parts.is_empty() { "<none>".into() } else { parts.join(",") }
}

fn cells(kind: &Kind, o: &Value) -> Vec<Value> {
    let name = json!(o["metadata"]["name"]);
    let created = age(&o["metadata"]["creationTimestamp"]);
    let or_none = |v: &Value| json!(v.as_str().filter(|s| !s.is_empty()).unwrap_or("<none>"));
    match kind.kind {
        "Pod" => {
            let statuses = o["status"]["containerStatuses"].as_array().cloned().unwrap_or_default();
            let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
            let ready = statuses.iter().filter(|c| c["ready"] == true).count();
            let waiting = statuses
                .iter()
                .find_map(|c| c.pointer("/state/waiting/reason").and_then(Value::as_str));
            let status = if o["metadata"].get("deletionTimestamp").is_some() {
                "Terminating"
            } else {
                waiting.or_else(|| o["status"]["phase"].as_str()).unwrap_or("Pending")
            };
            let restarts: i64 = statuses.iter().filter_map(|c| c["restartCount"].as_i64()).sum();
            vec![
                name,
                json!(format!("{ready}/{total}")),
                json!(status),
                json!(restarts.to_string()),
                json!(created),
                or_none(&o["status"]["podIP"]),
                or_none(&o["spec"]["nodeName"]),
            ]
        }
        "Service" => {
            let ports: Vec<String> = o["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                .collect();
            let ports = if ports.is_empty() { "<none>".to_owned() } else { ports.join(",") };
            vec![
                name,
                json!(o["spec"]["type"]),
                json!(o["spec"]["clusterIP"]),
                json!("<none>"),
                json!(ports),
                json!(created),
                json!(selector_text(&o["spec"]["selector"])),
            ]
        }
        "Secret" => vec![
            name,
            json!(o["type"]),
            json!(o["data"].as_object().map_or(0, |d| d.len())),
            json!(created),
        ],
        "ConfigMap" => {
            vec![name, json!(o["data"].as_object().map_or(0, |d| d.len())), json!(created)]
        }
        "NetworkPolicy" => {
            vec![name, json!(selector_text(&o["spec"]["podSelector"])), json!(created)]
        }
        "Namespace" => vec![name, json!(o["status"]["phase"]), json!(created)],
        "Sandbox" => {
            let ready = o["status"]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
            let get = |k: &str| json!(ready.and_then(|c| c[k].as_str()).unwrap_or(""));
            vec![name, get("status"), get("reason"), json!(created)]
        }
        "SandboxClaim" => {
            let ready = o["status"]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
            let get = |k: &str| json!(ready.and_then(|c| c[k].as_str()).unwrap_or(""));
            let sandbox = json!(o["status"]["sandbox"]["name"].as_str().unwrap_or(""));
            vec![name, get("status"), sandbox, get("reason"), json!(created)]
        }
        "SandboxWarmPool" => {
            vec![
                name,
                o["status"]["readyReplicas"].clone(),
                o["spec"]["replicas"].clone(),
                json!(created),
            ]
        }
        _ => vec![name, json!(created)],
    }
}

fn row(kind: &Kind, o: &Value, whole: bool) -> Value {
    let object = if whole {
        o.clone()
    } else {
        json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"] })
    };
    json!({ "cells": cells(kind, o), "object": object })
}

/// A Table of `objects` at `rv`; `whole`: rows carry whole objects.
pub fn of(kind: &Kind, objects: &[Value], rv: u64, whole: bool) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": { "resourceVersion": rv.to_string() },
        "columnDefinitions": columns(kind),
        "rows": objects.iter().map(|o| row(kind, o, whole)).collect::<Vec<_>>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::kinds::find;

    #[test]
    fn a_pods_row_is_what_kubectl_get_pods_prints() {
        let pod = json!({ "metadata": { "name": "box", "creationTimestamp": Clock::rfc3339(Clock::default().now()) },
            "spec": { "containers": [{ "name": "g" }], "nodeName": "standin" },
            "status": { "phase": "Running", "podIP": "127.1.0.10",
                "containerStatuses": [{ "ready": true, "restartCount": 0 }] } });
        let t = of(find("", "v1", "pods").unwrap(), &[pod], 7, false);
        let cells = &t["rows"][0]["cells"];
        assert_eq!(
            cells.as_array().unwrap()[0..4],
            [json!("box"), json!("1/1"), json!("Running"), json!("0")]
        );
        assert_eq!(cells[5], "127.1.0.10");
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert!(wanted("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
        assert!(!wanted("application/json"));
    }

    #[test]
    fn ages_read_as_the_api_server_prints_them() {
        let ago = |s: u64| json!(Clock::rfc3339(Clock::default().now() - s));
        assert_eq!(age(&ago(5)), "5s");
        assert_eq!(age(&ago(200)), "3m20s");
        assert_eq!(age(&ago(3600)), "60m");
        assert_eq!(human(5 * 3600 + 60), "5h1m");
        assert_eq!(human(5 * 86400), "5d");
        assert_eq!(human(5 * 86400 + 7200), "5d2h");
        assert_eq!(human(30 * 86400), "30d");
    }
}
