"""E2B's own Python SDK (pinned in requirements.txt) against holm's E2B
stand-in, unchanged but for its address (E2B_API_URL, E2B_SANDBOX_URL and
E2B_API_KEY in the environment). Each check prints a line; any failure
raises and exits non-zero."""

import os
import uuid

from e2b import Sandbox, SandboxState
from e2b.exceptions import AuthenticationException, NotFoundException, SandboxException
from e2b.sandbox.sandbox_api import SandboxQuery

run = uuid.uuid4().hex[:12]

# With the options holm sets (the contract trace compares their fields).
sbx = Sandbox.create(
    template="base",
    timeout=120,
    metadata={"suite": "sdk", "run": run},
    envs={"SDK_RUN": run},
    allow_internet_access=True,
    network={"allow_public_traffic": False},
    lifecycle={"on_timeout": "kill"},
)
print("create", sbx.sandbox_id)

info = Sandbox.get_info(sbx.sandbox_id)
assert info.metadata == {"suite": "sdk", "run": run}, info.metadata
assert info.state.value == "running", info.state
print("get", info.state.value)

other = Sandbox.create(template="base", timeout=120, metadata={"suite": "sdk", "run": run})
states = [SandboxState.RUNNING, SandboxState.PAUSED]
pages, ids = Sandbox.list(query=SandboxQuery(metadata={"run": run}, state=states), limit=1), []
while pages.has_next:
    ids += [s.sandbox_id for s in pages.next_items()]
assert sorted(ids) == sorted([sbx.sandbox_id, other.sandbox_id]), ids
print("list", len(ids), "in pages of 1")
assert Sandbox.list(query=SandboxQuery(metadata={"run": "nobody"})).next_items() == []
other.kill()

sbx.set_timeout(300)
left = (Sandbox.get_info(sbx.sandbox_id).end_at - Sandbox.get_info(sbx.sandbox_id).started_at).total_seconds()
assert 290 <= left <= 310, left
print("timeout", int(left))

assert sbx.pause(keep_memory=True) is True
assert Sandbox.get_info(sbx.sandbox_id).state.value == "paused"
assert sbx.pause() is False, "pausing a paused sandbox is refused (409), which the SDK answers False"
print("pause", "paused; again refused")

resumed = Sandbox.connect(sbx.sandbox_id, timeout=120)
assert resumed.sandbox_id == sbx.sandbox_id
assert Sandbox.get_info(sbx.sandbox_id).state.value == "running"
print("resume", "running")

try:
    Sandbox.create(template="base", timeout=25 * 3600)
    raise AssertionError("a timeout over 24 hours was accepted")
except SandboxException as e:
    assert "Timeout cannot be greater than 24 hours" in str(e), e
    print("limit", str(e))

assert sbx.kill() is True
assert Sandbox.kill(sbx.sandbox_id) is False, "killing a killed sandbox answers 404"
try:
    Sandbox.get_info(sbx.sandbox_id)
    raise AssertionError("a killed sandbox was found")
except NotFoundException:
    print("delete", "gone")

try:
    Sandbox.create(template="base", api_key="e2b_" + "0" * 40)
    raise AssertionError("a wrong key was accepted")
except AuthenticationException as e:
    print("auth", str(e).splitlines()[0])
