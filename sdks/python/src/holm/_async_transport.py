"""The async transport: one request to holmd, with its token, timeout, the one
error shape raised as typed errors, and retries of `not_ready` after
`Retry-After`. The async client and every box share one of it.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Dict, Mapping, Optional, Union

import httpx

from ._core import REQUEST_ID, Config, Lines, _asleep, path_of, query_of
from ._errors import HolmError, from_answer, timed_out, unreachable
from ._routes import Route

#: Leave the call's timeout as the client's.
DEFAULT: Any = object()

Body = Union[bytes, str, None]


class AsyncTransport:
    """Sends requests to one holmd (an ``httpx.AsyncClient`` underneath)."""

    def __init__(self, config: Config, http: Optional[httpx.AsyncClient] = None) -> None:
        self.config = config
        self.own_http = http is None
        self.http = http or httpx.AsyncClient(timeout=httpx.Timeout(config.timeout, connect=10.0))
        #: How many times a call was tried again after `not_ready` (for tests and logs).
        self.retries = 0

    def url(self, route: Route, params: Optional[Mapping[str, Any]] = None) -> str:
        return self.config.url + path_of(route, params or {})

    async def send(
        self,
        route: Route,
        params: Optional[Mapping[str, Any]] = None,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json: Any = None,
        content: Body = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Any = DEFAULT,
        stream: bool = False,
        retry: bool = True,
    ) -> httpx.Response:
        """Sends a request and answers its response, raising the error it
        carries; `not_ready` is tried again as the client's `Retry` says."""
        url = self.url(route, params)
        q = query_of(route, query)
        h: Dict[str, str] = {**self.config.headers, **self.config.auth(), **(headers or {})}
        if content is not None and "content-type" not in {k.lower() for k in h}:
            # The web edge refuses a body without its type.
            h["content-type"] = "application/octet-stream"
        secs = self.config.timeout if timeout is DEFAULT else timeout
        limit = httpx.Timeout(secs, connect=10.0)
        started = time.monotonic()
        attempt = 0
        while True:
            request = self.http.build_request(
                route.method, url, params=q, json=json, content=content, headers=h, timeout=limit
            )
            try:
                response = await self.http.send(request, stream=stream)
            except httpx.TimeoutException as e:
                raise timed_out(url, secs) from e
            except httpx.TransportError as e:
                raise unreachable(url, e) from e
            if response.status_code < 400:
                return response
            try:
                body = await response.aread()
            except httpx.TransportError as e:
                raise unreachable(url, e) from e
            finally:
                await response.aclose()
            error = from_answer(response.status_code, body, response.headers.get(REQUEST_ID), url)
            delay = self.config.retry.delay(error, response.headers.get("retry-after"), attempt) if retry else None
            if delay is None or time.monotonic() - started + delay > self.config.retry.budget:
                raise error
            self.retries += 1
            attempt += 1
            await _asleep(delay)

    async def json(self, route: Route, params: Optional[Mapping[str, Any]] = None, **kw: Any) -> Any:
        """Sends a request and answers its JSON body (None for 204)."""
        response = await self.send(route, params, **kw)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError as e:
            raise HolmError(f"{response.url} answered a body that is not JSON", code="internal") from e

    async def data(self, route: Route, params: Optional[Mapping[str, Any]] = None, **kw: Any) -> bytes:
        """Sends a request and answers its raw body."""
        response = await self.send(route, params, **kw)
        return response.content

    async def ndjson(
        self, route: Route, params: Optional[Mapping[str, Any]] = None, **kw: Any
    ) -> AsyncIterator[Any]:
        """Sends a request and yields each line of its NDJSON answer as it comes."""
        kw.setdefault("timeout", None)
        response = await self.send(route, params, stream=True, **kw)
        lines = Lines()
        try:
            try:
                async for chunk in response.aiter_bytes():
                    for value in lines.feed(chunk):
                        yield value
            except httpx.TimeoutException as e:
                raise timed_out(str(response.url), kw.get("timeout")) from e
            except httpx.TransportError as e:
                raise unreachable(str(response.url), e) from e
            for value in lines.end():
                yield value
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        if self.own_http:
            await self.http.aclose()
