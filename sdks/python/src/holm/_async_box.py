"""`AsyncBox`: one box through holmd: its lifecycle and lifetime, screens,
screenshots, input (the whole grammar, and act-then-see), commands,
background processes and files. The page tools, bridge, viewers,
recordings, timeline and the rest are in `_async_box_tools`.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _routes as r
from . import actions as a
from . import types as t
from ._async_box_tools import AsyncBoxTools
from ._async_terminal import AsyncTerminal
from ._async_transport import AsyncTransport
from ._core import Screenshot, drop_none, read_screenshot
from ._errors import BoxNotRunningError

Point = Union[Tuple[int, int], t.Point]


def check_running(info: t.BoxInfo) -> None:
    """Raises `BoxNotRunningError` when a box that was waited for does not run."""
    if info.get("state") != "running":
        reason = info.get("reason") or "no reason given"
        raise BoxNotRunningError(
            f"box {info.get('id')} is {info.get('state')}, not running: {reason}",
            hint=f"GET /v1/boxes/{info.get('id')} shows it; remove it when done",
            details={"kind": "box_not_running", "box": info},
        )


def screenshot_options(
    format: Optional[t.ImageFormat],
    quality: Optional[int],
    region: Optional[Any],
    max_width: Optional[int],
    max_height: Optional[int],
    scale: Optional[float],
    cursor: Optional[bool],
) -> Dict[str, Any]:
    if isinstance(region, (tuple, list)):
        region = {"x": region[0], "y": region[1], "width": region[2], "height": region[3]}
    return drop_none(
        {
            "format": format,
            "quality": quality,
            "region": region,
            "max_width": max_width,
            "max_height": max_height,
            "scale": scale,
            "cursor": cursor,
        }
    )


def point(p: Point) -> t.Point:
    if isinstance(p, dict):
        return p
    return {"x": int(p[0]), "y": int(p[1])}


class AsyncBox(AsyncBoxTools):
    """One box, through holmd. Made by `AsyncHolm.create`, `get`, `box` or
    `boxes`; `info` is the box as last seen (`refresh` reads it again).
    Used as a context manager, the box is removed at the end.

    Screens are numbered from 0; every desktop method takes `screen`.
    """

    def __init__(self, transport: AsyncTransport, info: t.BoxInfo) -> None:
        self._transport = transport
        self._p = {"id": info["id"]}
        #: The box as last seen (BoxInfo).
        self.info: t.BoxInfo = info

    @property
    def id(self) -> str:
        """The box's id."""
        return self.info["id"]

    @property
    def state(self) -> Optional[str]:
        """The box's state when last seen."""
        return self.info.get("state")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r}, state={self.state!r})"

    async def __aenter__(self) -> "AsyncBox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.remove()

    def _set(self, info: t.BoxInfo) -> t.BoxInfo:
        self.info = info
        return info

    # Lifecycle and lifetime.

    async def refresh(self, *, wait_for: Optional[t.BoxState] = None, timeout_secs: int = 60) -> t.BoxInfo:
        """Reads the box again; with `wait_for`, once it is in that state (or
        at `timeout_secs`, as it is then)."""
        query = {"wait_for": wait_for, "timeout_secs": timeout_secs if wait_for else None}
        timeout = timeout_secs + 30 if wait_for else self._transport.config.timeout
        return self._set(await self._transport.json(r.GET_V1_BOXES_ID, self._p, query=query, timeout=timeout))

    async def wait_for(self, state: t.BoxState, timeout_secs: int = 60) -> t.BoxInfo:
        """Waits (on the server) until the box is in `state`, at most
        `timeout_secs`; answers the box as it is then."""
        return await self.refresh(wait_for=state, timeout_secs=timeout_secs)

    async def stop(self) -> t.BoxInfo:
        """Stops the box, keeping its files."""
        return self._set(await self._transport.json(r.POST_V1_BOXES_ID_STOP, self._p))

    async def start(self, *, wait: bool = True, timeout_secs: int = 600) -> t.BoxInfo:
        """Starts a stopped box: a new desktop on new ports; with `wait`, once
        it runs."""
        query = {"wait_for": "running", "timeout_secs": timeout_secs} if wait else None
        timeout = timeout_secs + 30 if wait else self._transport.config.timeout
        info = self._set(await self._transport.json(r.POST_V1_BOXES_ID_START, self._p, query=query, timeout=timeout))
        if wait:
            check_running(info)
        return info

    async def pause(self) -> t.BoxInfo:
        """Pauses the box, keeping its memory."""
        return self._set(await self._transport.json(r.POST_V1_BOXES_ID_PAUSE, self._p))

    async def resume(self) -> t.BoxInfo:
        """Resumes a paused box where it was."""
        return self._set(await self._transport.json(r.POST_V1_BOXES_ID_RESUME, self._p))

    async def fork(
        self,
        *,
        name: Optional[str] = None,
        expires_after_secs: Optional[int] = None,
        idle_timeout_secs: Optional[int] = None,
        wait: bool = True,
        timeout_secs: int = 600,
        idempotency_key: Optional[str] = None,
    ) -> "AsyncBox":
        """A new box with a copy of this box's files, on the same runtime;
        with `wait`, once it runs. With an `idempotency_key`, a repeated call
        answers the same copy."""
        body = drop_none({"name": name, "expires_after_secs": expires_after_secs, "idle_timeout_secs": idle_timeout_secs})
        query = {"wait_for": "running", "timeout_secs": timeout_secs} if wait else None
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        timeout = timeout_secs + 30 if wait else self._transport.config.timeout
        info = await self._transport.json(
            r.POST_V1_BOXES_ID_FORK, self._p, query=query, json=body, headers=headers, timeout=timeout
        )
        if wait:
            check_running(info)
        return AsyncBox(self._transport, info)

    async def extend(self, by_secs: int) -> t.BoxInfo:
        """Moves the end of the box's lifetime `by_secs` later (up to its
        runtime's maximum)."""
        return self._set(await self._transport.json(r.POST_V1_BOXES_ID_EXTEND, self._p, json={"by_secs": by_secs}))

    async def remove(self) -> t.BoxInfo:
        """Removes the box."""
        return self._set(await self._transport.json(r.DELETE_V1_BOXES_ID, self._p))

    async def progress(self, *, timeout_secs: int = 600) -> AsyncIterator[t.BoxEvent]:
        """The stages of the box's latest making or start, then each as it
        comes, until it runs, fails or `timeout_secs` pass; the box last."""
        async for event in self._transport.ndjson(
            r.GET_V1_BOXES_ID_PROGRESS, self._p, query={"timeout_secs": timeout_secs}
        ):
            yield event

    # Screens and screenshots.

    async def guest_info(self) -> t.Info:
        """The guest's version, display profile, screens and capabilities."""
        return await self._transport.json(r.GET_V1_BOXES_ID_INFO, self._p)

    async def screens(self) -> List[t.Screen]:
        """The box's screens."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_SCREENS, self._p))["data"]

    async def screen(self, screen: int = 0) -> t.Screen:
        """One screen: its size and whether it is ready."""
        return await self._transport.json(r.GET_V1_BOXES_ID_SCREENS_SCREEN, {**self._p, "screen": screen})

    async def cursor(self, screen: int = 0) -> t.CursorPosition:
        """Where the pointer is."""
        return await self._transport.json(r.GET_V1_BOXES_ID_SCREENS_SCREEN_CURSOR, {**self._p, "screen": screen})

    async def screenshot(
        self,
        screen: int = 0,
        *,
        format: Optional[t.ImageFormat] = None,
        quality: Optional[int] = None,
        region: Optional[Any] = None,
        max_width: Optional[int] = None,
        max_height: Optional[int] = None,
        scale: Optional[float] = None,
        cursor: Optional[bool] = None,
    ) -> Screenshot:
        """A screenshot as bytes with what its headers say (size, scale,
        region, frame hash). `region` is (x, y, width, height) or a Region;
        `max_width`, `max_height` and `scale` downscale."""
        query = screenshot_options(format, quality, region, max_width, max_height, scale, cursor)
        params = {**self._p, "screen": screen}
        response = await self._transport.send(r.GET_V1_BOXES_ID_SCREENS_SCREEN_SCREENSHOT, params, query=query)
        return read_screenshot(response.headers, response.content, str(response.url))

    async def screenshot_if_changed(self, frame: str, screen: int = 0, **options: Any) -> Optional[Screenshot]:
        """A screenshot, or None when the screen still shows `frame` (a
        screenshot's `frame`): the server answers 304 without an image."""
        query = screenshot_options(
            options.get("format"),
            options.get("quality"),
            options.get("region"),
            options.get("max_width"),
            options.get("max_height"),
            options.get("scale"),
            options.get("cursor"),
        )
        params = {**self._p, "screen": screen}
        response = await self._transport.send(
            r.GET_V1_BOXES_ID_SCREENS_SCREEN_SCREENSHOT, params, query=query, headers={"if-none-match": f'"{frame}"'}
        )
        if response.status_code == 304:
            return None
        return read_screenshot(response.headers, response.content, str(response.url))

    # Input.

    async def input(
        self,
        actions: Sequence[t.Action],
        screen: int = 0,
        *,
        coordinate_space: Optional[t.CoordinateSpace] = None,
        settle: Optional[t.Settle] = None,
    ) -> t.InputResult:
        """Runs input actions in order (build them with `holm.actions`).
        `coordinate_space` maps points taken from a downscaled or cropped
        screenshot; `settle` waits until the screen stops changing."""
        body = drop_none({"actions": list(actions), "coordinate_space": coordinate_space, "settle": settle})
        return await self._transport.json(
            r.POST_V1_BOXES_ID_SCREENS_SCREEN_INPUT, {**self._p, "screen": screen}, json=body
        )

    async def act_and_see(
        self,
        actions: Sequence[t.Action],
        screen: int = 0,
        *,
        coordinate_space: Optional[t.CoordinateSpace] = None,
        settle: Optional[t.Settle] = None,
        format: Optional[t.ImageFormat] = None,
        quality: Optional[int] = None,
        region: Optional[Any] = None,
        max_width: Optional[int] = None,
        max_height: Optional[int] = None,
        scale: Optional[float] = None,
        cursor: Optional[bool] = None,
    ) -> Screenshot:
        """Runs input actions, waits as `settle` says, and answers the
        screenshot after them: act-then-see in one call."""
        shot = screenshot_options(format, quality, region, max_width, max_height, scale, cursor)
        body = drop_none(
            {"actions": list(actions), "coordinate_space": coordinate_space, "settle": settle, "screenshot": shot}
        )
        response = await self._transport.send(
            r.POST_V1_BOXES_ID_SCREENS_SCREEN_INPUT, {**self._p, "screen": screen}, json=body
        )
        return read_screenshot(response.headers, response.content, str(response.url))

    async def click(
        self,
        x: Optional[int] = None,
        y: Optional[int] = None,
        *,
        button: Optional[t.Button] = None,
        count: Optional[int] = None,
        modifiers: Optional[Sequence[str]] = None,
        screen: int = 0,
    ) -> t.InputResult:
        """Clicks at (x, y) (where the pointer is when left out)."""
        return await self.input([a.click(x, y, button=button, count=count, modifiers=modifiers)], screen)

    async def double_click(self, x: Optional[int] = None, y: Optional[int] = None, *, screen: int = 0) -> t.InputResult:
        """Double-clicks with the left button."""
        return await self.input([a.click(x, y, count=2)], screen)

    async def right_click(self, x: Optional[int] = None, y: Optional[int] = None, *, screen: int = 0) -> t.InputResult:
        """Clicks with the right button."""
        return await self.input([a.click(x, y, button="right")], screen)

    async def move(self, x: int, y: int, *, screen: int = 0) -> t.InputResult:
        """Moves the pointer."""
        return await self.input([a.move(x, y)], screen)

    async def scroll(
        self, x: Optional[int] = None, y: Optional[int] = None, *, dx: int = 0, dy: int = 0, screen: int = 0
    ) -> t.InputResult:
        """Turns the wheel `dy` clicks down (negative: up) and `dx` right."""
        return await self.input([a.scroll(x, y, dx=dx, dy=dy)], screen)

    async def drag(
        self, path: Sequence[Point], *, button: Optional[t.Button] = None, screen: int = 0
    ) -> t.InputResult:
        """Presses at the first point, moves through the others, releases at
        the last; points are (x, y) pairs or Points."""
        return await self.input([a.drag([point(p) for p in path], button=button)], screen)

    async def type(self, text: str, *, screen: int = 0) -> t.InputResult:
        """Types text: any Unicode; ``\\n`` is Return."""
        return await self.input([a.type(text)], screen)

    async def key(self, chord: str, *, repeat: Optional[int] = None, screen: int = 0) -> t.InputResult:
        """Presses a key or chord such as ``ctrl+l`` (names in docs/keys.md)."""
        return await self.input([a.key(chord, repeat=repeat)], screen)

    # Commands and processes.

    async def run(
        self,
        command: Union[str, Sequence[str]],
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        stdin: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        output_limit: Optional[int] = None,
    ) -> t.CommandResult:
        """Runs a command and waits for it: a string runs with ``bash -c``, a
        list runs without a shell. A timeout is a result with `timed_out`."""
        body = command_body(command, cwd=cwd, env=env, stdin=stdin, timeout_ms=timeout_ms, output_limit=output_limit)
        return await self._transport.json(
            r.POST_V1_BOXES_ID_COMMANDS_RUN, self._p, json=body, timeout=command_timeout(self, timeout_ms)
        )

    async def stream(
        self,
        command: Union[str, Sequence[str]],
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        stdin: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        output_limit: Optional[int] = None,
    ) -> AsyncIterator[t.CommandEvent]:
        """Runs a command and yields its events as they happen: start,
        stdout and stderr chunks, then exit."""
        body = command_body(command, cwd=cwd, env=env, stdin=stdin, timeout_ms=timeout_ms, output_limit=output_limit)
        async for event in self._transport.ndjson(r.POST_V1_BOXES_ID_COMMANDS_STREAM, self._p, json=body):
            yield event

    async def spawn(
        self,
        command: Union[str, Sequence[str]],
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        tag: Optional[str] = None,
    ) -> t.ProcessInfo:
        """Starts a background process (a string with ``bash -c``, a list
        without a shell)."""
        body = command_body(command, cwd=cwd, env=env)
        body.update(drop_none({"tag": tag}))
        return await self._transport.json(r.POST_V1_BOXES_ID_PROCESSES, self._p, json=body)

    async def processes(self) -> List[t.ProcessInfo]:
        """The background processes."""
        return (await self._transport.json(r.GET_V1_BOXES_ID_PROCESSES, self._p))["data"]

    async def process(self, process: str) -> t.ProcessInfo:
        """One background process."""
        return await self._transport.json(r.GET_V1_BOXES_ID_PROCESSES_PROCESS, {**self._p, "process": process})

    async def process_output(self, process: str, *, cursor: int = 0, wait_ms: Optional[int] = None) -> t.OutputPage:
        """A process's output events after `cursor`, waiting up to `wait_ms`
        for a first one; the page's `next_cursor` continues."""
        timeout = self._transport.config.timeout + (wait_ms or 0) / 1000
        return await self._transport.json(
            r.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT,
            {**self._p, "process": process},
            query={"cursor": cursor, "wait_ms": wait_ms},
            timeout=timeout,
        )

    async def follow(self, process: str, *, cursor: int = 0) -> AsyncIterator[t.OutputEvent]:
        """Yields a process's output events from `cursor` as they come, until
        it ends (its exit event last)."""
        async for event in self._transport.ndjson(
            r.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT,
            {**self._p, "process": process},
            query={"cursor": cursor, "follow": True},
        ):
            yield event

    async def write_stdin(self, process: str, data: Union[bytes, str], *, eof: bool = False) -> None:
        """Writes to a process's standard input; `eof` closes it after."""
        content = data.encode("utf-8") if isinstance(data, str) else data
        await self._transport.send(
            r.POST_V1_BOXES_ID_PROCESSES_PROCESS_STDIN,
            {**self._p, "process": process},
            query={"eof": eof},
            content=content,
        )

    async def signal(self, process: str, signal: Union[str, int]) -> None:
        """Sends a signal, by name (``TERM``, ``SIGINT``) or number."""
        await self._transport.send(
            r.POST_V1_BOXES_ID_PROCESSES_PROCESS_SIGNAL, {**self._p, "process": process}, json={"signal": signal}
        )

    async def kill(self, process: str) -> None:
        """Kills a background process if it runs, and forgets it."""
        await self._transport.send(r.DELETE_V1_BOXES_ID_PROCESSES_PROCESS, {**self._p, "process": process})

    # Files.

    async def read_file(self, path: str) -> bytes:
        """A file's bytes."""
        return await self._transport.data(r.GET_V1_BOXES_ID_FILES_CONTENT, self._p, query={"path": path})

    async def read_text(self, path: str, encoding: str = "utf-8") -> str:
        """A file's text."""
        return (await self.read_file(path)).decode(encoding)

    async def write_file(self, path: str, data: Union[bytes, str], *, mode: Optional[str] = None) -> t.FileInfo:
        """Writes a file atomically, making its parents; `mode` in octal such
        as ``"755"``."""
        content = data.encode("utf-8") if isinstance(data, str) else data
        return await self._transport.json(
            r.PUT_V1_BOXES_ID_FILES_CONTENT, self._p, query={"path": path, "mode": mode}, content=content
        )

    async def list_files(self, path: str, *, depth: Optional[int] = None) -> List[t.FileInfo]:
        """A directory's entries, `depth` levels down, page after page."""
        out: List[t.FileInfo] = []
        cursor = None
        while True:
            page = await self._transport.json(
                r.GET_V1_BOXES_ID_FILES_LIST, self._p, query={"path": path, "depth": depth, "cursor": cursor}
            )
            out += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    async def stat(self, path: str) -> t.FileStat:
        """Describes a path; ``exists`` is false when there is none."""
        return await self._transport.json(r.GET_V1_BOXES_ID_FILES_STAT, self._p, query={"path": path})

    async def mkdir(self, path: str, *, parents: bool = True) -> t.FileInfo:
        """Makes a directory (and its parents)."""
        return await self._transport.json(r.POST_V1_BOXES_ID_FILES_MKDIR, self._p, json={"path": path, "parents": parents})

    async def remove_file(self, path: str, *, recursive: bool = False) -> None:
        """Removes a path; `recursive` for a directory with contents."""
        await self._transport.send(r.POST_V1_BOXES_ID_FILES_REMOVE, self._p, json={"path": path, "recursive": recursive})

    async def rename(self, src: str, dst: str, *, overwrite: bool = False) -> t.FileInfo:
        """Renames a path."""
        body = {"from": src, "to": dst, "overwrite": overwrite}
        return await self._transport.json(r.POST_V1_BOXES_ID_FILES_RENAME, self._p, json=body)

    # The terminal.

    async def terminal(
        self,
        *,
        cols: Optional[int] = None,
        rows: Optional[int] = None,
        command: Optional[str] = None,
        cwd: Optional[str] = None,
        term: Optional[str] = None,
    ) -> AsyncTerminal:
        """Opens a terminal: a real pty in the box over a WebSocket (a login
        shell unless `command` says otherwise)."""
        query = {"cols": cols, "rows": rows, "command": command, "cwd": cwd, "term": term}
        return await AsyncTerminal.open(self._transport, r.GET_V1_BOXES_ID_TERMINAL, self._p, query)


def command_body(command: Union[str, Sequence[str]], **fields: Any) -> Dict[str, Any]:
    body: Dict[str, Any] = {"command": command} if isinstance(command, str) else {"argv": list(command)}
    if fields.get("env") is not None:
        fields["env"] = dict(fields["env"])
    body.update(drop_none(fields))
    return body


def command_timeout(box: AsyncBox, timeout_ms: Optional[int]) -> float:
    """The HTTP timeout of a command: its own (default 60 s) and a margin."""
    return max(box._transport.config.timeout, (timeout_ms or 60_000) / 1000 + 30)
