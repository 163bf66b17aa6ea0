"""A box's life through the SDK: create with progress and an idempotency
key, get, list, wait_for, extend, pause and resume, stop and start, fork,
remove. One box lives through all of it (and its fork), in order."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

import holm
from holm import errors


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_box_lives_its_whole_life(client: holm.Holm):
    events = []
    key = f"sdk-python-{uuid.uuid4().hex}"
    box = client.create(
        browser=False, expires_after_secs=1800, labels={"suite": "lifecycle"}, idempotency_key=key, on_progress=events.append
    )
    try:
        # Progress: stages as they came, the box last, and it runs.
        kinds = [e["type"] for e in events]
        assert kinds[-1] == "box" and events[-1]["box"]["state"] == "running", kinds
        stages = [e["stage"] for e in events if e["type"] == "stage"]
        assert "container" in stages and "desktop" in stages, stages
        assert box.state == "running" and box.info["spec"]["labels"]["suite"] == "lifecycle"

        # The same key and body answer the same box again; another body is refused.
        again = client.create(
            browser=False, expires_after_secs=1800, labels={"suite": "lifecycle"}, idempotency_key=key
        )
        assert again.id == box.id and again.info.get("replayed") is True
        with pytest.raises(errors.IdempotencyKeyReusedError):
            client.create(browser=False, expires_after_secs=900, idempotency_key=key)

        # Get and list.
        assert client.get(box.id).state == "running"
        assert box.id in {b.id for b in client.boxes()}
        assert box.id in {b["id"] for b in client.list_boxes(state="running", limit=100)["data"]}

        # The lifetime moves later.
        before = when(box.info["expires_at"])
        after = when(box.extend(600)["expires_at"])
        assert (after - before).total_seconds() == pytest.approx(600, abs=2)

        # A file to find again after a stop, a start and in the fork.
        box.write_file("/root/kept.txt", "kept")

        assert box.pause()["state"] == "paused"
        with pytest.raises(errors.NotRunningError):
            box.run("true")
        assert box.resume()["state"] == "running"
        assert box.run("cat /root/kept.txt")["stdout"] == "kept"

        assert box.stop()["state"] == "stopped"
        assert box.wait_for("stopped", 5)["state"] == "stopped"
        assert box.start()["state"] == "running"
        assert box.read_text("/root/kept.txt") == "kept"
        assert box.screens()[0]["ready"] is True

        fork = box.fork(name="the-fork")
        try:
            assert fork.id != box.id and fork.info["forked_from"] == box.id
            assert fork.read_text("/root/kept.txt") == "kept"
        finally:
            assert fork.remove()["state"] == "removed"
    finally:
        removed = box.remove()
    assert removed["state"] == "removed"
    with pytest.raises(errors.HolmError) as e:
        box.run("true")
    assert e.value.code in ("not_running", "not_found")
