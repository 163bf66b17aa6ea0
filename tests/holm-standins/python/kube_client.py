"""The official Kubernetes Python client (pinned in requirements.txt)
against holm's Kubernetes API stand-in, unchanged: it reads the kubeconfig
named by KUBECONFIG, and runs pods of the image KUBE_IMAGE (which has
`sleep`). Each check prints a line; any failure raises and exits non-zero.
It also drives agent-sandbox's Sandbox through CustomObjectsApi. Every
wait is on a watch's events, never on time."""

import json
import os
import uuid

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config()
core, net, custom = client.CoreV1Api(), client.NetworkingV1Api(), client.CustomObjectsApi()
ns, image, run = "default", os.environ["KUBE_IMAGE"], uuid.uuid4().hex[:10]


def pod(name, role):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"run": run, "role": role}),
        spec=client.V1PodSpec(
            restart_policy="Never",
            containers=[client.V1Container(name="main", image=image, command=["sleep", "infinity"])],
        ),
    )


def refused(call, code, reason):
    try:
        call()
    except ApiException as e:
        body = json.loads(e.body)
        assert e.status == code, (e.status, e.body)
        assert body["kind"] == "Status" and body["status"] == "Failure", body
        assert body["reason"] == reason and body["code"] == code, body
        return body
    raise AssertionError(f"expected {code} {reason}")


a = core.create_namespaced_pod(ns, pod(f"a-{run}", "a"))
b = core.create_namespaced_pod(ns, pod(f"b-{run}", "b"))
assert a.status.phase == "Pending", a.status.phase
secret = core.create_namespaced_secret(ns, client.V1Secret(
    metadata=client.V1ObjectMeta(name=f"s-{run}", labels={"run": run}), string_data={"k": "v"}))
assert secret.data == {"k": "dg=="} and secret.type == "Opaque", secret
policy = net.create_namespaced_network_policy(ns, client.V1NetworkPolicy(
    metadata=client.V1ObjectMeta(name=f"p-{run}", labels={"run": run}),
    spec=client.V1NetworkPolicySpec(pod_selector=client.V1LabelSelector(match_labels={"run": run}))))
assert policy.spec.policy_types == ["Ingress"], policy.spec.policy_types
print("create", a.metadata.name, b.metadata.name)

names = lambda sel: sorted(p.metadata.name for p in core.list_namespaced_pod(ns, label_selector=sel).items)
assert names(f"run={run}") == [a.metadata.name, b.metadata.name]
assert names(f"run={run},role=a") == [a.metadata.name]
assert names(f"run={run},role!=a") == [b.metadata.name]
assert names(f"run={run},role in (b, c)") == [b.metadata.name]
assert names(f"run={run},!role") == []
assert [s.metadata.name for s in core.list_namespaced_secret(ns, label_selector=f"run={run}").items] == [f"s-{run}"]
refused(lambda: core.list_namespaced_pod(ns, label_selector="role in (a"), 400, "BadRequest")
print("list", "by =, !=, in, exists")

# Both pods become Running: waited for on a watch from the list's version.
listed = core.list_namespaced_pod(ns, label_selector=f"run={run}")
running, ips = set(), {}
w = watch.Watch()
for ev in w.stream(core.list_namespaced_pod, ns, label_selector=f"run={run}",
                   resource_version=listed.metadata.resource_version, timeout_seconds=120):
    p = ev["object"]
    if p.status.phase == "Running":
        running.add(p.metadata.name)
        ips[p.metadata.name] = p.status.pod_ip
    if len(running) == 2:
        w.stop()
assert len(running) == 2, running
print("watch", "both running at", ",".join(sorted(ips.values())))

patched = core.patch_namespaced_pod(a.metadata.name, ns, {"metadata": {"labels": {"patched": "yes"}}})
assert patched.metadata.labels == {"run": run, "role": "a", "patched": "yes"}, patched.metadata.labels
assert int(patched.metadata.resource_version) > int(a.metadata.resource_version)
# The watch from before the patch sees it.
for ev in w.stream(core.list_namespaced_pod, ns, label_selector=f"run={run},patched=yes",
                   resource_version=a.metadata.resource_version, timeout_seconds=60):
    assert ev["type"] == "ADDED" and ev["object"].metadata.labels["patched"] == "yes", ev["type"]
    w.stop()
print("patch", patched.metadata.resource_version)

stale = core.read_namespaced_pod(b.metadata.name, ns)
core.patch_namespaced_pod(b.metadata.name, ns, {"metadata": {"labels": {"moved": "on"}}})
stale.metadata.labels["late"] = "write"
body = refused(lambda: core.replace_namespaced_pod(b.metadata.name, ns, stale), 409, "Conflict")
assert "the object has been modified" in body["message"], body
assert body["details"] == {"name": b.metadata.name, "kind": "pods"}, body
print("conflict", body["reason"])

refused(lambda: core.read_namespaced_pod("nobody-" + run, ns), 404, "NotFound")
refused(lambda: core.create_namespaced_pod(ns, pod(a.metadata.name, "a")), 409, "AlreadyExists")
bad = pod(f"c-{run}", "c")
bad.spec.containers[0].image = None
invalid = refused(lambda: core.create_namespaced_pod(ns, bad), 422, "Invalid")
assert invalid["details"]["causes"][0]["field"] == "spec.containers[0].image", invalid
print("errors", "NotFound AlreadyExists Invalid")

for p in (a, b):
    core.delete_namespaced_pod(p.metadata.name, ns)
core.delete_namespaced_secret(f"s-{run}", ns)
net.delete_namespaced_network_policy(f"p-{run}", ns)
gone = set()
for ev in w.stream(core.list_namespaced_pod, ns, label_selector=f"run={run}",
                   resource_version=patched.metadata.resource_version, timeout_seconds=120):
    if ev["type"] == "DELETED":
        gone.add(ev["object"].metadata.name)
    if len(gone) == 2:
        w.stop()
assert names(f"run={run}") == [], names(f"run={run}")
print("delete", len(gone))

# agent-sandbox's Sandbox, a custom resource, through CustomObjectsApi.
group, version, plural = "agents.x-k8s.io", "v1beta1", "sandboxes"
sb = custom.create_namespaced_custom_object(group, version, ns, plural, {
    "apiVersion": f"{group}/{version}", "kind": "Sandbox",
    "metadata": {"name": f"sb-{run}", "labels": {"run": run}},
    "spec": {"podTemplate": {"spec": {"containers": [
        {"name": "main", "image": image, "command": ["sleep", "infinity"]}]}}},
})
assert sb["metadata"]["generation"] == 1 and "status" not in sb, sb
listed = custom.list_namespaced_custom_object(group, version, ns, plural, label_selector=f"run={run}")
assert [i["metadata"]["name"] for i in listed["items"]] == [f"sb-{run}"], listed
assert listed["items"][0]["kind"] == "Sandbox", "a custom resource's list items carry their kind"
for ev in w.stream(custom.list_namespaced_custom_object, group, version, ns, plural,
                   label_selector=f"run={run}", resource_version=listed["metadata"]["resourceVersion"],
                   timeout_seconds=120):
    ready = [c for c in ev["object"].get("status", {}).get("conditions", []) if c["type"] == "Ready"]
    if ready and ready[0]["status"] == "True":
        assert ready[0]["reason"] == "DependenciesReady", ready
        w.stop()
stale = custom.get_namespaced_custom_object(group, version, ns, plural, f"sb-{run}")
moved = custom.patch_namespaced_custom_object(group, version, ns, plural, f"sb-{run}",
                                              {"metadata": {"labels": {"moved": "on"}}})
assert moved["metadata"]["labels"]["moved"] == "on", moved
stale["metadata"]["labels"]["late"] = "write"
body = refused(lambda: custom.replace_namespaced_custom_object(group, version, ns, plural, f"sb-{run}", stale),
               409, "Conflict")
assert body["details"] == {"name": f"sb-{run}", "group": group, "kind": plural}, body
custom.delete_namespaced_custom_object(group, version, ns, plural, f"sb-{run}")
for ev in w.stream(core.list_namespaced_pod, ns, field_selector=f"metadata.name=sb-{run}",
                   resource_version=moved["metadata"]["resourceVersion"], timeout_seconds=120):
    if ev["type"] == "DELETED":
        w.stop()
print("custom", "Sandbox ready, patched, conflict, deleted with its pod")
