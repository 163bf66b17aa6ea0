"""The OpenAI Agents SDK (pinned) runs its own agent loop with
`ComputerTool(HolmComputer(box))`: a scripted model (the SDK's `Model`
interface, so the SDK's Runner executes every call as it would a real
model's) asks for a computer call of every action, and the loop sends each
screenshot back. The events page says what the box did."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

from agents import Agent, ComputerTool, ModelSettings, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseComputerToolCall, ResponseOutputMessage

import holm
from holm.compat.openai_agents import AsyncHolmComputer, HolmComputer

from conftest import element_center, page_log, page_origin


# No traces: they would be sent to OpenAI.
set_tracing_disabled(True)


class ScriptedModel(Model):
    """A model that answers a computer call per scripted action, then a text."""

    def __init__(self, actions: List[Dict[str, Any]]) -> None:
        self.actions = list(actions)
        self.inputs: List[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kw):  # type: ignore[override]
        self.inputs.append(input)
        n = len(self.inputs)
        if self.actions:
            call = ResponseComputerToolCall.model_validate(
                {
                    "id": f"cu_{n}",
                    "call_id": f"call_{n}",
                    "type": "computer_call",
                    "status": "completed",
                    "pending_safety_checks": [],
                    "action": self.actions.pop(0),
                }
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        message = ResponseOutputMessage.model_validate(
            {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "done", "annotations": []}],
            }
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        raise NotImplementedError


def screenshots_sent(model: ScriptedModel) -> List[str]:
    """The screenshots in the model's last input, which holds the whole run."""
    items = model.inputs[-1]
    return [
        item["output"]["image_url"]
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and item.get("type") == "computer_call_output"
    ]


def test_the_sdks_runner_drives_the_box(events: holm.Box):
    field, go = element_center(events, "#field"), element_center(events, "#go")
    origin = page_origin(events)
    spot = {"x": origin["x"] + 600, "y": origin["y"] + 400}
    actions = [
        {"type": "screenshot"},
        {"type": "click", "button": "left", "x": field["x"], "y": field["y"]},
        {"type": "type", "text": "hello agents"},
        {"type": "keypress", "keys": ["CTRL", "A"]},
        {"type": "double_click", "x": go["x"], "y": go["y"]},
        {"type": "click", "button": "right", "x": spot["x"], "y": spot["y"]},
        {"type": "click", "button": "wheel", "x": spot["x"], "y": spot["y"]},
        {"type": "click", "button": "left", "x": go["x"], "y": go["y"], "keys": ["SHIFT"]},
        {"type": "scroll", "x": spot["x"], "y": spot["y"], "scroll_x": 0, "scroll_y": 300},
        {"type": "drag", "path": [{"x": spot["x"], "y": spot["y"]}, {"x": spot["x"] + 80, "y": spot["y"] + 40}]},
        {"type": "move", "x": spot["x"] + 10, "y": spot["y"] + 10},
        {"type": "wait"},
    ]
    model = ScriptedModel(actions)
    computer = HolmComputer(events)
    agent = Agent(name="desk", instructions="Use the computer.", model=model, tools=[ComputerTool(computer)],
                  model_settings=ModelSettings())
    result = Runner.run_sync(agent, "Fill in the form.", max_turns=len(actions) + 2)
    assert result.final_output == "done"

    # The Runner sent a screenshot of the box back after every call.
    shots = screenshots_sent(model)
    assert len(shots) == len(actions) and all(s.startswith("data:image/png;base64,iVBOR") for s in shots)
    assert computer.dimensions == (events.screen(0)["width"], events.screen(0)["height"])

    log = page_log(events)

    def at(e, p):
        return abs(e["x"] - p["x"]) <= 1 and abs(e["y"] - p["y"]) <= 1

    assert events.evaluate("document.getElementById('field').value")["value"] == "hello agents"
    assert any(e["type"] == "keydown" and e["key"] == "a" and e["mods"] == ["ctrl"] for e in log)
    assert any(e["type"] == "dblclick" and at(e, go) for e in log)
    assert any(e["type"] == "contextmenu" and at(e, spot) for e in log)
    assert any(e["type"] == "auxclick" and e["button"] == 1 for e in log)
    assert any(e["type"] == "click" and at(e, go) and e["mods"] == ["shift"] for e in log)
    assert events.cursor() == {"screen": 0, "x": spot["x"] + 10, "y": spot["y"] + 10}
    wheel = [e for e in log if e["type"] == "wheel"]
    assert wheel and all(e["dy"] == 1 for e in wheel), "300 pixels scroll down"
    assert events.evaluate("window.scrollY")["value"] > 0
    ups = [e for e in log if e["type"] == "mouseup"]
    assert ups and ups[-1]["x"] == spot["x"] + 80 and ups[-1]["y"] == spot["y"] + 40


def test_the_async_computer_runs_under_the_async_runner(events: holm.Box):
    go = element_center(events, "#go")

    async def main() -> str:
        async with holm.AsyncHolm() as c:
            computer = await AsyncHolmComputer.open(c.box(events.id))
            model = ScriptedModel([{"type": "click", "button": "left", "x": go["x"], "y": go["y"]}])
            agent = Agent(name="desk", model=model, tools=[ComputerTool(computer)])
            result = await Runner.run(agent, "Press Go.", max_turns=4)
            assert computer.dimensions == (events.screen(0)["width"], events.screen(0)["height"])
            return result.final_output

    assert asyncio.run(main()) == "done"
    assert events.evaluate("document.getElementById('out').textContent")["value"].startswith("clicked")
