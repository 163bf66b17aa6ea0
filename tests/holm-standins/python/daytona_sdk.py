"""Daytona's own Python SDK (pinned in requirements.txt) against holm's
Daytona stand-in, unchanged but for its address (DAYTONA_API_URL and
DAYTONA_API_KEY in the environment). Each check prints a line; any failure
raises and exits non-zero."""

import uuid

from daytona import CreateSandboxFromSnapshotParams, Daytona, DaytonaConfig, DaytonaError, ListSandboxesQuery

run = uuid.uuid4().hex[:12]
daytona = Daytona()

# With the options holm sets (the contract trace compares their fields).
params = CreateSandboxFromSnapshotParams(
    name=f"sdk-{run}",
    labels={"suite": "sdk", "run": run},
    env_vars={"SDK_RUN": run},
    public=False,
    auto_stop_interval=30,
    auto_delete_interval=-1,
)
sbx = daytona.create(params, timeout=120)
assert sbx.state == "started", sbx.state
print("create", sbx.id)

got = daytona.get(sbx.id)
assert got.labels["run"] == run and got.labels["suite"] == "sdk", got.labels
assert got.auto_stop_interval == 30, got.auto_stop_interval
print("get", got.state)

listed = [s.id for s in daytona.list(ListSandboxesQuery(labels={"run": run}, limit=100))]
assert listed == [sbx.id], listed
assert [s.id for s in daytona.list(ListSandboxesQuery(labels={"run": "nobody"}))] == []
print("list", len(listed))

sbx.set_autostop_interval(5)
assert daytona.get(sbx.id).auto_stop_interval == 5
print("timeout", "auto-stop 5 minutes")

preview = sbx.get_preview_link(8765)
assert preview.url.startswith("http://127.0.0.1:") and preview.token, preview
print("preview", "url and token")

sbx.stop()
assert daytona.get(sbx.id).state == "stopped"
sbx.start()
assert daytona.get(sbx.id).state == "started"
print("stop-start", "stopped, started")

try:
    sbx.pause()
    raise AssertionError("a container sandbox was paused")
except DaytonaError as e:
    print("pause", "refused:", str(e).splitlines()[0])

sbx.delete()
try:
    daytona.get(sbx.id)
    raise AssertionError("a deleted sandbox was found")
except DaytonaError as e:
    assert "not found" in str(e).lower(), e
    print("delete", "gone")

try:
    Daytona(DaytonaConfig(api_key="dtn_wrong", api_url=daytona._api_url)).get(sbx.id)
    raise AssertionError("a wrong key was accepted")
except DaytonaError as e:
    print("auth", str(e).splitlines()[0])
