"""The one error shape as typed exceptions, against the real server: each
refusal carries its code, message, hint, details and request id, and
changes nothing; a server that cannot be reached and a call that takes too
long are errors of the same shape; `not_ready` is tried again after
`Retry-After`."""

from __future__ import annotations

import os

import httpx
import pytest

import holm
from holm import errors


def test_a_wrong_token_is_unauthorized_with_a_request_id():
    with holm.Holm(token="not-the-token") as c:
        with pytest.raises(errors.UnauthorizedError) as e:
            c.boxes()
    assert e.value.code == "unauthorized" and e.value.status == 401
    assert e.value.request_id and e.value.request_id.startswith("req_")
    assert "not-the-token" not in str(e.value)


def test_an_unknown_box_is_not_found_with_a_hint_and_typed_details(client: holm.Holm):
    with pytest.raises(errors.NotFoundError) as e:
        client.get("box_nosuchbox0")
    assert e.value.kind == "no_such_box" and e.value.details["box_id"] == "box_nosuchbox0"
    assert e.value.hint == "GET /v1/boxes lists the boxes"
    assert e.value.request_id


def test_a_wrong_field_is_refused_naming_it_and_nothing_is_made(client: holm.Holm):
    before = {b.id for b in client.boxes()}
    with pytest.raises(errors.InvalidRequestError) as e:
        client.create(spec={"screens": 2, "no_such_field": 1})  # type: ignore[typeddict-unknown-key]
    assert "no_such_field" in str(e.value.details) + e.value.message
    assert {b.id for b in client.boxes()} == before
    with pytest.raises(TypeError, match="unknown field 'colour'"):
        client.create(colour="blue")


def test_a_missing_file_is_also_pythons_file_not_found(plain: holm.Box):
    with pytest.raises(FileNotFoundError) as e:
        plain.read_file("/tmp/holm-no-such-file")
    assert isinstance(e.value, errors.HolmError) and e.value.code == "file_not_found"


def test_a_server_that_does_not_answer_is_unavailable():
    with holm.Holm("http://127.0.0.1:9", token="x", timeout=5) as c:
        with pytest.raises(errors.UnavailableError) as e:
            c.health()
    assert "cannot reach holmd at http://127.0.0.1:9" in e.value.message
    assert e.value.hint and "HOLM_SERVER_URL" in e.value.hint


def test_a_call_longer_than_its_timeout_is_a_timeout(plain: holm.Box):
    with holm.Holm(timeout=1) as c:
        box = c.box(plain.id)
        with pytest.raises(TimeoutError) as e:
            # The HTTP timeout follows the command's own, so ask for a read
            # that waits: a process's output with wait_ms past the timeout.
            proc = box.spawn(["sleep", "30"])
            try:
                c._transport.json(
                    holm._routes.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT,
                    {"id": plain.id, "process": proc["id"]},
                    query={"wait_ms": 10_000},
                )
            finally:
                box.kill(proc["id"])
    assert isinstance(e.value, errors.HolmError) and e.value.code == "timeout"


def test_not_ready_is_tried_again_after_retry_after(client: holm.Holm):
    """A box asked for a screenshot while it starts answers not_ready with
    Retry-After; the client waits that long and tries again, until the
    screenshot comes."""
    seen = []

    def record(response: httpx.Response) -> None:
        seen.append((response.status_code, response.headers.get("retry-after")))

    http = httpx.Client(event_hooks={"response": [record]}, timeout=60)
    with holm.Holm(http=http, retry=holm.Retry(budget=300)) as c:
        box = c.create(browser=False, wait=False)
        try:
            shot = box.screenshot()
            assert shot.width > 0 and shot.data.startswith(b"\x89PNG")
            refused = [s for s in seen if s[0] == 503]
            assert refused, f"the box was never caught starting: {seen}"
            assert all(r == "1" for _, r in refused), refused
            assert c.retries == len(refused)
        finally:
            box.remove()
    http.close()
    # Without retries, the same refusal is raised as it is.
    with holm.Holm(retry=holm.Retry(budget=0)) as c:
        box = c.create(browser=False, wait=False)
        try:
            with pytest.raises(errors.NotReadyError) as e:
                box.screenshot()
            assert e.value.kind == "box_starting" and e.value.status == 503
        finally:
            box.remove()


def test_the_token_never_shows(client: holm.Holm):
    token = os.environ["HOLM_SERVER_TOKEN"]
    assert token not in repr(client) and token not in repr(client._transport.config)
