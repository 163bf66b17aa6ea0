"""The suite's shared parts: the server (holmd at HOLM_SERVER_URL with
HOLM_SERVER_TOKEN, started by tests/holm-e2e/tests/sdk_python.rs), and the
boxes the tests share where they do not conflict:

- `desk`: a box with Chromium, showing the events page (pages/events.html),
  for input, page tools, the bridge and the drop-in computers;
- `plain`: a box without a browser, for commands, files, the terminal,
  windows, the clipboard, viewers, recordings and the timeline.

Both are made at once when the session starts, and removed at its end.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import holm

HERE = Path(__file__).resolve().parent
SDK = HERE.parent
ROOT = SDK.parents[1]
EVENTS_PAGE = "/tmp/holm-events.html"
EVENTS_URL = "file://" + EVENTS_PAGE


def pytest_configure(config: Any) -> None:
    missing = [v for v in ("HOLM_SERVER_URL", "HOLM_SERVER_TOKEN") if not os.environ.get(v)]
    if missing:
        raise pytest.UsageError(
            f"the suite runs against a holmd: set {', '.join(missing)} "
            "(cargo test -p holm-e2e --test sdk_python starts one and sets them)"
        )


@pytest.fixture(scope="session")
def client() -> Iterator[holm.Holm]:
    with holm.Holm() as c:
        yield c


class Boxes:
    """The shared boxes, made in parallel on first use."""

    def __init__(self, client: holm.Holm) -> None:
        self.client = client
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.futures = {
            "desk": self.pool.submit(self.make_desk),
            "plain": self.pool.submit(client.create, browser=False, labels={"suite": "plain"}),
        }

    def make_desk(self) -> holm.Box:
        box = self.client.create(screen_size="1920x1080", labels={"suite": "desk"})
        box.write_file(EVENTS_PAGE, (HERE / "pages" / "events.html").read_bytes())
        box.navigate(EVENTS_URL)
        return box

    def get(self, name: str) -> holm.Box:
        return self.futures[name].result()

    def close(self) -> None:
        for f in self.futures.values():
            try:
                f.result().remove()
            except Exception as e:  # a failed create already failed its tests
                print(f"removing a shared box: {e}", file=sys.stderr)
        self.pool.shutdown()


@pytest.fixture(scope="session")
def boxes(client: holm.Holm) -> Iterator[Boxes]:
    b = Boxes(client)
    yield b
    b.close()


@pytest.fixture(scope="session")
def desk(boxes: Boxes) -> holm.Box:
    return boxes.get("desk")


@pytest.fixture(scope="session")
def plain(boxes: Boxes) -> holm.Box:
    return boxes.get("plain")


def page_log(box: holm.Box) -> List[Dict[str, Any]]:
    """What the events page saw since it was last cleared."""
    return json.loads(box.evaluate("JSON.stringify(window.log)")["value"])


def clear_log(box: holm.Box) -> None:
    box.evaluate(
        "window.log = []; window.clicks = 0; document.getElementById('field').value = '';"
        " document.getElementById('out').textContent = 'not clicked'; window.scrollTo(0, 0); 0"
    )


@pytest.fixture()
def events(desk: holm.Box) -> holm.Box:
    """The desk with the events page in front, focused, its log empty."""
    tabs = desk.tabs()
    page = [t for t in tabs if t["url"].startswith(EVENTS_URL)]
    if page:
        desk.activate_tab(page[0]["id"])
    else:
        desk.navigate(EVENTS_URL)
    for w in desk.windows():
        if "chrom" in (w.get("app") or "").lower():
            desk.focus_window(w["id"])
    clear_log(desk)
    return desk


def page_origin(box: holm.Box) -> Dict[str, int]:
    """Where the page's (0, 0) is on the screen: a pointer move tells, as its
    event carries both the screen and the page point."""
    box.move(600, 400)
    moved = wait_until("the page to see the pointer move", lambda: [e for e in page_log(box) if e["type"] == "mousemove"])
    e = moved[-1]
    return {"x": e["x"] - e["cx"], "y": e["y"] - e["cy"]}


def element_center(box: holm.Box, selector: str) -> Dict[str, int]:
    """The screen point at the middle of an element of the events page."""
    origin = page_origin(box)
    rect = json.loads(
        box.evaluate(f"JSON.stringify(document.querySelector({json.dumps(selector)}).getBoundingClientRect())")["value"]
    )
    return {"x": origin["x"] + int(rect["x"] + rect["width"] / 2), "y": origin["y"] + int(rect["y"] + rect["height"] / 2)}


def wait_until(what: str, check: Any, timeout: float = 20.0, every: float = 0.1) -> Any:
    """Polls `check` until it answers something true (an event the test
    waits on, such as a window appearing), or fails naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}; last saw {last!r}")
