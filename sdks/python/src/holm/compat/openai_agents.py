"""The OpenAI Agents SDK's computer on a holm box.

    from agents import Agent, ComputerTool
    from holm.compat.openai_agents import HolmComputer

    agent = Agent(name="desk", tools=[ComputerTool(HolmComputer(box))])

`HolmComputer` is the SDK's `Computer` (sync, on a `Box`) and
`AsyncHolmComputer` its `AsyncComputer` (on an `AsyncBox`). Coordinates are
screen pixels, as the SDK's are. Mouse actions hold the modifier keys the
model gives (`keys`). Scroll amounts come in pixels and the box scrolls in
wheel clicks: one click per `pixels_per_click` (default 100), at least one
when the amount is not 0. `wait` waits until the screen stops changing
(bounded at two seconds). Needs the ``openai-agents`` package.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from agents import AsyncComputer, Computer

from .. import actions as a
from .._async_box import AsyncBox
from .._sync_box import Box

#: The SDK's buttons, as the box names them ("wheel" is the middle one).
BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "back": "back", "forward": "forward"}
#: `wait`: until the screen is still for this long, at most this long.
SETTLE = {"quiet_ms": 300, "timeout_ms": 2000}


def clicks(pixels: int, per_click: int) -> int:
    """Wheel clicks for a scroll of `pixels` (sign kept; at least one)."""
    if pixels == 0:
        return 0
    n = max(1, round(abs(pixels) / per_click))
    return n if pixels > 0 else -n


def modifiers(keys: Optional[Sequence[str]]) -> Optional[List[str]]:
    return [k for k in keys] if keys else None


def chord(keys: Sequence[str]) -> str:
    """The SDK's key list (``["ctrl", "c"]``) as one chord (``ctrl+c``)."""
    return "+".join(keys)


def drag_path(path: Sequence[Any]) -> List[Dict[str, int]]:
    out = []
    for p in path:
        if isinstance(p, dict):
            out.append({"x": int(p["x"]), "y": int(p["y"])})
        elif hasattr(p, "x"):
            out.append({"x": int(p.x), "y": int(p.y)})
        else:
            out.append({"x": int(p[0]), "y": int(p[1])})
    return out


class HolmComputer(Computer):
    """The OpenAI Agents SDK's `Computer` on a holm `Box` (screen `screen`)."""

    def __init__(self, box: Box, screen: int = 0, *, pixels_per_click: int = 100) -> None:
        self.box = box
        self.screen = screen
        self.pixels_per_click = pixels_per_click
        self._size: Optional[Tuple[int, int]] = None

    @property
    def environment(self) -> str:  # type: ignore[override]
        return "ubuntu"

    @property
    def dimensions(self) -> Tuple[int, int]:  # type: ignore[override]
        if self._size is None:
            s = self.box.screen(self.screen)
            self._size = (s["width"], s["height"])
        return self._size

    def screenshot(self) -> str:
        return self.box.screenshot(self.screen).base64()

    def click(self, x: int, y: int, button: str = "left", *, keys: Optional[List[str]] = None) -> None:
        self.box.input([a.click(x, y, button=BUTTONS.get(button, button), modifiers=modifiers(keys))], self.screen)  # type: ignore[arg-type]

    def double_click(self, x: int, y: int, *, keys: Optional[List[str]] = None) -> None:
        self.box.input([a.click(x, y, count=2, modifiers=modifiers(keys))], self.screen)

    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int, *, keys: Optional[List[str]] = None) -> None:
        dx, dy = clicks(scroll_x, self.pixels_per_click), clicks(scroll_y, self.pixels_per_click)
        self.box.input([a.scroll(x, y, dx=dx, dy=dy, modifiers=modifiers(keys))], self.screen)

    def type(self, text: str) -> None:
        self.box.input([a.type(text)], self.screen)

    def wait(self) -> None:
        self.box.input([a.wait(0)], self.screen, settle=SETTLE)  # type: ignore[arg-type]

    def move(self, x: int, y: int, *, keys: Optional[List[str]] = None) -> None:
        self.box.input(hold(keys, [a.move(x, y)]), self.screen)

    def keypress(self, keys: List[str]) -> None:
        self.box.input([a.key(chord(keys))], self.screen)

    def drag(self, path: List[Tuple[int, int]], *, keys: Optional[List[str]] = None) -> None:
        self.box.input([a.drag(drag_path(path), modifiers=modifiers(keys))], self.screen)


class AsyncHolmComputer(AsyncComputer):
    """The OpenAI Agents SDK's `AsyncComputer` on a holm `AsyncBox`."""

    def __init__(self, box: AsyncBox, screen: int = 0, *, pixels_per_click: int = 100, size: Optional[Tuple[int, int]] = None) -> None:
        self.box = box
        self.screen = screen
        self.pixels_per_click = pixels_per_click
        #: The screen's size, for `dimensions` (read by `AsyncHolmComputer.open`).
        self._size = size

    @classmethod
    async def open(cls, box: AsyncBox, screen: int = 0, **options: Any) -> "AsyncHolmComputer":
        """The computer, with the screen's size read (for `dimensions`)."""
        s = await box.screen(screen)
        return cls(box, screen, size=(s["width"], s["height"]), **options)

    @property
    def environment(self) -> str:  # type: ignore[override]
        return "ubuntu"

    @property
    def dimensions(self) -> Optional[Tuple[int, int]]:  # type: ignore[override]
        return self._size

    async def screenshot(self) -> str:
        return (await self.box.screenshot(self.screen)).base64()

    async def click(self, x: int, y: int, button: str = "left", *, keys: Optional[List[str]] = None) -> None:
        await self.box.input([a.click(x, y, button=BUTTONS.get(button, button), modifiers=modifiers(keys))], self.screen)  # type: ignore[arg-type]

    async def double_click(self, x: int, y: int, *, keys: Optional[List[str]] = None) -> None:
        await self.box.input([a.click(x, y, count=2, modifiers=modifiers(keys))], self.screen)

    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int, *, keys: Optional[List[str]] = None) -> None:
        dx, dy = clicks(scroll_x, self.pixels_per_click), clicks(scroll_y, self.pixels_per_click)
        await self.box.input([a.scroll(x, y, dx=dx, dy=dy, modifiers=modifiers(keys))], self.screen)

    async def type(self, text: str) -> None:
        await self.box.input([a.type(text)], self.screen)

    async def wait(self) -> None:
        await self.box.input([a.wait(0)], self.screen, settle=SETTLE)  # type: ignore[arg-type]

    async def move(self, x: int, y: int, *, keys: Optional[List[str]] = None) -> None:
        await self.box.input(hold(keys, [a.move(x, y)]), self.screen)

    async def keypress(self, keys: List[str]) -> None:
        await self.box.input([a.key(chord(keys))], self.screen)

    async def drag(self, path: List[Tuple[int, int]], *, keys: Optional[List[str]] = None) -> None:
        await self.box.input([a.drag(drag_path(path), modifiers=modifiers(keys))], self.screen)


def hold(keys: Optional[Sequence[str]], inner: List[Any]) -> List[Any]:
    """`inner` with `keys` held down around it (for a move, which has no
    modifiers of its own)."""
    if not keys:
        return inner
    return [a.key_down(k) for k in keys] + inner + [a.key_up(k) for k in reversed(keys)]
