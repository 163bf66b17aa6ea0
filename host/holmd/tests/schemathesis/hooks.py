"""holm's own checks for schemathesis (loaded through SCHEMATHESIS_HOOKS by
host/holmd/tests/schemathesis.rs).

- holm_no_server_error: no 5xx, but one: a 504 `timeout` where the request
  itself set `timeout_ms` (the page tools' wait for a page, which the
  client bounds; 504 is that code's documented status).
- holm_one_error_shape: every 4xx and 5xx is JSON with one key, `error`,
  holding `code`, `message` and `request_id` (`req_...`), `hint` (a
  string, or null where there is nothing to suggest) and `details` (an
  object or null), and nothing else.

It also makes `ast.parse` one call at a time. Python 3.11 keeps the AST
constructor's recursion depth in state shared by every thread (CPython
gh-106905), and hypothesis parses source to describe its strategies, so two
workers parsing at once fail with "AST constructor recursion depth mismatch"
(seen in CI on the coverage phase of GET /v1/boxes).
"""

import ast
import json
import threading

import schemathesis

_ast_parse = ast.parse
_ast_lock = threading.Lock()


def _parse_alone(*args, **kwargs):
    with _ast_lock:
        return _ast_parse(*args, **kwargs)


ast.parse = _parse_alone


def _error(response):
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _client_timeout(case):
    body = case.body if isinstance(case.body, dict) else {}
    query = case.query or {}
    return "timeout_ms" in body or "timeout_ms" in query


@schemathesis.check
def holm_no_server_error(ctx, response, case):
    if response.status_code < 500:
        return
    body = _error(response) or {}
    code = (body.get("error") or {}).get("code") if isinstance(body, dict) else None
    if response.status_code == 504 and code == "timeout" and _client_timeout(case):
        return
    raise AssertionError(f"server error {response.status_code}: {response.content[:500]!r}")


@schemathesis.check
def holm_one_error_shape(ctx, response, case):
    if response.status_code < 400:
        return
    kind = response.headers.get("content-type", [""])
    kind = kind[0] if isinstance(kind, list) else kind
    if not kind.startswith("application/json"):
        raise AssertionError(f"an error that is not JSON ({kind!r}): {response.content[:300]!r}")
    body = _error(response)
    if not isinstance(body, dict) or set(body) != {"error"}:
        raise AssertionError(f"not the one error shape: {response.content[:300]!r}")
    error = body["error"]
    want = {"code", "message", "hint", "request_id", "details"}
    if not isinstance(error, dict) or set(error) != want:
        raise AssertionError(f"error fields {sorted(error)} are not {sorted(want)}")
    for key in ("code", "message", "request_id"):
        if not isinstance(error[key], str) or not error[key]:
            raise AssertionError(f"error.{key} is not a non-empty string: {error!r}")
    if not error["request_id"].startswith("req_"):
        raise AssertionError(f"request_id {error['request_id']!r} is not req_...")
    if error["hint"] is not None and not (isinstance(error["hint"], str) and error["hint"]):
        raise AssertionError(f"hint is neither a non-empty string nor null: {error!r}")
    if error["details"] is not None and not isinstance(error["details"], dict):
        raise AssertionError(f"details is neither an object nor null: {error!r}")
