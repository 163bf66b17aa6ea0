"""A complete screenshot -> decide -> act loop against a box, with the holm
Python SDK and a running holmd (HOLM_SERVER_URL, HOLM_SERVER_TOKEN).

The goal: type a line into a terminal window. The loop looks at the screen,
decides what to do, acts, and looks again. The decision is a tiny rule
(find the window that appeared since the first look, click its middle,
type) so the example runs without a model; the comment in `decide` shows
where a model call goes. It is examples/src/bin/agent_loop.rs, in Python.

    python sdks/python/examples/agent_loop.py
"""

from __future__ import annotations

import time
from typing import List, Optional, Tuple

import holm
from holm import actions as a
from holm import png

#: What the loop types, and where the terminal writes it.
LINE = "hello from the python agent loop"
FILE = "/tmp/agent-loop.txt"
#: The loop looks at a small copy of the screen: cheap to read without an
#: image library, and enough to see a window appear.
LOOK = {"max_width": 320}

Look = Tuple[holm.Screenshot, png.Image]


def look(box: holm.Box) -> Look:
    shot = box.screenshot(**LOOK)
    return shot, png.decode(shot.data)


def decide(first: Look, now: Look, typed: bool) -> Optional[List[holm.types.Action]]:
    """The actions to take now, or None to look again."""
    # A model call goes here: send the screenshot (now[0].base64()) and the
    # goal to a model that answers actions, such as
    #   actions = model.next_actions(GOAL, now[0].data_url())
    # The rule below stands in for it, so the example runs without one.
    if typed:
        return None
    changed = now[1].changed(first[1], tolerance=8)
    if changed is None:
        return None
    shot = now[0]
    x0, y0 = shot.to_screen(changed[0], changed[1])
    x1, y1 = shot.to_screen(changed[2], changed[3])
    if x1 - x0 < 100 or y1 - y0 < 50:
        return None
    # A window at least 100x50 appeared: click its middle and type.
    return [a.click((x0 + x1) // 2, (y0 + y1) // 2), a.type(LINE + "\n")]


def run(box: holm.Box) -> None:
    first = look(box)
    # Something to work with: a terminal that writes what it is typed.
    box.spawn(["xterm", "-geometry", "60x10+200+150", "-e", "sh", "-c", f"stty -echo; exec cat > {FILE}"])
    typed = False
    for step in range(1, 61):
        now = look(box)
        actions = decide(first, now, typed)
        if actions:
            print(f"step {step}: act ({len(actions)} actions)", flush=True)
            box.input(actions)
            typed = True
            continue
        if typed:
            try:
                text = box.read_text(FILE)
            except holm.errors.FileNotFoundError:
                text = ""
            if LINE in text:
                print(f"step {step}: done, {FILE} holds the line", flush=True)
                return
        time.sleep(0.5)
    raise SystemExit("the goal was not reached in 60 steps")


def main() -> None:
    with holm.Holm() as client, client.create(browser=False) as box:
        print(f"box {box.id}", flush=True)
        run(box)


if __name__ == "__main__":
    main()
