"""The rest of a box's capabilities, as a base of `AsyncBox`: Chromium's page
tools and state, the bridge (and Playwright over it), the guest's agent
credential, viewers, takeover and handoff, recordings, the timeline and
traces, the accessibility tree, windows and the clipboard.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from . import _routes as r
from . import types as t
from ._async_box_calls import AsyncBoxCalls
from ._core import Screenshot, drop_none

if TYPE_CHECKING:
    from ._async_transport import AsyncTransport


class AsyncBoxTools(AsyncBoxCalls):
    """Page tools, bridge, viewers, records and desk tools of a box."""

    _transport: "AsyncTransport"
    _p: Dict[str, str]

    # Chromium: tabs and page tools.

    async def tabs(self) -> List[t.Tab]:
        """The browser's tabs."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_BROWSER_TABS, self._p))["data"]

    async def open_tab(
        self, url: Optional[str] = None, *, wait_until: Optional[t.WaitUntil] = None, timeout_ms: Optional[int] = None
    ) -> t.Tab:
        """Opens a tab, makes it current, and waits for its page to load."""
        body = drop_none({"url": url, "wait_until": wait_until, "timeout_ms": timeout_ms})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_TABS, self._p, json=body)

    async def close_tab(self, tab: str) -> None:
        """Closes a tab."""
        await self._transport.send(r.DELETE_V1_BOXES_ID_BROWSER_TABS_TAB, {**self._p, "tab": tab})

    async def activate_tab(self, tab: str) -> None:
        """Brings a tab to the front and makes it current."""
        await self._transport.send(r.POST_V1_BOXES_ID_BROWSER_TABS_TAB_ACTIVATE, {**self._p, "tab": tab})

    async def navigate(
        self,
        url: str,
        *,
        tab: Optional[str] = None,
        wait_until: Optional[t.WaitUntil] = None,
        timeout_ms: Optional[int] = None,
    ) -> t.PageResult:
        """Loads a URL and waits for load (or DOMContentLoaded, or commit)."""
        body = drop_none({"url": url, "tab": tab, "wait_until": wait_until, "timeout_ms": timeout_ms})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_NAVIGATE, self._p, json=body)

    async def page_click(self, selector: str, **options: Any) -> t.PageResult:
        """Clicks the first visible element matching a CSS selector, with real
        mouse events (ClickRequest's other fields as keywords)."""
        body = drop_none({"selector": selector, **options})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_CLICK, self._p, json=body)

    async def page_type(self, text: str, selector: Optional[str] = None, **options: Any) -> t.PageResult:
        """Types text as key presses, into the element matching `selector` or
        where the focus is."""
        body = drop_none({"text": text, "selector": selector, **options})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_TYPE, self._p, json=body)

    async def page_fill(self, selector: str, value: str, **options: Any) -> t.PageResult:
        """Sets a field's value at once, firing input and change."""
        body = drop_none({"selector": selector, "value": value, **options})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_FILL, self._p, json=body)

    async def page_press(self, key: str, selector: Optional[str] = None, **options: Any) -> t.PageResult:
        """Presses a key or chord such as ``Enter`` or ``Control+a`` in the page."""
        body = drop_none({"key": key, "selector": selector, **options})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_PRESS, self._p, json=body)

    async def page_wait(
        self, selector: str, *, state: Optional[t.ElementState] = None, timeout_ms: Optional[int] = None, **options: Any
    ) -> t.PageResult:
        """Waits (bounded) until an element is visible, attached, hidden or detached."""
        body = drop_none({"selector": selector, "state": state, "timeout_ms": timeout_ms, **options})
        timeout = max(self._transport.config.timeout, (timeout_ms or 0) / 1000 + 30)
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_WAIT, self._p, json=body, timeout=timeout)

    async def evaluate(self, expression: str, **options: Any) -> t.EvaluateResult:
        """Evaluates a JavaScript expression in a tab; an exception is a
        `PageErrorError`."""
        body = drop_none({"expression": expression, **options})
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_EVALUATE, self._p, json=body)

    async def page_screenshot(
        self,
        *,
        tab: Optional[str] = None,
        format: Optional[str] = None,
        quality: Optional[int] = None,
        full_page: Optional[bool] = None,
    ) -> Screenshot:
        """A screenshot of a tab (the viewport, or the whole page)."""
        query = {"tab": tab, "format": format, "quality": quality, "full_page": full_page}
        response = await self._transport.send(r.GET_V1_BOXES_ID_BROWSER_SCREENSHOT, self._p, query=query)
        from ._core import read_screenshot

        return read_screenshot(response.headers, response.content, str(response.url))

    async def page_text(self, tab: Optional[str] = None) -> t.PageContent:
        """The text a person sees in a tab."""
        return await self._transport.json(r.GET_V1_BOXES_ID_BROWSER_TEXT, self._p, query={"tab": tab})

    async def page_html(self, tab: Optional[str] = None) -> t.PageContent:
        """The HTML of a tab."""
        return await self._transport.json(r.GET_V1_BOXES_ID_BROWSER_HTML, self._p, query={"tab": tab})

    async def save_state(self) -> t.StorageState:
        """The cookies and local and session storage of every origin open in a tab."""
        return await self._transport.json(r.GET_V1_BOXES_ID_BROWSER_STATE, self._p)

    async def load_state(self, state: t.StorageState) -> t.LoadStateResult:
        """Puts cookies and storage (from any box's `save_state`) into this browser."""
        return await self._transport.json(r.POST_V1_BOXES_ID_BROWSER_STATE, self._p, json=state)

    # The bridge.

    async def bridge(self, *, ttl_secs: Optional[int] = None, rotate: Optional[bool] = None) -> t.BridgeAccess:
        """How to reach the box's Chromium (DevTools) from the server's host:
        the bridge's URLs, the headers with its own secret (not the box's),
        and a one-connection ticket URL. `rotate` makes a new secret first,
        ending every connection opened with the old one."""
        body = drop_none({"ttl_secs": ttl_secs, "rotate": rotate})
        return await self._transport.json(r.POST_V1_BOXES_ID_BRIDGE, self._p, json=body)

    async def connect_over_cdp(self, browser_type: Any, **options: Any) -> Any:
        """Playwright's Browser, connected to the box's Chromium through the
        bridge: ``browser = await box.connect_over_cdp(playwright.chromium)``.
        Its `close` only disconnects; the box's browser keeps running."""
        access = await self.bridge()
        return await browser_type.connect_over_cdp(access["http_url"], headers=access["headers"], **options)

    # The guest's own credential.

    async def agent(self, *, ttl_secs: Optional[int] = None) -> t.AgentAccess:
        """The box's guest API URL and an Authorization header with a new
        credential that opens only this box's guest and expires."""
        return await self._transport.json(r.POST_V1_BOXES_ID_AGENT, self._p, json=drop_none({"ttl_secs": ttl_secs}))

    async def revoke_agent(self) -> None:
        """Revokes every agent credential of the box."""
        await self._transport.send(r.DELETE_V1_BOXES_ID_AGENT, self._p)

    # Viewers, takeover and handoff.

    async def viewers(self) -> List[t.ViewerGrant]:
        """The viewer URLs of the box's current desktop."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_VIEWERS, self._p))["data"]

    async def create_viewer(
        self,
        screen: int = 0,
        *,
        mode: Optional[t.ViewerMode] = None,
        expires_after_secs: Optional[int] = None,
        label: Optional[str] = None,
    ) -> t.ViewerGrant:
        """A new viewer URL for one screen: watch only (``view``) or takeover
        (``control``), with its own token, expiring."""
        body = drop_none({"screen": screen, "mode": mode, "expires_after_secs": expires_after_secs, "label": label})
        return await self._transport.json(r.POST_V1_BOXES_ID_VIEWERS, self._p, json=body)

    async def revoke_viewer(self, grant: str) -> t.ViewerGrant:
        """Revokes a viewer URL: it opens nothing more, and its connections close."""
        return await self._transport.json(r.DELETE_V1_BOXES_ID_VIEWERS_GRANT, {**self._p, "grant": grant})

    async def viewer_events(self, *, after: Optional[int] = None, timeout_secs: Optional[int] = None) -> t.ControlEvents:
        """Who held control through a takeover URL, and when; waits up to
        `timeout_secs` for an event after `after`."""
        timeout = self._transport.config.timeout + (timeout_secs or 0)
        return await self._transport.json(
            r.GET_V1_BOXES_ID_VIEWERS_EVENTS, self._p, query={"after": after, "timeout_secs": timeout_secs}, timeout=timeout
        )

    async def ask_for_help(
        self, reason: str, screen: int = 0, *, expires_after_secs: Optional[int] = None
    ) -> t.Handoff:
        """Asks a person for help: answers a takeover URL whose page shows the
        reason; the agent's input is refused while the person is in control."""
        body = drop_none({"reason": reason, "screen": screen, "expires_after_secs": expires_after_secs})
        return await self._transport.json(r.POST_V1_BOXES_ID_HANDOFF, self._p, json=body)

    async def handoff(self, *, wait_for: Optional[str] = None, timeout_secs: Optional[int] = None) -> t.Handoff:
        """The handoff between agent and person; with ``wait_for="handed_back"``,
        once the person hands back (or at `timeout_secs`, as it is then)."""
        timeout = self._transport.config.timeout + (timeout_secs or 0)
        query = {"wait_for": wait_for, "timeout_secs": timeout_secs}
        return await self._transport.json(r.GET_V1_BOXES_ID_HANDOFF, self._p, query=query, timeout=timeout)

    # Recordings.

    async def start_recording(self, screen: int = 0, *, fps: Optional[int] = None) -> t.Recording:
        """Starts recording a screen to a video kept in the box."""
        body = drop_none({"screen": screen, "fps": fps})
        return await self._transport.json(r.POST_V1_BOXES_ID_RECORDINGS, self._p, json=body)

    async def stop_recording(self, screen: int = 0) -> t.Recording:
        """Stops a screen's recording; answers it once its file is complete."""
        return await self._transport.json(r.POST_V1_BOXES_ID_RECORDINGS_STOP, self._p, json={"screen": screen})

    async def recordings(self) -> List[t.Recording]:
        """The box's recordings, oldest first."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_RECORDINGS, self._p))["data"]

    async def download_recording(self, file: str) -> bytes:
        """A recording's video (MP4); a running one as written so far."""
        return await self._transport.data(r.GET_V1_BOXES_ID_RECORDINGS_FILE, {**self._p, "file": file}, timeout=None)

    async def remove_recording(self, file: str) -> None:
        """Removes a recording that is not running, and its file."""
        await self._transport.send(r.DELETE_V1_BOXES_ID_RECORDINGS_FILE, {**self._p, "file": file})

    # The timeline and traces.

    async def timeline(self, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> t.PageOfStep:
        """One page of what was done to the box, oldest first, each step with
        the screenshot after it."""
        return await self._transport.json(r.GET_V1_BOXES_ID_TIMELINE, self._p, query={"cursor": cursor, "limit": limit})

    async def steps(self) -> List[t.Step]:
        """The whole timeline, page after page."""
        out: List[t.Step] = []
        cursor = None
        while True:
            page = await self.timeline(cursor=cursor, limit=1000)
            out += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    async def export_timeline(self, format: str = "html") -> bytes:
        """The whole timeline as one HTML page that plays it back, or as JSONL."""
        return await self._transport.data(r.GET_V1_BOXES_ID_TIMELINE_EXPORT, self._p, query={"format": format}, timeout=None)

    async def timeline_screenshot(self, shot: str) -> bytes:
        """One screenshot the timeline keeps, by its id."""
        return await self._transport.data(r.GET_V1_BOXES_ID_TIMELINE_SCREENSHOTS_SHOT, {**self._p, "shot": shot})

    async def traces(self, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> t.PageOfTrace:
        """One page of the requests through the server to the box."""
        return await self._transport.json(r.GET_V1_BOXES_ID_TRACES, self._p, query={"cursor": cursor, "limit": limit})

    # The accessibility tree, windows and the clipboard.

    async def accessibility(
        self,
        *,
        screen: Optional[int] = None,
        all: Optional[bool] = None,
        depth: Optional[int] = None,
        max_nodes: Optional[int] = None,
    ) -> t.Tree:
        """The accessibility tree of the focused window (or, with `all`, the
        whole screen): role, name, value, states and rectangle per node."""
        query = {"screen": screen, "all": all, "depth": depth, "max_nodes": max_nodes}
        return await self._transport.json(r.GET_V1_BOXES_ID_ACCESSIBILITY, self._p, query=query)

    async def accessibility_act(self, action: t.NodeVerb, **target: Any) -> t.NodeActed:
        """Clicks a node or sets its value, found by `node` id or by `role` and
        `name` (NodeAction's fields as keywords)."""
        body = drop_none({"action": action, **target})
        return await self._transport.json(r.POST_V1_BOXES_ID_ACCESSIBILITY_ACT, self._p, json=body)

    async def windows(self) -> List[t.Window]:
        """The top-level windows of every screen: title, app, rectangle, focus."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_WINDOWS, self._p))["data"]

    async def window_action(self, window: int, action: t.WindowAction) -> t.WindowActed:
        """Focuses, moves, resizes or closes a window, and waits (bounded)
        until the change shows."""
        return await self._transport.json(r.POST_V1_BOXES_ID_WINDOWS_WINDOW, {**self._p, "window": window}, json=action)

    async def focus_window(self, window: int) -> t.WindowActed:
        """Gives a window the focus."""
        return await self.window_action(window, {"action": "focus"})

    async def move_window(self, window: int, x: int, y: int) -> t.WindowActed:
        """Moves a window's top-left corner to (x, y)."""
        return await self.window_action(window, {"action": "move", "x": x, "y": y})

    async def resize_window(self, window: int, width: int, height: int) -> t.WindowActed:
        """Resizes a window."""
        return await self.window_action(window, {"action": "resize", "width": width, "height": height})

    async def close_window(self, window: int) -> t.WindowActed:
        """Closes a window."""
        return await self.window_action(window, {"action": "close"})

    async def clipboard(self) -> t.Clipboard:
        """The clipboard's types, text and PNG image (base64), as apps see it."""
        return await self._transport.json(r.GET_V1_BOXES_ID_CLIPBOARD, self._p)

    async def set_clipboard(self, text: Optional[str] = None, *, png: Optional[bytes] = None) -> t.Clipboard:
        """Puts text, a PNG image, or both on the clipboard."""
        body = drop_none({"text": text, "png_base64": base64.b64encode(png).decode("ascii") if png else None})
        return await self._transport.json(r.PUT_V1_BOXES_ID_CLIPBOARD, self._p, json=body)
