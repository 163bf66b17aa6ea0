"""`AsyncHolm`: an async client of one holmd: its boxes (create with
progress, get, list), runtimes, images and apps.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Dict, List, Optional

import httpx

from . import _routes as r
from . import types as t
from ._async_box import AsyncBox, check_running
from ._async_transport import AsyncTransport
from ._core import Config, Retry, drop_none, split_fields

#: Seconds a create, start or fork waits for the box to run, by default.
DEFAULT_WAIT_SECS = 600

SPEC_FIELDS = tuple(t.BoxSpec.__annotations__)
PLACEMENT_FIELDS = tuple(t.Placement.__annotations__)


class AsyncHolm:
    """An async client of one holmd.

    ``AsyncHolm()`` reads the server's address from ``HOLM_SERVER_URL``
    (default ``http://127.0.0.1:8080``) and its token from
    ``HOLM_SERVER_TOKEN``; both can be given. `timeout` is the seconds one
    call may take (waits add their own); `retry` says how calls answered
    `not_ready` are tried again. Use it as a context manager, or call
    `aclose`.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
        retry: Optional[Retry] = None,
        http: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._transport = AsyncTransport(Config.make(url, token, timeout, retry), http)

    @property
    def url(self) -> str:
        """The server's address."""
        return self._transport.config.url

    @property
    def retries(self) -> int:
        """How many calls were tried again after `not_ready` so far."""
        return self._transport.retries

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._transport.config!r})"

    async def __aenter__(self) -> "AsyncHolm":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connections (a client given an `http` keeps its own)."""
        await self._transport.aclose()

    async def health(self) -> t.ServerHealth:
        """The server answers: its status and version."""
        return await self._transport.json(r.GET_V1_HEALTH)

    async def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return await self._transport.json(r.GET_V1_OPENAPI_JSON)

    # Boxes.

    async def create(
        self,
        spec: Optional[t.BoxSpec] = None,
        *,
        placement: Optional[t.Placement] = None,
        wait: bool = True,
        timeout_secs: int = DEFAULT_WAIT_SECS,
        idempotency_key: Optional[str] = None,
        on_progress: Optional[Callable[[t.BoxEvent], Any]] = None,
        **fields: Any,
    ) -> AsyncBox:
        """Creates a box and, with `wait`, answers once it runs (raising
        `BoxNotRunningError` when it failed instead).

        The box is described by `spec` and `placement` (the CreateBox body),
        or by keywords sorted into them by name: ``create(browser=False,
        screens=2, runtime="docker", expires_after_secs=600)``.
        `on_progress` is called with each stage as it comes (the image and
        its build lines, the container, the desktop, the browser), the box
        last. With an `idempotency_key`, the same key and body answer the
        first box again (``box.info["replayed"]``).
        """
        parts = split_fields(fields, ("spec", SPEC_FIELDS), ("placement", PLACEMENT_FIELDS))
        body: Dict[str, Any] = {
            "spec": {**(spec or {}), **parts["spec"]},
            "placement": {**(placement or {}), **parts["placement"]},
        }
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        waits = wait and on_progress is None
        query = {"wait_for": "running", "timeout_secs": timeout_secs} if waits else None
        info: t.BoxInfo = await self._transport.json(
            r.POST_V1_BOXES,
            query=query,
            json=body,
            headers=headers,
            timeout=timeout_secs + 30 if waits else self._transport.config.timeout,
        )
        if on_progress is not None:
            async for event in self.progress(info["id"], timeout_secs=timeout_secs if wait else 0):
                on_progress(event)
                if event["type"] == "box":
                    info = event["box"]  # type: ignore[typeddict-item]
        if wait:
            check_running(info)
        return AsyncBox(self._transport, info)

    def box(self, box_id: str) -> AsyncBox:
        """A box by its id, without a call (its `info` holds only the id)."""
        return AsyncBox(self._transport, {"id": box_id})  # type: ignore[typeddict-item]

    async def get(self, box_id: str, *, wait_for: Optional[t.BoxState] = None, timeout_secs: int = 60) -> AsyncBox:
        """A box by its id; with `wait_for`, once it is in that state (or at
        `timeout_secs`, as it is then)."""
        box = self.box(box_id)
        await box.refresh(wait_for=wait_for, timeout_secs=timeout_secs)
        return box

    async def list_boxes(
        self,
        *,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
        state: Optional[t.BoxState] = None,
        all: Optional[bool] = None,
    ) -> t.PageOfBoxInfo:
        """One page of boxes, with its `next_cursor`; `all` includes those a
        warm pool holds."""
        query = {"cursor": cursor, "limit": limit, "state": state, "all": all}
        return await self._transport.json(r.GET_V1_BOXES, query=query)

    async def boxes(self, *, state: Optional[t.BoxState] = None, all: Optional[bool] = None) -> List[AsyncBox]:
        """Every box, page after page."""
        out: List[AsyncBox] = []
        cursor = None
        while True:
            page = await self.list_boxes(cursor=cursor, limit=100, state=state, all=all)
            out += [AsyncBox(self._transport, info) for info in page["data"]]
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    async def progress(self, box_id: str, *, timeout_secs: int = DEFAULT_WAIT_SECS) -> AsyncIterator[t.BoxEvent]:
        """The stages of a box's latest making or start so far, then each as it
        comes, until it runs, fails, or `timeout_secs` pass; the last is the
        box (``{"type": "box", "box": ...}``)."""
        async for event in self._transport.ndjson(
            r.GET_V1_BOXES_ID_PROGRESS, {"id": box_id}, query={"timeout_secs": timeout_secs}
        ):
            yield event

    # Runtimes.

    async def runtimes(self) -> List[t.RuntimeInfo]:
        """The runtimes and what each can do."""
        return (await self._transport.json(r.GET_V1_RUNTIMES))["data"]

    async def runtime(self, name: str) -> t.RuntimeInfo:
        """One runtime."""
        return await self._transport.json(r.GET_V1_RUNTIMES_NAME, {"name": name})

    async def add_runtime(self, runtime: t.AddRuntime) -> t.RuntimeInfo:
        """Adds a remote runtime (a cloud vendor account); its key is sent in
        the body and never answered."""
        return await self._transport.json(r.POST_V1_RUNTIMES, json=runtime)

    async def replace_runtime(self, name: str, runtime: t.ReplaceRuntime) -> t.RuntimeInfo:
        """Adds or replaces a remote runtime whole."""
        return await self._transport.json(r.PUT_V1_RUNTIMES_NAME, {"name": name}, json=runtime)

    async def change_runtime(self, name: str, change: t.ChangeRuntime) -> t.RuntimeInfo:
        """Changes some fields of a remote runtime, or replaces its key."""
        return await self._transport.json(r.PATCH_V1_RUNTIMES_NAME, {"name": name}, json=change)

    async def remove_runtime(self, name: str) -> t.RuntimeInfo:
        """Removes a remote runtime that no box is on."""
        return await self._transport.json(r.DELETE_V1_RUNTIMES_NAME, {"name": name})

    # Images and apps.

    async def images(self) -> List[t.ImageInfo]:
        """The images holm built."""
        return (await self._transport.json(r.GET_V1_IMAGES))["data"]

    async def build_image(self, **request: Any) -> AsyncIterator[t.BuildEvent]:
        """Builds a box image (BuildImage's fields) and yields the build's events."""
        async for event in self._transport.ndjson(r.POST_V1_IMAGES_BUILD, json=drop_none(request)):
            yield event

    async def make_base(self, runtime: Optional[str] = None) -> AsyncIterator[t.BuildEvent]:
        """Makes the air-gapped base image if it is missing, yielding its events."""
        async for event in self._transport.ndjson(r.POST_V1_IMAGES_BASE, json=drop_none({"runtime": runtime})):
            yield event

    async def prune_images(self, *, all: Optional[bool] = None, dry_run: Optional[bool] = None) -> List[t.PrunedImage]:
        """Removes box images no box uses; `dry_run` says what would go."""
        body = drop_none({"all": all, "dry_run": dry_run})
        return (await self._transport.json(r.POST_V1_IMAGES_PRUNE, json=body))["data"]

    async def apps(self) -> List[t.AppInfo]:
        """The app catalogue (what ``apps=[...]`` takes)."""
        return (await self._transport.json(r.GET_V1_APPS))["data"]
