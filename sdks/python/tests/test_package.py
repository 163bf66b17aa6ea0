"""The package itself, without a box: its generated files are fresh, it calls
every route of the snapshot, it reads as Python 3.9, and `pip install` of
the directory gives a working package with the pinned dependency ranges."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zlib
import struct
from pathlib import Path

import holm
from holm import _routes, png

from conftest import ROOT, SDK

SRC = SDK / "src" / "holm"

#: Routes the SDK does not call, and why.
NOT_CALLED = {
    # The server's own secret: holmd's internal route, not a client's.
}


def test_the_generated_files_are_fresh():
    run = subprocess.run(
        [sys.executable, str(SDK / "scripts" / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr


def test_every_route_of_the_snapshot_is_called_and_no_other():
    used = set()
    for path in SRC.glob("_async_*.py"):
        used |= set(re.findall(r"\br\.([A-Z0-9_]+)\b", path.read_text()))
    assert used <= set(_routes.ROUTES), used - set(_routes.ROUTES)
    missing = set(_routes.ROUTES) - used - set(NOT_CALLED)
    assert not missing, f"routes of the snapshot no client method calls: {sorted(missing)}"
    snapshot = json.loads((ROOT / "docs" / "api" / "holmd.openapi.json").read_text())
    count = sum(1 for item in snapshot["paths"].values() for m in item if m != "parameters")
    assert len(_routes.ROUTES) == count


def test_the_sync_and_async_clients_have_the_same_methods():
    for sync, asyn in [(holm.Holm, holm.AsyncHolm), (holm.Box, holm.AsyncBox), (holm.Terminal, holm.AsyncTerminal)]:
        names = {n for n in dir(sync) if not n.startswith("_")}
        anames = {n for n in dir(asyn) if not n.startswith("_")}
        assert names ^ anames <= {"close", "aclose"}, names ^ anames


def test_the_source_reads_as_python_3_9():
    for path in SRC.rglob("*.py"):
        ast.parse(path.read_text(), filename=str(path), feature_version=(3, 9))


def test_every_action_of_the_grammar_has_a_builder():
    variants = json.loads((ROOT / "docs" / "api" / "holmd.openapi.json").read_text())["components"]["schemas"]["Action"]["oneOf"]
    tags = [v["properties"]["type"]["const"] for v in variants]
    assert sorted(tags) == sorted(holm.actions.__all__)
    assert holm.actions.click(3, 4, button="right") == {"type": "click", "x": 3, "y": 4, "button": "right"}
    assert holm.actions.drag([{"x": 1, "y": 2}, {"x": 3, "y": 4}])["path"][1] == {"x": 3, "y": 4}


def test_errors_carry_the_one_shape():
    body = json.dumps({"error": {"code": "file_not_found", "message": "/x: does not exist", "hint": "h", "details": {"path": "/x"}, "request_id": "req_1"}}).encode()
    e = holm._errors.from_answer(404, body, None, "http://h/v1/boxes/b/files/content")
    assert isinstance(e, holm.errors.FileNotFoundError) and isinstance(e, FileNotFoundError)
    assert (e.code, e.message, e.hint, e.details, e.request_id, e.status) == ("file_not_found", "/x: does not exist", "h", {"path": "/x"}, "req_1", 404)
    assert e.to_dict()["error"]["code"] == "file_not_found"
    plain = holm._errors.from_answer(502, b"<html>bad gateway</html>", "req_2", "http://h/v1/x")
    assert isinstance(plain, holm.errors.GuestUnreachableError) and plain.request_id == "req_2"


def test_retry_after_is_read_as_seconds_or_a_date():
    from holm._core import parse_retry_after

    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None
    assert 0 <= parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0 + 1e-9
    retry = holm.Retry(budget=10)
    not_ready = holm.errors.NotReadyError("starting", details={"kind": "browser_starting", "retry_after_ms": 250})
    assert retry.delay(not_ready, "1", 0) == 1.0
    assert retry.delay(not_ready, None, 0) == 0.25
    partial = holm.errors.NotReadyError("screen", details={"kind": "screen_starting", "screen": 0, "performed": 2})
    assert retry.delay(partial, "1", 0) is None, "input that ran part way is never repeated"
    assert retry.delay(holm.errors.ConflictError("no"), "1", 0) is None
    assert holm.Retry(budget=0).delay(not_ready, "1", 0) is None


def _png(width: int, height: int, rows: list, ctype: int = 2, filters=None) -> bytes:
    raw = b"".join(bytes([(filters or [0] * height)[i]]) + rows[i] for i in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, ctype, 0, 0, 0)
    return png.SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_the_png_reader_undoes_every_filter():
    # Row 0 raw; row 1 "Sub" of (10,20,30),(11,22,33); row 2 "Up" adding 1
    # to row 1; row 3 "Average"; row 4 "Paeth".
    rows = [bytes([1, 2, 3, 4, 5, 6]), bytes([10, 20, 30, 1, 2, 3]), bytes([1] * 6), bytes([0] * 6), bytes([0] * 6)]
    img = png.decode(_png(2, 5, rows, filters=[0, 1, 2, 3, 4]))
    assert img.pixel(0, 0) == (1, 2, 3) and img.pixel(1, 0) == (4, 5, 6)
    assert img.pixel(0, 1) == (10, 20, 30) and img.pixel(1, 1) == (11, 22, 33)
    assert img.pixel(0, 2) == (11, 21, 31) and img.pixel(1, 2) == (12, 23, 34)
    # Average: left 0 for the first pixel, (left + up) // 2 after.
    assert img.pixel(0, 3) == (5, 10, 15) and img.pixel(1, 3) == ((5 + 12) // 2, (10 + 23) // 2, (15 + 34) // 2)
    # Paeth on a zero row picks the up pixel for the first, then the nearest.
    assert img.pixel(0, 4) == (5, 10, 15)
    rgba = png.decode(_png(1, 1, [bytes([9, 8, 7, 255])], ctype=6))
    assert rgba.pixel(0, 0) == (9, 8, 7)
    assert img.changed(img) is None


def test_pip_installs_the_directory_offline(tmp_path: Path):
    """`pip install ./sdks/python` builds the package from pyproject.toml (here
    without the index: its dependencies are the suite's own), and what it
    installs imports and names its dependencies with their ranges."""
    target = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(SDK)],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    check = subprocess.run(
        [sys.executable, "-c",
         "import holm, importlib.metadata as m, sys; "
         "assert holm.__file__.startswith(sys.argv[1]), holm.__file__; "
         "print(sorted(m.requires('holm')))", str(target)],
        capture_output=True, text=True, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )
    assert check.returncode == 0, check.stderr
    requires = check.stdout
    assert "httpx<1,>=0.27" in requires and "websockets<17,>=13" in requires, requires
    assert (target / "holm" / "py.typed").exists()
