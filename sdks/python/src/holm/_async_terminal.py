"""`AsyncTerminal`: a real pty in a box over a WebSocket. Binary frames carry
its bytes both ways; text frames are JSON (resize from the client; ready,
error and exit from the server).
"""

from __future__ import annotations

import asyncio  # async-only
import json
import time
from typing import Any, Mapping, Optional, Union
from urllib.parse import urlencode

from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from ._core import REQUEST_ID, TIMEOUTS, query_of
from ._errors import HolmError, from_answer, unreachable
from ._routes import Route
from .errors import ERRORS


class AsyncTerminal:
    """An open terminal in a box: `send` types, `read` answers what it
    printed, `resize` changes its size, `close` ends it. After its program
    ends, `read` answers ``b""`` and `exit_code` (or `signal`) says how."""

    def __init__(self, ws: Any, ready: Mapping[str, Any], url: str) -> None:
        self._ws = ws
        self._url = url
        self._pending = b""
        #: The process id of its program in the box.
        self.pid: int = ready["pid"]
        #: Its size when it opened.
        self.cols: int = ready["cols"]
        #: Its size when it opened.
        self.rows: int = ready["rows"]
        #: Whether its program ended.
        self.exited = False
        #: The program's exit code, when it ended with one.
        self.exit_code: Optional[int] = None
        #: The signal that ended the program, when one did.
        self.signal: Optional[str] = None

    @classmethod
    async def open(
        cls, transport: Any, route: Route, params: Mapping[str, Any], query: Mapping[str, Any]
    ) -> "AsyncTerminal":
        url = transport.url(route, params)
        q = query_of(route, query)
        if q:
            url += "?" + urlencode(q)
        ws_url = "ws" + url[len("http") :] if url.startswith("http") else url
        headers = {**transport.config.headers, **transport.config.auth()}
        try:
            ws = await async_connect(
                ws_url, additional_headers=headers, max_size=None, open_timeout=transport.config.timeout
            )
        except InvalidStatus as e:
            response = e.response
            raise from_answer(
                response.status_code, bytes(response.body or b""), response.headers.get(REQUEST_ID), url
            ) from e
        except (OSError, InvalidHandshake, *TIMEOUTS) as e:
            raise unreachable(url, e) from e
        first = await _recv(ws, transport.config.timeout)
        try:
            ready = json.loads(first) if isinstance(first, str) else {}
        except ValueError:
            ready = {}
        if ready.get("type") != "ready":
            await ws.close()
            raise HolmError(f"{url}: the terminal's first frame is not ready", code="internal")
        return cls(ws, ready, url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(pid={self.pid}, {self.cols}x{self.rows}, exited={self.exited})"

    async def __aenter__(self) -> "AsyncTerminal":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def send(self, data: Union[bytes, str]) -> None:
        """Types bytes (or text, as UTF-8) into the terminal."""
        if self.exited:
            raise ERRORS["conflict"]("the terminal's program has ended", hint="open a new terminal")
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            await self._ws.send(payload)
        except ConnectionClosed as e:
            raise ERRORS["conflict"]("the terminal is closed", hint="open a new terminal") from e

    async def resize(self, cols: int, rows: int) -> None:
        """Changes the terminal's size (a refusal comes back from `read`)."""
        await self._ws.send(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    async def read(self, timeout: Optional[float] = None) -> bytes:
        """The next bytes the terminal printed, waiting at most `timeout`
        seconds (None: as long as it takes); ``b""`` once it ended. A refused
        frame raises its error."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        while not self.exited:
            try:
                message = await _recv(self._ws, timeout)
            except ConnectionClosed:
                self.exited = True
                break
            if message is None:
                raise ERRORS["timeout"](f"the terminal printed nothing in {timeout:g} s")
            if isinstance(message, bytes):
                return message
            event = json.loads(message)
            if event.get("type") == "exit":
                self.exited = True
                self.exit_code = event.get("exit_code")
                self.signal = event.get("signal")
            elif event.get("type") == "error":
                e = event.get("error") or {}
                raise ERRORS.get(e.get("code"), HolmError)(
                    e.get("message", "refused"), code=e.get("code"), hint=e.get("hint"), details=e.get("details")
                )
        return b""

    async def read_until(self, pattern: Union[bytes, str], timeout: float = 30.0) -> bytes:
        """Reads until the output holds `pattern`; answers everything read up
        to and including it (the rest is kept for the next read)."""
        want = pattern.encode("utf-8") if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen = b""
        while want not in seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ERRORS["timeout"](f"the terminal did not print {want!r} in {timeout:g} s; it printed {seen[-300:]!r}")
            chunk = await self.read(left)
            if not chunk and self.exited:
                raise ERRORS["conflict"](f"the terminal ended before it printed {want!r}; it printed {seen[-300:]!r}")
            seen += chunk
        end = seen.index(want) + len(want)
        self._pending = seen[end:] + self._pending
        return seen[:end]

    async def wait(self, timeout: float = 60.0) -> Optional[int]:
        """Reads until the program ends; answers its exit code."""
        deadline = time.monotonic() + timeout
        while not self.exited:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ERRORS["timeout"](f"the terminal's program did not end in {timeout:g} s")
            self._pending = b""
            await self.read(left)
        return self.exit_code

    async def close(self) -> None:
        """Closes the connection (the program gets a hang-up)."""
        await self._ws.close()


async def _recv(ws: Any, timeout: Optional[float]) -> Any:
    """The next frame, or None after `timeout` seconds."""
    # async-only: start
    try:
        return await asyncio.wait_for(ws.recv(), timeout)
    except asyncio.TimeoutError:
        return None
    # async-only: end
    # sync-only: try:
    # sync-only:     return ws.recv(timeout=timeout)
    # sync-only: except TimeoutError:
    # sync-only:     return None
