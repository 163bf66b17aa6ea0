"""Anthropic's computer-use tool on a box, driven by Anthropic's own Python
SDK (pinned): an agent loop as Anthropic's docs write it talks to a
stand-in of the Messages API on loopback, which answers recorded tool
inputs (recorded/anthropic_tool_uses.json: one of every action of
computer_20251124, zoom included) and checks each tool result the SDK sends
back. The events page then says what the box did; coordinates go through
the tool's scaling, since the desk's screen (1920x1080) is larger than the
model takes."""

from __future__ import annotations

import base64
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

import anthropic

import holm
from holm.compat.anthropic import BETA, TOOL_TYPE, AnthropicComputer, AsyncAnthropicComputer, image_size, scale_for

from conftest import HERE, element_center, page_log, page_origin, wait_until


def png_size(data: bytes):
    return struct.unpack(">II", data[16:24])


class MessagesStandIn:
    """A Messages API on loopback answering scripted assistant turns, and
    keeping every request the SDK sent."""

    def __init__(self, turns: List[Dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: List[Dict[str, Any]] = []
        self.headers: List[Dict[str, str]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                stand_in.requests.append(body)
                stand_in.headers.append({k.lower(): v for k, v in self.headers.items()})
                n = len(stand_in.requests)
                content = stand_in.turns.pop(0) if stand_in.turns else [{"type": "text", "text": "done"}]
                answer = {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def recorded(points: Dict[str, List[int]]) -> List[Dict[str, Any]]:
    """The recorded tool inputs, their `$name` points filled in (in the
    model's image pixels, where the page's elements are now)."""
    text = (HERE / "recorded" / "anthropic_tool_uses.json").read_text()
    for name, value in points.items():
        text = text.replace(f'"${name}"', json.dumps(value))
    return json.loads(text)["tool_uses"]


def test_every_action_through_anthropics_sdk(events: holm.Box):
    screen = events.screen(0)
    scale = scale_for(screen["width"], screen["height"])
    assert scale < 1, "the desk's screen is larger than the model takes, so the tool scales"
    iw, ih = image_size(screen["width"], screen["height"], scale)

    def img(p):
        return [round(p["x"] * scale), round(p["y"] * scale)]

    field, go = element_center(events, "#field"), element_center(events, "#go")
    origin = page_origin(events)
    spot = {"x": origin["x"] + 600, "y": origin["y"] + 400}
    to = {"x": origin["x"] + 700, "y": origin["y"] + 450}
    points = {"field": img(field), "go": img(go), "spot": img(spot), "to": img(to)}
    sx, sy = points["spot"]
    points["zoom"] = [sx - 50, sy - 40, sx + 50, sy + 40]
    inputs = recorded(points)
    actions = {u["action"] for u in inputs}
    assert actions == {
        "screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
        "left_click_drag", "left_mouse_down", "left_mouse_up", "mouse_move", "scroll", "type", "key",
        "hold_key", "wait", "cursor_position", "zoom",
    }
    turns = [[{"type": "tool_use", "id": f"toolu_{i}", "name": "computer", "input": u}] for i, u in enumerate(inputs)]
    stand_in = MessagesStandIn(turns)
    try:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=stand_in.url, max_retries=0)
        computer = AnthropicComputer(events)
        # The loop as Anthropic's docs write it.
        messages: List[Any] = [{"role": "user", "content": "Fill in the form."}]
        while True:
            response = client.beta.messages.create(
                model="claude-sonnet-4-6", max_tokens=1024, tools=[computer.tool()], betas=[BETA], messages=messages
            )
            messages.append({"role": "assistant", "content": response.content})
            uses = [b for b in response.content if b.type == "tool_use"]
            if not uses:
                break
            messages.append({"role": "user", "content": [computer.tool_result(b) for b in uses]})
    finally:
        stand_in.close()

    # What the SDK sent: the tool, the beta, and a result per tool use.
    first = stand_in.requests[0]
    assert first["tools"] == [
        {"type": TOOL_TYPE, "name": "computer", "display_width_px": iw, "display_height_px": ih, "enable_zoom": True}
    ]
    assert BETA in stand_in.headers[0]["anthropic-beta"]
    results = {}
    for body in stand_in.requests[1:]:
        last = body["messages"][-1]
        assert last["role"] == "user"
        for block in last["content"]:
            results[block["tool_use_id"]] = block
    assert len(results) == len(inputs)
    by_action = {u["action"]: results[f"toolu_{i}"] for i, u in enumerate(inputs)}
    for action, result in by_action.items():
        assert not result.get("is_error"), (action, result)
    shot = base64.b64decode(by_action["screenshot"]["content"][0]["source"]["data"])
    assert png_size(shot) == (iw, ih)
    after_click = base64.b64decode(by_action["left_click"]["content"][0]["source"]["data"])
    assert png_size(after_click) == (iw, ih)
    zoom_input = [u for u in inputs if u["action"] == "zoom"][0]
    x0, y0, x1, y1 = zoom_input["region"]
    zoomed = base64.b64decode(by_action["zoom"]["content"][0]["source"]["data"])
    zw, zh = png_size(zoomed)
    assert abs(zw - round((x1 - x0) / scale)) <= 2 and abs(zh - round((y1 - y0) / scale)) <= 2, (zw, zh)
    cursor_text = by_action["cursor_position"]["content"][0]["text"]
    cx, cy = (int(part.split("=")[1]) for part in cursor_text.split(","))
    assert abs(cx - points["spot"][0]) <= 1 and abs(cy - points["spot"][1]) <= 1, cursor_text

    # What the box did, as the page saw it (screen pixels, within rounding).
    log = page_log(events)

    def near(e, p, slack=2):
        return abs(e["x"] - p["x"]) <= slack and abs(e["y"] - p["y"]) <= slack

    clicks = [e for e in log if e["type"] == "click"]
    assert any(near(e, field) and e["detail"] == 1 and e["mods"] == [] for e in clicks)
    assert any(near(e, go) and e["mods"] == ["shift"] for e in clicks), "left_click with text: shift"
    assert any(e["type"] == "dblclick" and near(e, go) for e in log)
    assert any(e["detail"] == 3 and near(e, field) for e in clicks), "triple_click"
    assert any(e["type"] == "contextmenu" and e["button"] == 2 and near(e, spot) for e in log)
    assert any(e["type"] == "auxclick" and e["button"] == 1 and near(e, spot) for e in log)
    downs = [e for e in log if e["type"] in ("mousedown", "mouseup")]
    assert any(d["type"] == "mousedown" and near(d, spot) for d in downs) and any(d["type"] == "mouseup" and near(d, to) for d in downs)
    wheel = [e for e in log if e["type"] == "wheel"]
    assert any(e["dy"] == 1 and e["mods"] == [] for e in wheel) and any(e["mods"] == ["shift"] for e in wheel)
    keys = [e for e in log if e["type"] == "keydown"]
    assert any(e["key"] == "a" and e["mods"] == ["ctrl"] for e in keys)
    assert any(e["key"] == "Shift" for e in keys) and any(e["key"] == "Shift" for e in log if e["type"] == "keyup")
    assert events.evaluate("document.getElementById('field').value")["value"] == "hello claude"


def test_refused_inputs_are_error_results_and_change_nothing(events: holm.Box):
    computer = AnthropicComputer(events)
    computer.tool()
    w, h = computer._tool()["display_width_px"], computer._tool()["display_height_px"]
    for bad in (
        {"action": "left_click", "coordinate": [w + 10, 5]},
        {"action": "left_click", "coordinate": [-1, 5]},
        {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "sideways", "scroll_amount": 1},
        {"action": "type"},
        {"action": "fly"},
        {"action": "zoom", "region": [10, 10, 5, 5]},
    ):
        result = computer.tool_result({"type": "tool_use", "id": "toolu_bad", "name": "computer", "input": bad})
        assert result["is_error"] is True and isinstance(result["content"], str), bad
    assert [e for e in page_log(events) if e["type"] in ("click", "wheel", "keydown")] == []


def test_the_async_executor_runs_actions_too(events: holm.Box):
    import asyncio

    async def main() -> List[Dict[str, Any]]:
        async with holm.AsyncHolm() as c:
            computer = AsyncAnthropicComputer(c.box(events.id))
            tool = await computer.tool()
            assert tool["type"] == TOOL_TYPE
            return await computer({"action": "mouse_move", "coordinate": [100, 100]})

    blocks = asyncio.run(main())
    assert blocks[0]["type"] == "image"
    moved = wait_until("the move", lambda: [e for e in page_log(events) if e["type"] == "mousemove"])
    scale = scale_for(events.screen(0)["width"], events.screen(0)["height"])
    assert abs(moved[-1]["x"] - round(100 / scale)) <= 2
