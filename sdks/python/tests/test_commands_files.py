"""Commands (run, stream), background processes (output, follow, stdin,
signals, kill), files, and the terminal over its WebSocket, sync and async,
in the plain box."""

from __future__ import annotations

import asyncio

import pytest

import holm
from holm import errors


def test_run_with_a_shell_or_argv_env_cwd_stdin_and_a_timeout(plain: holm.Box):
    r = plain.run("echo $GREETING from $(pwd); echo oops >&2; exit 3", env={"GREETING": "hi"}, cwd="/tmp")
    assert (r["stdout"], r["stderr"], r["exit_code"], r["timed_out"]) == ("hi from /tmp\n", "oops\n", 3, False)
    assert plain.run(["printf", "%s|", "a b", "c"])["stdout"] == "a b|c|"
    assert plain.run(["cat"], stdin="fed in")["stdout"] == "fed in"
    slow = plain.run("sleep 20", timeout_ms=300)
    assert slow["timed_out"] is True


def test_stream_yields_events_as_they_happen(plain: holm.Box):
    events = list(plain.stream("echo one; echo two >&2; echo three"))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "exit" and events[-1]["exit_code"] == 0
    out = "".join(e["data"] for e in events if e["type"] == "stdout")
    assert out == "one\nthree\n" and any(e["type"] == "stderr" and "two" in e["data"] for e in events)


def test_background_processes_take_stdin_and_signals(plain: holm.Box):
    p = plain.spawn(["sh", "-c", "while read line; do echo got:$line; done; echo closed"], tag="reader")
    assert p["id"] in {q["id"] for q in plain.processes()}
    plain.write_stdin(p["id"], "first\n")
    page = plain.process_output(p["id"], cursor=0, wait_ms=10_000)
    assert any(e.get("data") == "got:first\n" for e in page["data"]), page
    plain.write_stdin(p["id"], b"second\n", eof=True)
    followed = list(plain.follow(p["id"], cursor=page["next_cursor"]))
    assert "".join(e.get("data", "") for e in followed) == "got:second\nclosed\n"
    assert followed[-1]["type"] == "exit" and followed[-1]["exit_code"] == 0
    assert plain.process(p["id"])["state"] == "exited"

    sleeper = plain.spawn("sleep 600")
    plain.signal(sleeper["id"], "TERM")
    ended = list(plain.follow(sleeper["id"]))
    assert ended[-1]["type"] == "exit" and ended[-1]["signal"] in ("TERM", "SIGTERM", "15")
    plain.kill(sleeper["id"])
    with pytest.raises(errors.NotFoundError):
        plain.process(sleeper["id"])


def test_files_write_read_list_stat_rename_and_remove(plain: holm.Box):
    info = plain.write_file("/tmp/sdk/a/b.txt", "bee", mode="640")
    assert info["path"] == "/tmp/sdk/a/b.txt" and info["size"] == 3
    assert plain.read_text("/tmp/sdk/a/b.txt") == "bee"
    plain.write_file("/tmp/sdk/a/bin", bytes(range(256)))
    assert plain.read_file("/tmp/sdk/a/bin") == bytes(range(256))
    assert plain.run("stat -c %a /tmp/sdk/a/b.txt")["stdout"].strip() == "640"
    assert plain.mkdir("/tmp/sdk/c/d")["type"] == "dir"
    names = {f["path"] for f in plain.list_files("/tmp/sdk", depth=3)}
    assert {"/tmp/sdk/a/b.txt", "/tmp/sdk/a/bin", "/tmp/sdk/c/d"} <= names
    assert plain.rename("/tmp/sdk/a/b.txt", "/tmp/sdk/c/b.txt")["path"] == "/tmp/sdk/c/b.txt"
    assert plain.stat("/tmp/sdk/a/b.txt")["exists"] is False
    with pytest.raises(errors.DirectoryNotEmptyError):
        plain.remove_file("/tmp/sdk")
    plain.remove_file("/tmp/sdk", recursive=True)
    assert plain.run("test -e /tmp/sdk")["exit_code"] == 1


def test_the_terminal_is_a_real_pty(plain: holm.Box):
    with plain.terminal(cols=100, rows=30) as term:
        assert term.pid > 0 and (term.cols, term.rows) == (100, 30)
        term.send("stty size; echo mark-$((6*7))\n")
        assert b"30 100" in term.read_until("mark-42", timeout=30)
        term.resize(120, 40)
        term.send("stty size\n")
        term.read_until("40 120", timeout=30)
        term.send("exit 5\n")
        assert term.wait(30) == 5
    assert term.exited and term.read() == b""


def test_the_async_client_does_the_same(plain: holm.Box):
    async def main() -> None:
        async with holm.AsyncHolm() as c:
            box = c.box(plain.id)
            assert (await box.run("echo async"))["stdout"] == "async\n"
            events = [e async for e in box.stream("echo streamed")]
            assert events[-1]["type"] == "exit"
            await box.write_file("/tmp/async.txt", "x")
            assert await box.read_text("/tmp/async.txt") == "x"
            shot = await box.screenshot(max_width=200)
            assert shot.width == 200
            term = await box.terminal(command="echo from-async-term")
            async with term:
                assert b"from-async-term" in await term.read_until("from-async-term", timeout=30)
                assert await term.wait(30) == 0
            assert (await c.get(plain.id)).state == "running"
            assert [b async for b in c.progress(plain.id, timeout_secs=5)][-1]["type"] == "box"

    asyncio.run(main())
