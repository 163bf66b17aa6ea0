"""Screens, screenshots and the whole input grammar, against the events page
in the desk's Chromium: each action is checked by what the page saw (the
DOM events, their screen points and modifiers), not by the call returning."""

from __future__ import annotations

import holm
from holm import actions as a
from holm import png

from conftest import clear_log, element_center, page_log, page_origin, wait_until


def kinds(box: holm.Box, *wanted: str):
    return [e for e in page_log(box) if e["type"] in wanted]


def test_screens_and_screenshots_say_what_they_are(desk: holm.Box):
    screens = desk.screens()
    assert len(screens) == 1 and screens[0]["ready"]
    w, h = screens[0]["width"], screens[0]["height"]
    assert desk.screen(0)["width"] == w
    shot = desk.screenshot()
    assert (shot.format, shot.width, shot.height, shot.scale, shot.region) == ("png", w, h, 1.0, (0, 0, w, h))
    assert shot.data.startswith(b"\x89PNG") and shot.frame
    img = png.decode(shot.data)
    assert (img.width, img.height) == (w, h)

    half = desk.screenshot(max_width=w // 2, format="jpeg", quality=50)
    assert half.format == "jpeg" and half.width == w // 2 and half.scale == 0.5
    assert half.data[:2] == b"\xff\xd8"
    part = desk.screenshot(region=(10, 20, 100, 50))
    assert (part.width, part.height, part.region) == (100, 50, (10, 20, 100, 50))
    assert part.to_screen(0, 0) == (10, 20)


def test_an_unchanged_screen_answers_no_image(events: holm.Box):
    shot = events.screenshot(region=(0, 0, 64, 64))
    same = wait_until(
        "two screenshots of a still corner",
        lambda: events.screenshot_if_changed(events.screenshot(region=(0, 0, 64, 64)).frame, region=(0, 0, 64, 64)) is None,
    )
    assert same and shot.frame


def test_clicks_land_where_asked_with_their_button_count_and_modifiers(events: holm.Box):
    go = element_center(events, "#go")
    events.click(go["x"], go["y"])
    click = wait_until("the click", lambda: kinds(events, "click"))[-1]
    assert (click["x"], click["y"], click["button"]) == (go["x"], go["y"], 0)
    assert events.evaluate("document.getElementById('out').textContent")["value"] == "clicked 1"

    events.double_click(go["x"], go["y"])
    assert wait_until("the double click", lambda: kinds(events, "dblclick"))
    events.right_click(go["x"] + 5, go["y"])
    menu = wait_until("the context menu", lambda: kinds(events, "contextmenu"))[-1]
    assert menu["button"] == 2 and menu["x"] == go["x"] + 5
    events.click(go["x"], go["y"], button="middle")
    assert wait_until("the middle click", lambda: [e for e in kinds(events, "auxclick") if e["button"] == 1])
    events.click(go["x"], go["y"], count=3, modifiers=["shift"])
    triple = wait_until("the triple click", lambda: [e for e in kinds(events, "click") if e["detail"] == 3])[-1]
    assert triple["mods"] == ["shift"]


def test_move_press_release_and_drag(events: holm.Box):
    origin = page_origin(events)
    x, y = origin["x"] + 500, origin["y"] + 300
    events.input([a.move(x, y)])
    assert wait_until("the move", lambda: [e for e in kinds(events, "mousemove") if (e["x"], e["y"]) == (x, y)])
    assert events.cursor() == {"screen": 0, "x": x, "y": y}
    events.input([a.mouse_down(x, y), a.mouse_up(x + 40, y + 10)])
    downs = wait_until("press and release", lambda: kinds(events, "mousedown", "mouseup"))
    assert [(e["type"], e["x"], e["y"]) for e in downs[-2:]] == [("mousedown", x, y), ("mouseup", x + 40, y + 10)]
    events.drag([(x, y), (x + 100, y + 50), (x + 200, y + 60)])
    seen = wait_until("the drag", lambda: len(kinds(events, "mousedown", "mouseup")) >= 4 and kinds(events, "mousedown", "mouseup"))
    assert (seen[-2]["x"], seen[-1]["x"], seen[-1]["y"]) == (x, x + 200, y + 60)


def test_the_wheel_scrolls_the_page(events: holm.Box):
    origin = page_origin(events)
    events.scroll(origin["x"] + 400, origin["y"] + 300, dy=3)
    wheel = wait_until("the wheel", lambda: kinds(events, "wheel"))
    assert all(e["dy"] == 1 for e in wheel)
    assert wait_until("the page to scroll", lambda: events.evaluate("window.scrollY")["value"] > 0)
    events.input([a.scroll(origin["x"] + 400, origin["y"] + 300, dx=2)])
    assert wait_until("the sideways wheel", lambda: [e for e in kinds(events, "wheel") if e["dx"] == 1])
    events.input([a.scroll(origin["x"] + 400, origin["y"] + 300, dy=1, modifiers=["shift"])])
    assert wait_until("the wheel with shift held", lambda: [e for e in kinds(events, "wheel") if e["mods"] == ["shift"]])


def test_typing_keys_chords_holds_and_waits(events: holm.Box):
    field = element_center(events, "#field")
    events.click(field["x"], field["y"])
    events.type("héllo wörld")
    assert wait_until("the text", lambda: events.evaluate("document.getElementById('field').value")["value"] == "héllo wörld")
    events.key("ctrl+a")
    events.key("BackSpace")
    assert wait_until("the field to empty", lambda: events.evaluate("document.getElementById('field').value")["value"] == "")
    events.input([a.key_down("shift"), a.key("x"), a.key_up("shift"), a.hold("y", 300), a.wait(50), a.key("z", repeat=2)])
    assert wait_until("XYZ", lambda: events.evaluate("document.getElementById('field').value")["value"].startswith("X"))
    value = events.evaluate("document.getElementById('field').value")["value"]
    assert value.startswith("Xy") and value.endswith("zz"), value
    downs = [e for e in kinds(events, "keydown") if e["key"] == "y"]
    assert downs and [e for e in kinds(events, "keyup") if e["key"] == "y"]


def test_act_then_see_answers_the_screen_after_the_actions(events: holm.Box):
    field = element_center(events, "#field")
    shot = events.act_and_see(
        [a.click(field["x"], field["y"]), a.type("seen")], settle={"quiet_ms": 100, "timeout_ms": 2000}, max_width=640
    )
    assert shot.settled is not None and shot.width == 640
    assert events.evaluate("document.getElementById('field').value")["value"] == "seen"
    # Points taken from that downscaled image map back to the screen.
    go = element_center(events, "#go")
    clear_log(events)
    events.input([a.click(round(go["x"] * shot.scale), round(go["y"] * shot.scale))], coordinate_space={"scale": shot.scale})
    click = wait_until("the scaled click", lambda: kinds(events, "click"))[-1]
    assert abs(click["x"] - go["x"]) <= 2 and abs(click["y"] - go["y"]) <= 2
