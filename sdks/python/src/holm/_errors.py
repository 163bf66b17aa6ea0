"""The base of every error the SDK raises: the API's one error shape.

The classes per code are generated into `holm.errors`; this module holds
what they share, and the turning of an answer (or a failure to get one) into
the right class.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional


class HolmError(Exception):
    """An error in the API's one shape: `code`, `message`, `hint`, `details`
    and `request_id`, plus the HTTP `status` when the server answered.

    A failure to reach the server is one too (`unavailable`, with a hint), and
    so is a call that took longer than its timeout (`timeout`).
    """

    #: The code a class stands for (set on each generated subclass).
    code_name = ""

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        hint: Optional[str] = None,
        details: Any = None,
        request_id: Optional[str] = None,
        status: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        #: The error code, such as ``not_found`` (the ErrorCode schema).
        self.code: str = code or self.code_name or "internal"
        #: What happened.
        self.message: str = message
        #: What to do next, in REST's terms, when the server said.
        self.hint: Optional[str] = hint
        #: Typed details (``details["kind"]`` names them), when there are any.
        self.details: Any = details
        #: The request id (also the ``x-request-id`` header), to quote in a report.
        self.request_id: Optional[str] = request_id
        #: The HTTP status, when the server answered.
        self.status: Optional[int] = status

    def __str__(self) -> str:
        text = f"error[{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        if self.request_id:
            text += f"\n  request id: {self.request_id}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, request_id={self.request_id!r})"

    @property
    def kind(self) -> Optional[str]:
        """The kind of the typed details (``no_such_box``, ``browser_starting``...)."""
        if isinstance(self.details, dict):
            kind = self.details.get("kind")
            return kind if isinstance(kind, str) else None
        return None

    def to_dict(self) -> Dict[str, Any]:
        """The error as the API writes it: ``{"error": {...}}``."""
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "hint": self.hint,
                "details": self.details,
                "request_id": self.request_id,
            }
        }


class BoxNotRunningError(HolmError):
    """A box asked to run (created, started or forked with a wait) ended in
    another state, such as ``failed``; `details["box"]` is the box, and its
    reason is the message."""

    code_name = "not_running"


def from_answer(status: int, body: bytes, request_id: Optional[str], url: str) -> HolmError:
    """The error an answer carries: its body in the one shape, or, when the
    body is not one, an error named by its status."""
    from .errors import ERRORS

    try:
        error = json.loads(body.decode("utf-8"))["error"]
        code = str(error["code"])
        message = str(error["message"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        code = {401: "unauthorized", 404: "not_found", 502: "guest_unreachable", 503: "unavailable"}.get(
            status, "internal"
        )
        return ERRORS.get(code, HolmError)(
            f"{url} answered {status}", code=code, request_id=request_id, status=status
        )
    cls = ERRORS.get(code, HolmError)
    return cls(
        message,
        code=code,
        hint=error.get("hint"),
        details=error.get("details"),
        request_id=error.get("request_id") or request_id,
        status=status,
    )


def unreachable(url: str, cause: BaseException) -> HolmError:
    """A server that could not be reached, as an `unavailable` error."""
    from .errors import ERRORS

    server = url.split("/v1", 1)[0]
    return ERRORS["unavailable"](
        f"cannot reach holmd at {server}: {cause}",
        hint="check that holmd runs and that HOLM_SERVER_URL points at it",
    )


def timed_out(url: str, secs: Optional[float]) -> HolmError:
    """A call that took longer than its timeout, as a `timeout` error."""
    from .errors import ERRORS

    path = "/v1" + url.split("/v1", 1)[1] if "/v1" in url else url
    after = f" after {secs:g} s" if secs else ""
    return ERRORS["timeout"](
        f"{path} did not answer{after}",
        hint="pass a longer timeout to the call or the client (timeout=...)",
    )
