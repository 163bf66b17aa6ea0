"""The examples and the README's Python snippet run as written, against a
real box each, and leave what they say in it."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import holm

from conftest import ROOT, SDK


def run(path: Path, *args: str, cwd: Path = SDK, env: dict = None, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(path), *args], cwd=cwd, env={**os.environ, **(env or {})},
        capture_output=True, text=True, timeout=timeout,
    )
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_the_agent_loop_types_its_line_into_a_terminal(client: holm.Holm):
    before = {b.id for b in client.boxes()}
    out = run(SDK / "examples" / "agent_loop.py").stdout
    lines = out.splitlines()
    box_id = lines[0].split()[1]
    assert box_id not in before
    assert any(re.match(r"step \d+: act \(2 actions\)", l) for l in lines), out
    assert re.match(r"step \d+: done, /tmp/agent-loop.txt holds the line", lines[-1]), out
    # The example removed its box.
    assert client.get(box_id).state == "removed"


def test_playwright_over_the_bridge_from_python(desk: holm.Box):
    out = run(SDK / "examples" / "playwright_bridge.py", env={"HOLM_BOX_ID": desk.id}).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {
        "box": desk.id,
        "title": "hello from holm",
        "url": "data:text/html,<title>hello from holm</title><h1 id=hi>hello</h1>",
        "holm_sees_it": True,
    }
    assert desk.state == "running"


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- python-snippet -->\s*```python\n(.*?)```\s*<!-- /python-snippet -->", text, re.S)
    assert m, "README.md has no Python snippet between <!-- python-snippet --> markers"
    return m.group(1)


def test_the_readme_snippet_runs_as_written(tmp_path: Path, client: holm.Holm):
    script = tmp_path / "snippet.py"
    script.write_text(readme_snippet())
    out = run(script, cwd=tmp_path).stdout.split()
    box_id, width, height = out[0], int(out[1]), int(out[3])
    data = (tmp_path / "box.png").read_bytes()
    assert data.startswith(b"\x89PNG") and struct.unpack(">II", data[16:24]) == (width, height)
    assert out[-1] == "x86_64"
    assert client.get(box_id).state == "removed"
