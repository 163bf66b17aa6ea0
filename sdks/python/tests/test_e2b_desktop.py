"""E2B Desktop's README example, with only its import changed, runs on holm;
the box then holds what it did (the launched browser's window in front,
the file it wrote, a stream URL that opens, the screenshot of its screen).
And every method the compat layer copies takes the arguments E2B Desktop's
own `Sandbox` (the pinned e2b-desktop package) takes."""

from __future__ import annotations

import inspect
import os
import runpy
import struct

import httpx
import pytest
from e2b_desktop import Sandbox as E2BSandbox
from e2b_desktop.main import _VNCServer
from e2b.sandbox_sync.commands.command import Commands as E2BCommands
from e2b.sandbox_sync.filesystem.filesystem import Filesystem as E2BFilesystem

from holm.compat import e2b_desktop as compat

from conftest import HERE

METHODS = [
    "create", "screenshot", "left_click", "double_click", "right_click", "middle_click", "scroll",
    "move_mouse", "mouse_press", "mouse_release", "get_cursor_position", "get_screen_size", "write",
    "press", "drag", "wait", "open", "launch", "get_current_window_id", "get_application_windows",
    "get_window_title", "kill", "set_timeout",
]


def params(fn):
    return {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


@pytest.mark.parametrize(
    "theirs, ours",
    [(getattr(E2BSandbox, m), getattr(compat.Sandbox, m)) for m in METHODS]
    + [
        (E2BCommands.run, compat.Commands.run),
        (E2BFilesystem.read, compat.Filesystem.read),
        (E2BFilesystem.write, compat.Filesystem.write),
        (E2BFilesystem.remove, compat.Filesystem.remove),
        (E2BFilesystem.list, compat.Filesystem.list),
        (E2BFilesystem.exists, compat.Filesystem.exists),
        (E2BFilesystem.make_dir, compat.Filesystem.make_dir),
        (E2BFilesystem.rename, compat.Filesystem.rename),
        (_VNCServer.start, compat.Stream.start),
        (_VNCServer.stop, compat.Stream.stop),
        (_VNCServer.get_url, compat.Stream.get_url),
        (_VNCServer.get_auth_key, compat.Stream.get_auth_key),
    ],
    ids=lambda f: getattr(f, "__qualname__", str(f)),
)
def test_each_method_takes_e2b_desktops_arguments(theirs, ours):
    mine = params(ours)
    accepts_more = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(ours).parameters.values())
    for name, default in params(theirs).items():
        assert name in mine or accepts_more, f"{ours.__qualname__} lacks {name}"
        if name in mine and default is not inspect.Parameter.empty:
            assert mine[name] == default, f"{ours.__qualname__}({name}) defaults to {mine[name]!r}, E2B's to {default!r}"
    # The same positions, for calls such as desktop.move_mouse(100, 200).
    order = list(mine)
    for i, name in enumerate(params(theirs)):
        if name in mine:
            assert order.index(name) == i, f"{ours.__qualname__}: {name} is argument {order.index(name)}, E2B's {i}"


def test_the_readme_example_runs_with_the_import_changed(tmp_path):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        scope = runpy.run_path(str(HERE / "e2b" / "readme_example.py"))
    finally:
        os.chdir(cwd)
    desktop = scope["desktop"]
    box = desktop.box
    try:
        # The launched browser's window is the one in front.
        front = [w for w in box.windows() if w["focused"]]
        assert front and "chrom" in front[0]["app"].lower(), box.windows()
        assert scope["window_id"] == str(front[0]["id"]) and scope["title"] == front[0]["title"]
        assert scope["window_ids"] == []  # no Firefox in the box
        # The stream's URL, with its auth key, opens the box's viewer.
        url = desktop.stream.get_url(auth_key=scope["auth_key"])
        assert scope["auth_key"] in url
        assert httpx.get(url.split("#", 1)[0], timeout=30).status_code == 200
        # The file it wrote, and the command that listed it.
        assert box.read_text("/home/user/index.js") == "console.log('hello')"
        assert "index.js" in scope["out"].stdout and scope["out"].exit_code == 0
        # The screenshot saved locally is a PNG of the screen (E2B's default size).
        data = (tmp_path / "screenshot.png").read_bytes()
        assert data.startswith(b"\x89PNG") and struct.unpack(">II", data[16:24]) == (1024, 768)
        assert desktop.get_screen_size() == (1024, 768)
        assert desktop.get_cursor_position() == (200, 200)
        with pytest.raises(compat.CommandExitException) as e:
            desktop.commands.run("exit 4")
        assert e.value.exit_code == 4
        desktop.stream.stop()
        assert all(g.get("revoked_at") for g in box.viewers() if g.get("label") == "e2b-desktop stream")
    finally:
        assert desktop.kill() is True
    assert box.refresh()["state"] == "removed"
