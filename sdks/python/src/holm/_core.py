"""What the sync and async clients share, with no IO: the server's address and
token, how a route becomes a request, the retry policy for `not_ready`, and
the reading of screenshots and NDJSON streams.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union
from urllib.parse import quote

from ._errors import HolmError
from ._routes import Route

#: The address holmd listens on by default.
DEFAULT_SERVER_URL = "http://127.0.0.1:8080"
#: The environment variable naming the server's address.
ENV_URL = "HOLM_SERVER_URL"
#: The environment variable holding the server's token.
ENV_TOKEN = "HOLM_SERVER_TOKEN"

#: The headers that describe a screenshot (holm_proto::guest::headers).
WIDTH, HEIGHT, SCALE, REGION, CURSOR, SETTLED = (
    "x-holm-width",
    "x-holm-height",
    "x-holm-scale",
    "x-holm-region",
    "x-holm-cursor",
    "x-holm-settled",
)
#: Where a request's id comes back.
REQUEST_ID = "x-request-id"

#: The exceptions a timed-out wait raises (one class from Python 3.11 on).
TIMEOUTS = (TimeoutError, asyncio.TimeoutError)

#: How long a call may take, by default, in seconds (waits add their own).
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Retry:
    """How calls answered `not_ready` (a box, screen or browser still coming
    up) are tried again: after the answer's ``Retry-After`` (seconds or a
    date), else its ``details.retry_after_ms``, else a backoff of `first`
    seconds doubling up to `most`; for at most `budget` seconds in all.
    ``Retry(budget=0)`` never retries.

    Input that the screen stopped answering part way (`performed` actions
    above 0) is never repeated: the error is raised.
    """

    #: The longest time spent retrying one call, in seconds.
    budget: float = 30.0
    #: The first backoff, in seconds, when the answer says nothing.
    first: float = 0.25
    #: The longest backoff, in seconds.
    most: float = 4.0

    def delay(self, error: HolmError, retry_after: Optional[str], attempt: int) -> Optional[float]:
        """Seconds to wait before trying `error`'s call again, or None to raise."""
        if error.code != "not_ready" or self.budget <= 0:
            return None
        details = error.details if isinstance(error.details, dict) else {}
        if details.get("performed"):
            return None
        wait = parse_retry_after(retry_after)
        if wait is None and isinstance(details.get("retry_after_ms"), (int, float)):
            wait = details["retry_after_ms"] / 1000.0
        if wait is None:
            wait = min(self.most, self.first * (2**attempt)) * (0.75 + random.random() / 4)
        return max(0.0, min(wait, self.most * 8))


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """`Retry-After` in seconds: a number of seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class Config:
    """A client's server, token, timeout and retry policy."""

    url: str
    token: Optional[str]
    timeout: float
    retry: Retry
    headers: Dict[str, str] = field(default_factory=dict)

    @classmethod
    def make(
        cls,
        url: Optional[str],
        token: Optional[str],
        timeout: Optional[float],
        retry: Optional[Retry],
    ) -> "Config":
        url = url or os.environ.get(ENV_URL) or DEFAULT_SERVER_URL
        if token is None:
            token = os.environ.get(ENV_TOKEN) or None
        return cls(
            url=url.rstrip("/"),
            token=token or None,
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            retry=retry or Retry(),
        )

    def auth(self) -> Dict[str, str]:
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    def __repr__(self) -> str:
        # The token never shows.
        return f"Config(url={self.url!r}, token={'<hidden>' if self.token else None}, timeout={self.timeout})"


def segment(value: Any) -> str:
    """A path parameter, percent-encoded."""
    return quote(str(value), safe="")


def path_of(route: Route, params: Mapping[str, Any]) -> str:
    """The route's path with its `{name}` parameters filled in."""
    out = []
    for part in route.path.split("/"):
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            if name not in params:
                raise TypeError(f"{route.method} {route.path} needs {name}")
            out.append(segment(params[name]))
        else:
            out.append(part)
    return "/".join(out)


def query_of(route: Route, query: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    """The query parameters that are set, as the server reads them."""
    out: List[Tuple[str, str]] = []
    for name, value in (query or {}).items():
        if value is None:
            continue
        if name not in route.query:
            raise TypeError(f"{route.method} {route.path} takes no query parameter {name!r}")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, dict) and {"x", "y", "width", "height"} <= set(value):
            value = f"{value['x']},{value['y']},{value['width']},{value['height']}"
        elif isinstance(value, (tuple, list)):
            value = ",".join(str(v) for v in value)
        out.append((name, str(value)))
    return out


def drop_none(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A JSON body without the fields left as None (the server's defaults apply)."""
    return {k: v for k, v in values.items() if v is not None}


@dataclass
class Screenshot:
    """A screenshot: the encoded image (`data`, PNG unless asked otherwise) and
    what its headers say. No image library is needed; `holm.png.decode`
    reads a PNG's pixels."""

    #: The encoded image.
    data: bytes
    #: ``png``, ``jpeg`` or ``webp``.
    format: str
    #: Image width in pixels.
    width: int
    #: Image height in pixels.
    height: int
    #: Image pixels per screen pixel (1 when not downscaled).
    scale: float
    #: The part of the screen the image covers: (x, y, width, height).
    region: Tuple[int, int, int, int]
    #: The frame's hash (its ETag): the same for an unchanged screen.
    frame: str
    #: The pointer position in screen pixels, when the server said.
    cursor: Optional[Tuple[int, int]] = None
    #: After input with `settle`: whether the screen stopped changing in time.
    settled: Optional[bool] = None

    @property
    def media_type(self) -> str:
        """``image/png``, ``image/jpeg`` or ``image/webp``."""
        return f"image/{self.format}"

    def base64(self) -> str:
        """The image in base64, as model APIs take it."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The image as a ``data:`` URL."""
        return f"data:{self.media_type};base64,{self.base64()}"

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the image to a file."""
        with open(path, "wb") as f:
            f.write(self.data)

    def to_screen(self, x: float, y: float) -> Tuple[int, int]:
        """A point of the image in screen pixels: ``region origin + point / scale``."""
        return (round(self.region[0] + x / self.scale), round(self.region[1] + y / self.scale))

    def __repr__(self) -> str:
        return (
            f"Screenshot({self.format}, {self.width}x{self.height}, scale={self.scale}, "
            f"region={self.region}, {len(self.data)} bytes)"
        )


def read_screenshot(headers: Mapping[str, str], data: bytes, url: str) -> Screenshot:
    """A screenshot from an answer's headers and body."""
    ctype = (headers.get("content-type") or "").split(";")[0].strip()
    formats = {"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp"}
    if ctype not in formats:
        raise HolmError(f"{url} answered {ctype or 'no content-type'}, not an image", code="internal")

    def num(name: str) -> int:
        value = headers.get(name)
        if value is None:
            raise HolmError(f"{url} answered an image without {name}", code="internal")
        return int(value)

    width, height = num(WIDTH), num(HEIGHT)
    scale = float(headers.get(SCALE) or 1.0)
    region: Tuple[int, int, int, int] = (0, 0, width, height)
    if headers.get(REGION):
        parts = [int(p) for p in headers[REGION].split(",")]
        if len(parts) == 4:
            region = (parts[0], parts[1], parts[2], parts[3])
    cursor = None
    if headers.get(CURSOR):
        cx, cy = headers[CURSOR].split(",")
        cursor = (int(cx.strip()), int(cy.strip()))
    settled = None
    if headers.get(SETTLED) is not None:
        settled = headers[SETTLED] == "true"
    return Screenshot(
        data=data,
        format=formats[ctype],
        width=width,
        height=height,
        scale=scale,
        region=region,
        frame=(headers.get("etag") or "").strip('"'),
        cursor=cursor,
        settled=settled,
    )


class Lines:
    """Splits a byte stream into NDJSON values."""

    def __init__(self) -> None:
        self.buf = b""

    def feed(self, chunk: bytes) -> List[Any]:
        import json

        self.buf += chunk
        out = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            if line.strip():
                out.append(json.loads(line))
        return out

    def end(self) -> List[Any]:
        import json

        rest, self.buf = self.buf, b""
        return [json.loads(rest)] if rest.strip() else []


def split_fields(fields: Mapping[str, Any], *groups: Tuple[str, Iterable[str]]) -> Dict[str, Dict[str, Any]]:
    """Keyword arguments sorted into the bodies whose schema names them;
    a name no body takes is a TypeError naming the ones they do."""
    out: Dict[str, Dict[str, Any]] = {name: {} for name, _ in groups}
    known: Dict[str, str] = {}
    for group, names in groups:
        for n in names:
            known.setdefault(n, group)
    for key, value in fields.items():
        if key not in known:
            raise TypeError(f"unknown field {key!r}; known: {', '.join(sorted(known))}")
        if value is not None:
            out[known[key]][key] = value
    return out


async def _asleep(secs: float) -> None:
    await asyncio.sleep(secs)


def _sleep(secs: float) -> None:
    time.sleep(secs)
