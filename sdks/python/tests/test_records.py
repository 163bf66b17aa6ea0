"""Viewers, takeover and handoff, recordings, the timeline and traces, the
accessibility tree, windows, the clipboard and the guest's own credential,
in the plain box; and the server's runtimes, images and apps."""

from __future__ import annotations

import json

import httpx
import pytest

import holm
from holm import errors

from conftest import wait_until


def test_viewers_are_made_listed_and_revoked(plain: holm.Box):
    grant = plain.create_viewer(0, mode="view", expires_after_secs=300, label="sdk")
    assert grant["mode"] == "view" and "#token=" in grant["url"]
    assert grant["id"] in {g["id"] for g in plain.viewers()}
    page = httpx.get(grant["url"].split("#", 1)[0], timeout=30)
    assert page.status_code == 200
    revoked = plain.revoke_viewer(grant["id"])
    assert revoked["revoked_at"]
    control = plain.create_viewer(0, mode="control")
    assert control["mode"] == "control"
    plain.revoke_viewer(control["id"])
    events = plain.viewer_events(after=0, timeout_secs=0)
    assert "events" in events and isinstance(events["events"], list)


def test_asking_for_help_answers_a_takeover_url_and_waits_bounded(plain: holm.Box):
    handoff = plain.ask_for_help("press the button for me", 0, expires_after_secs=300)
    assert handoff["state"] == "waiting" and handoff["takeover_url"]
    assert handoff["help"]["reason"] == "press the button for me"
    still = plain.handoff(wait_for="handed_back", timeout_secs=1)
    assert still["state"] == "waiting"
    # A person who opens the link could take control; here nobody does, so
    # the agent's input still goes in.
    plain.key("shift")


def test_a_recording_is_an_mp4_of_the_screen(plain: holm.Box):
    rec = plain.start_recording(0, fps=5)
    assert rec["state"] == "recording" and rec["screen"] == 0
    plain.spawn(["xterm", "-e", "sleep", "2"])  # something moves on the screen
    done = plain.stop_recording(0)
    assert done["file"] == rec["file"] and done["state"] != "recording" and done["bytes"] > 0
    video = plain.download_recording(done["file"])
    assert video[4:8] == b"ftyp" and len(video) == done["bytes"]
    assert done["file"] in {r["file"] for r in plain.recordings()}
    plain.remove_recording(done["file"])
    assert done["file"] not in {r["file"] for r in plain.recordings()}


def test_the_timeline_and_traces_tell_what_was_done(plain: holm.Box):
    plain.run("echo timeline-mark")
    steps = plain.steps()
    assert any(s["path"].endswith("/commands/run") for s in steps)
    page = plain.timeline(limit=1)
    assert len(page["data"]) == 1
    html = plain.export_timeline("html")
    assert html.lstrip().lower().startswith(b"<!doctype html")
    lines = [json.loads(l) for l in plain.export_timeline("jsonl").splitlines() if l.strip()]
    assert lines and "action" in lines[0]
    plain.move(20, 20)
    shots = wait_until("a step with the screenshot after it", lambda: [s for s in plain.steps() if s.get("screenshot")])
    image = plain.timeline_screenshot(shots[-1]["screenshot"]["id"])
    assert image[:4] == b"\x89PNG" or image[:3] == b"\xff\xd8\xff" or image[:4] == b"RIFF"
    traces = plain.traces(limit=1000)["data"]
    assert any(t["path"].endswith("/commands/run") for t in traces)


def test_windows_appear_move_and_close(plain: holm.Box):
    proc = plain.spawn(["xterm", "-title", "sdk-window", "-geometry", "40x10+50+50"])
    try:
        win = wait_until("the xterm window", lambda: [w for w in plain.windows() if w["title"] == "sdk-window"])[0]
        assert "xterm" in (win["app"] or "").lower()
        plain.focus_window(win["id"])
        plain.move_window(win["id"], 300, 200)
        moved = [w for w in plain.windows() if w["id"] == win["id"]][0]
        assert (moved["x"], moved["y"]) != (win["x"], win["y"])
        plain.resize_window(win["id"], 500, 300)
        plain.close_window(win["id"])
        wait_until("the window to close", lambda: not [w for w in plain.windows() if w["id"] == win["id"]])
    finally:
        try:
            plain.kill(proc["id"])
        except errors.NotFoundError:
            pass


def test_the_clipboard_holds_text_and_images(plain: holm.Box):
    plain.set_clipboard("copied by the sdk")
    assert plain.clipboard()["text"] == "copied by the sdk"
    png = plain.screenshot(region=(0, 0, 8, 8)).data
    board = plain.set_clipboard(png=png)
    assert "image/png" in board["types"]


def find(nodes, role, name):
    for n in nodes:
        if n["role"] == role and n["name"] == name:
            return n
        found = find(n.get("children") or [], role, name)
        if found:
            return found
    return None


def test_the_accessibility_tree_of_a_gtk_app(plain: holm.Box):
    proc = plain.spawn(["yad", "--title=sdk-a11y", "--text=pick", "--button=Pressed:0", "--button=Other:1"])
    try:
        win = wait_until("the yad window", lambda: [w for w in plain.windows() if w["title"] == "sdk-a11y"])[0]
        plain.focus_window(win["id"])
        tree = wait_until(
            "the dialog's buttons in the tree",
            lambda: (lambda t: t if find(t["nodes"], "push button", "Pressed") else None)(plain.accessibility()),
            timeout=30,
        )
        assert tree["count"] >= 1
        acted = plain.accessibility_act("click", role="push button", name="Pressed")
        assert acted["node"]
        ended = list(plain.follow(proc["id"]))
        assert ended[-1]["type"] == "exit" and ended[-1]["exit_code"] == 0
    finally:
        try:
            plain.kill(proc["id"])
        except errors.NotFoundError:
            pass


def test_the_guest_credential_opens_only_the_guest(plain: holm.Box):
    access = plain.agent(ttl_secs=60)
    assert access["box_id"] == plain.id
    r = httpx.get(access["url"].rstrip("/") + "/v1/info", headers=access["headers"], timeout=30)
    assert r.status_code == 200 and r.json()["screens"]
    plain.revoke_agent()
    refused = httpx.get(access["url"].rstrip("/") + "/v1/info", headers=access["headers"], timeout=30)
    assert refused.status_code == 401
    assert plain.guest_info()["screens"]


def test_runtimes_images_apps_and_the_server(client: holm.Holm):
    health = client.health()
    assert health["status"] == "ok" and health["version"]
    runtimes = {r["name"]: r for r in client.runtimes()}
    assert "docker" in runtimes and client.runtime("docker")["name"] == "docker"
    with pytest.raises(errors.HolmError) as e:
        client.runtime("no-such-runtime")
    assert e.value.code in ("not_found", "unknown_runtime") and e.value.request_id
    with pytest.raises(errors.HolmError) as e:
        client.add_runtime({"name": "bad", "provider": "no-such-vendor"})
    assert e.value.status and 400 <= e.value.status < 500
    assert "bad" not in {r["name"] for r in client.runtimes()}
    assert any(a["name"] == "firefox" for a in client.apps())
    assert client.images()
    assert client.openapi()["openapi"].startswith("3.")
    assert isinstance(client.prune_images(dry_run=True), list)
