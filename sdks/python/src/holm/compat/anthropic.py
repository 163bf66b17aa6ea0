"""Anthropic's computer-use tool on a holm box.

`AnthropicComputer(box)` is the tool's executor: `tool()` is the tool
definition to send (``computer_20251124``, with zoom on), and calling it
with a `tool_use` block's input runs the action and answers the tool
result's content blocks; `tool_result(block)` answers the whole
``tool_result`` block, with ``is_error`` when the action was refused.

    computer = AnthropicComputer(box)
    response = client.beta.messages.create(
        model=..., betas=[computer.BETA], tools=[computer.tool()], messages=messages)
    for block in response.content:
        if block.type == "tool_use":
            results.append(computer.tool_result(block))

Every action of ``computer_20251124`` is taken: ``screenshot``,
``left_click``, ``right_click``, ``middle_click``, ``double_click``,
``triple_click``, ``left_click_drag``, ``left_mouse_down``,
``left_mouse_up``, ``mouse_move``, ``scroll``, ``type``, ``key``,
``hold_key``, ``wait``, ``cursor_position`` and ``zoom``. Clicks and
scrolls hold the modifier keys given in ``text`` (or ``key``), such as
``"shift"`` or ``"ctrl+shift"``.

Scaling, as the tool requires: the model sees images of at most 1568 pixels
on the long edge and about 1.15 megapixels (pass `max_long_edge` and
`max_pixels` for a model that takes larger ones), so screenshots are
downscaled by one scale per screen (the rule of holm's MCP server,
`holm_mcp::scale`), the tool's ``display_width_px`` and
``display_height_px`` are the downscaled size, and the model's coordinates
go to the box with that scale as their coordinate space: the box maps them
back to screen pixels. ``zoom`` answers its region at full resolution (made
smaller only when it is larger than the limits).

Each action answers the screenshot after it, taken once the screen stops
changing (act-then-see in one call); ``cursor_position`` answers text.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import actions as a
from .._async_box import AsyncBox
from .._core import Screenshot
from .._sync_box import Box
from ..errors import HolmError

#: The tool version this module implements.
TOOL_TYPE = "computer_20251124"
#: The beta header value the tool version needs.
BETA = "computer-use-2025-11-24"
#: The largest long edge of an image the model takes, in pixels.
MAX_LONG_EDGE = 1568
#: The most pixels of an image the model takes.
MAX_PIXELS = 1_150_000
#: How long the screen must stay still before the screenshot after an action.
SETTLE = {"quiet_ms": 150, "timeout_ms": 2000}

CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
SCROLLS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


class ToolError(ValueError):
    """A tool input the action cannot take (the model gets it as an error result)."""


def scale_for(width: int, height: int, max_long_edge: int = MAX_LONG_EDGE, max_pixels: int = MAX_PIXELS) -> float:
    """The scale of every screenshot of a `width` x `height` screen: 1 when it
    fits the limits, else the largest scale, to six decimals, whose rounded
    image fits them (holm_mcp::scale::scale_for)."""

    def fits(w: int, h: int) -> bool:
        return max(w, h) <= max_long_edge and w * h <= max_pixels

    if width == 0 or height == 0 or fits(width, height):
        return 1.0
    ideal = min(max_long_edge / max(width, height), math.sqrt(max_pixels / (width * height)))
    micro = math.floor(ideal * 1e6)
    while micro > 1:
        s = micro / 1e6
        if fits(*image_size(width, height, s)):
            return s
        micro -= 1
    return 1e-6


def image_size(width: int, height: int, scale: float) -> Tuple[int, int]:
    """The size of the image the box makes of a screen at `scale`."""

    def edge(n: int) -> int:
        return min(n, max(1, int(math.floor(n * scale + 0.5))))

    return edge(width), edge(height)


class _Base:
    """What the sync and async executors share: the scale, the checks of
    the input, and the building of actions and result blocks."""

    TOOL_TYPE = TOOL_TYPE
    BETA = BETA

    def __init__(
        self, screen: int, max_long_edge: int, max_pixels: int, display_number: Optional[int]
    ) -> None:
        self.screen_index = screen
        self.max_long_edge = max_long_edge
        self.max_pixels = max_pixels
        self.display_number = display_number
        self.screen_size: Optional[Tuple[int, int]] = None
        self.scale = 1.0

    def _set_size(self, width: int, height: int) -> None:
        self.screen_size = (width, height)
        self.scale = scale_for(width, height, self.max_long_edge, self.max_pixels)

    def _tool(self) -> Dict[str, Any]:
        assert self.screen_size is not None
        w, h = image_size(*self.screen_size, self.scale)
        tool: Dict[str, Any] = {
            "type": TOOL_TYPE,
            "name": "computer",
            "display_width_px": w,
            "display_height_px": h,
            "enable_zoom": True,
        }
        if self.display_number is not None:
            tool["display_number"] = self.display_number
        return tool

    def _point(self, value: Any, name: str = "coordinate") -> Tuple[int, int]:
        assert self.screen_size is not None
        w, h = image_size(*self.screen_size, self.scale)
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ToolError(f"{name} must be [x, y], not {value!r}")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
            raise ToolError(f"{name} must hold non-negative integers, not {value!r}")
        x, y = value
        if x >= w or y >= h:
            raise ToolError(f"{name} {value!r} is outside the screen ({w}x{h})")
        return x, y

    @staticmethod
    def _modifiers(value: Any) -> Optional[List[str]]:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ToolError(f"modifier keys must be text such as 'shift', not {value!r}")
        return [k for k in value.split("+") if k]

    @staticmethod
    def _seconds(value: Any, name: str = "duration") -> int:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ToolError(f"{name} must be a non-negative number of seconds, not {value!r}")
        if value > 100:
            raise ToolError(f"{name} {value} is too long (at most 100 seconds)")
        return int(round(value * 1000))

    @staticmethod
    def _text(value: Any, action: str) -> str:
        if not isinstance(value, str) or value == "":
            raise ToolError(f"{action} needs text")
        return value

    def _plan(self, tool_input: Mapping[str, Any]) -> Tuple[str, Any]:
        """What an input asks: ("act", actions), ("see", None),
        ("cursor", None) or ("zoom", region in screen pixels)."""
        if not isinstance(tool_input, Mapping):
            raise ToolError("the tool input must be an object")
        action = tool_input.get("action")
        coordinate = tool_input.get("coordinate")
        modifiers = self._modifiers(tool_input.get("text") or tool_input.get("key")) if action in CLICKS or action == "scroll" else None
        if action == "screenshot":
            return "see", None
        if action == "cursor_position":
            return "cursor", None
        if action in CLICKS:
            button, count = CLICKS[action]
            x, y = self._point(coordinate) if coordinate is not None else (None, None)
            return "act", [a.click(x, y, button=button, count=count, modifiers=modifiers)]
        if action == "mouse_move":
            return "act", [a.move(*self._point(coordinate))]
        if action == "left_click_drag":
            start = self._point(tool_input.get("start_coordinate"), "start_coordinate")
            end = self._point(coordinate)
            path = [{"x": start[0], "y": start[1]}, {"x": end[0], "y": end[1]}]
            return "act", [a.drag(path)]
        if action in ("left_mouse_down", "left_mouse_up"):
            x, y = self._point(coordinate) if coordinate is not None else (None, None)
            make = a.mouse_down if action == "left_mouse_down" else a.mouse_up
            return "act", [make(x, y, button="left")]
        if action == "scroll":
            direction = tool_input.get("scroll_direction")
            if direction not in SCROLLS:
                raise ToolError(f"scroll_direction must be up, down, left or right, not {direction!r}")
            amount = tool_input.get("scroll_amount", 1)
            if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                raise ToolError(f"scroll_amount must be a non-negative integer, not {amount!r}")
            x, y = self._point(coordinate) if coordinate is not None else (None, None)
            dx, dy = SCROLLS[direction]
            return "act", [a.scroll(x, y, dx=dx * amount, dy=dy * amount, modifiers=modifiers)]
        if action == "type":
            return "act", [a.type(self._text(tool_input.get("text"), action))]
        if action == "key":
            return "act", [a.key(self._text(tool_input.get("text"), action))]
        if action == "hold_key":
            key = self._text(tool_input.get("text"), action)
            return "act", [a.hold(key, self._seconds(tool_input.get("duration")))]
        if action == "wait":
            return "act", [a.wait(self._seconds(tool_input.get("duration", 1)))]
        if action == "zoom":
            region = tool_input.get("region")
            if not isinstance(region, (list, tuple)) or len(region) != 4:
                raise ToolError(f"region must be [x0, y0, x1, y1], not {region!r}")
            x0, y0 = self._point(list(region[:2]), "region")
            x1, y1 = region[2], region[3]
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x1, y1)) or x1 <= x0 or y1 <= y0:
                raise ToolError(f"region {region!r} must have x1 > x0 and y1 > y0")
            assert self.screen_size is not None
            sw, sh = self.screen_size
            left, top = round(x0 / self.scale), round(y0 / self.scale)
            right, bottom = min(sw, round(x1 / self.scale)), min(sh, round(y1 / self.scale))
            return "zoom", (left, top, max(1, right - left), max(1, bottom - top))
        raise ToolError(f"unknown action {action!r} for {TOOL_TYPE}")

    def _image(self, shot: Screenshot) -> List[Dict[str, Any]]:
        return [{"type": "image", "source": {"type": "base64", "media_type": shot.media_type, "data": shot.base64()}}]

    def _cursor_text(self, position: Mapping[str, Any]) -> List[Dict[str, Any]]:
        x = round(position["x"] * self.scale)
        y = round(position["y"] * self.scale)
        return [{"type": "text", "text": f"X={x},Y={y}"}]

    @staticmethod
    def _result(tool_use: Any, content: Optional[List[Dict[str, Any]]], error: Optional[str]) -> Dict[str, Any]:
        use_id = tool_use.get("id") if isinstance(tool_use, Mapping) else getattr(tool_use, "id")
        if error is not None:
            return {"type": "tool_result", "tool_use_id": use_id, "content": error, "is_error": True}
        return {"type": "tool_result", "tool_use_id": use_id, "content": content}

    @staticmethod
    def _input_of(tool_use: Any) -> Mapping[str, Any]:
        return tool_use.get("input") if isinstance(tool_use, Mapping) else getattr(tool_use, "input")


class AnthropicComputer(_Base):
    """Anthropic's computer-use tool (``computer_20251124``) on a `Box`."""

    def __init__(
        self,
        box: Box,
        screen: int = 0,
        *,
        max_long_edge: int = MAX_LONG_EDGE,
        max_pixels: int = MAX_PIXELS,
        display_number: Optional[int] = None,
    ) -> None:
        super().__init__(screen, max_long_edge, max_pixels, display_number)
        self.box = box

    def _size(self) -> None:
        if self.screen_size is None:
            s = self.box.screen(self.screen_index)
            self._set_size(s["width"], s["height"])

    def tool(self) -> Dict[str, Any]:
        """The tool definition to send with the request."""
        self._size()
        return self._tool()

    def __call__(self, tool_input: Mapping[str, Any]) -> List[Dict[str, Any]]:
        """Runs one action (a tool_use block's input) and answers the tool
        result's content: the screenshot after it, or the cursor as text.
        An input the tool cannot take raises `ToolError`."""
        self._size()
        kind, what = self._plan(tool_input)
        if kind == "see":
            return self._image(self.box.screenshot(self.screen_index, scale=self.scale))
        if kind == "cursor":
            return self._cursor_text(self.box.cursor(self.screen_index))
        if kind == "zoom":
            left, top, w, h = what
            zoom = scale_for(w, h, self.max_long_edge, self.max_pixels)
            return self._image(self.box.screenshot(self.screen_index, region=(left, top, w, h), scale=zoom))
        shot = self.box.act_and_see(
            what, self.screen_index, coordinate_space={"scale": self.scale}, settle=SETTLE, scale=self.scale
        )
        return self._image(shot)

    def tool_result(self, tool_use: Any) -> Dict[str, Any]:
        """The ``tool_result`` block answering a ``tool_use`` block (an SDK
        object or a dict): its content, or the refusal with ``is_error``."""
        try:
            return self._result(tool_use, self(self._input_of(tool_use)), None)
        except (ToolError, HolmError) as e:
            return self._result(tool_use, None, str(e))


class AsyncAnthropicComputer(_Base):
    """Anthropic's computer-use tool (``computer_20251124``) on an `AsyncBox`."""

    def __init__(
        self,
        box: AsyncBox,
        screen: int = 0,
        *,
        max_long_edge: int = MAX_LONG_EDGE,
        max_pixels: int = MAX_PIXELS,
        display_number: Optional[int] = None,
    ) -> None:
        super().__init__(screen, max_long_edge, max_pixels, display_number)
        self.box = box

    async def _size(self) -> None:
        if self.screen_size is None:
            s = await self.box.screen(self.screen_index)
            self._set_size(s["width"], s["height"])

    async def tool(self) -> Dict[str, Any]:
        """The tool definition to send with the request."""
        await self._size()
        return self._tool()

    async def __call__(self, tool_input: Mapping[str, Any]) -> List[Dict[str, Any]]:
        """Runs one action and answers the tool result's content (see
        `AnthropicComputer.__call__`)."""
        await self._size()
        kind, what = self._plan(tool_input)
        if kind == "see":
            return self._image(await self.box.screenshot(self.screen_index, scale=self.scale))
        if kind == "cursor":
            return self._cursor_text(await self.box.cursor(self.screen_index))
        if kind == "zoom":
            left, top, w, h = what
            zoom = scale_for(w, h, self.max_long_edge, self.max_pixels)
            return self._image(await self.box.screenshot(self.screen_index, region=(left, top, w, h), scale=zoom))
        shot = await self.box.act_and_see(
            what, self.screen_index, coordinate_space={"scale": self.scale}, settle=SETTLE, scale=self.scale
        )
        return self._image(shot)

    async def tool_result(self, tool_use: Any) -> Dict[str, Any]:
        """The ``tool_result`` block answering a ``tool_use`` block."""
        try:
            return self._result(tool_use, await self(self._input_of(tool_use)), None)
        except (ToolError, HolmError) as e:
            return self._result(tool_use, None, str(e))

