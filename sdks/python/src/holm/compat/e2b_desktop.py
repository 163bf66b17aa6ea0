"""E2B Desktop's `Sandbox`, on holm: a program written for ``e2b_desktop``
moves to holm by changing its import to

    from holm.compat.e2b_desktop import Sandbox

The method names and arguments are E2B Desktop's (2.x): `create`,
`connect`, `kill`, `set_timeout`, `screenshot`, `left_click`,
`double_click`, `right_click`, `middle_click`, `scroll`, `move_mouse`,
`mouse_press`, `mouse_release`, `get_cursor_position`, `get_screen_size`,
`write`, `press`, `drag`, `wait`, `open`, `launch`,
`get_current_window_id`, `get_application_windows`, `get_window_title`,
`commands.run`, `files.read/write/...` and `stream.start/stop/get_url/
get_auth_key`. The server is holmd at ``HOLM_SERVER_URL`` with
``HOLM_SERVER_TOKEN`` (E2B's key and domain are not used).

What differs, and why:

- `create`'s `template` is not an E2B template: holm's box image is used
  (`resolution` is its screen size, 1024x768 by default as E2B's, `timeout`
  its lifetime, `metadata` its labels; `envs` go to every command; `dpi`
  and `display` are accepted and not used).
- Input goes through holm's input API, not ``xdotool`` commands; `write`
  types the whole text at once (`chunk_size` and `delay_in_ms` are
  accepted and not needed).
- `stream` is holm's viewer: `start` makes a takeover URL (a view-only one
  for ``get_url(view_only=True)``); its token is the auth key, so
  ``get_url`` always answers a URL that opens. `window_id` is accepted;
  holm's viewer shows the whole screen.
- `launch` opens a tab in the box's Chromium for the browser names
  (``google-chrome``, ``chrome``, ``chromium``, ``firefox`` when Firefox is
  not installed) and brings its window to the front; any other name runs as a
  command in the background. `open` opens URLs in Chromium and files with
  ``xdg-open`` when the box has it.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Union

from .. import actions as a
from .._sync_box import Box
from .._sync_client import Holm
from ..errors import HolmError, NotFoundError

#: E2B Desktop's key names, as holm's key table names them.
KEYS = {
    "alt_left": "alt_l",
    "alt_right": "alt_r",
    "control_left": "ctrl_l",
    "control_right": "ctrl_r",
    "shift_left": "shift_l",
    "shift_right": "shift_r",
    "super_left": "super_l",
    "super_right": "super_r",
}
BROWSERS = {"google-chrome", "chrome", "chromium", "chromium-browser", "browser"}
MOUSE = {"left": "left", "right": "right", "middle": "middle"}


def map_key(key: str) -> str:
    return KEYS.get(key.lower(), key)


@dataclass
class CommandResult:
    """A command's outcome, as E2B answers it."""

    stderr: str
    stdout: str
    exit_code: int
    error: Optional[str] = None


class CommandExitException(CommandResult, Exception):
    """A command that exited with a code other than 0 (E2B raises it)."""

    def __init__(self, stderr: str, stdout: str, exit_code: int, error: Optional[str] = None) -> None:
        CommandResult.__init__(self, stderr, stdout, exit_code, error)
        Exception.__init__(self, f"Command exited with code {exit_code} and error:\n{stderr}")

    def __str__(self) -> str:
        return f"Command exited with code {self.exit_code} and error:\n{self.stderr}"


class CommandHandle:
    """A command started with ``background=True``."""

    def __init__(self, box: Box, process: Dict[str, Any]) -> None:
        self._box = box
        self._id = process["id"]
        #: The process id in the box.
        self.pid: int = process["pid"]

    def wait(self, on_stdout: Optional[Callable[[str], None]] = None, on_stderr: Optional[Callable[[str], None]] = None) -> CommandResult:
        """Waits for the command to end; raises `CommandExitException` when it failed."""
        out, err, code = [], [], 0
        for event in self._box.follow(self._id):
            if event["type"] == "stdout":
                out.append(event["data"])
                if on_stdout:
                    on_stdout(event["data"])
            elif event["type"] == "stderr":
                err.append(event["data"])
                if on_stderr:
                    on_stderr(event["data"])
            elif event["type"] == "exit":
                code = event.get("exit_code")
                code = -1 if code is None else code
        result = CommandResult("".join(err), "".join(out), code)
        if code != 0:
            raise CommandExitException(result.stderr, result.stdout, code)
        return result

    def kill(self) -> bool:
        """Kills the command."""
        try:
            self._box.kill(self._id)
            return True
        except NotFoundError:
            return False

    def disconnect(self) -> None:
        """Stops following the command; it keeps running."""

    def send_stdin(self, data: str) -> None:
        """Writes to the command's standard input."""
        self._box.write_stdin(self._id, data)

    def close_stdin(self) -> None:
        """Closes the command's standard input."""
        self._box.write_stdin(self._id, b"", eof=True)


class Commands:
    """`sandbox.commands`: run commands in the box."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sandbox = sandbox

    def run(
        self,
        cmd: str,
        background: Optional[bool] = None,
        envs: Optional[Dict[str, str]] = None,
        user: Optional[str] = None,
        cwd: Optional[str] = None,
        on_stdout: Optional[Callable[[str], None]] = None,
        on_stderr: Optional[Callable[[str], None]] = None,
        stdin: Optional[bool] = None,
        timeout: Optional[float] = 60,
        request_timeout: Optional[float] = None,
        *,
        retain_output: bool = True,
    ) -> Any:
        """Runs `cmd` with bash; answers a `CommandResult` (raising
        `CommandExitException` on a failure), or a `CommandHandle` with
        `background`. `user` is accepted: commands run as the box's user.
        Without `retain_output`, the output goes only to the callbacks."""
        box = self._sandbox._box
        env = {**self._sandbox._envs, **(envs or {})} or None
        if background:
            return CommandHandle(box, box.spawn(cmd, cwd=cwd, env=env))
        timeout_ms = int(timeout * 1000) if timeout else 86_400_000
        if on_stdout or on_stderr:
            out, err, code = [], [], 0
            for event in box.stream(cmd, cwd=cwd, env=env, timeout_ms=timeout_ms):
                if event["type"] == "stdout":
                    out.append(event["data"])
                    if on_stdout:
                        on_stdout(event["data"])
                elif event["type"] == "stderr":
                    err.append(event["data"])
                    if on_stderr:
                        on_stderr(event["data"])
                elif event["type"] == "exit":
                    code = event.get("exit_code")
                    code = -1 if code is None else code
            stdout, stderr = "".join(out), "".join(err)
        else:
            result = box.run(cmd, cwd=cwd, env=env, timeout_ms=timeout_ms)
            stdout, stderr = result["stdout"], result["stderr"]
            code = result.get("exit_code")
            code = -1 if code is None else code
        if not retain_output:
            stdout = stderr = ""
        if code != 0:
            raise CommandExitException(stderr, stdout, code)
        return CommandResult(stderr, stdout, code)


@dataclass
class WriteInfo:
    """What a write made."""

    name: str
    type: Optional[str]
    path: str


@dataclass
class EntryInfo:
    """A file or directory."""

    name: str
    type: Optional[str]
    path: str
    size: int


class Filesystem:
    """`sandbox.files`: the box's files."""

    def __init__(self, box: Box) -> None:
        self._box = box

    def read(
        self, path: str, format: Literal["text", "bytes", "stream"] = "text", user: Optional[str] = None, request_timeout: Optional[float] = None, **_: Any
    ) -> Any:
        """A file's text (default), bytes (a bytearray), or an iterator of chunks."""
        data = self._box.read_file(path)
        if format == "bytes":
            return bytearray(data)
        if format == "stream":
            return iter([data])
        return data.decode("utf-8")

    def write(self, path: str, data: Union[str, bytes, Any], user: Optional[str] = None, request_timeout: Optional[float] = None, **_: Any) -> WriteInfo:
        """Writes a file (text, bytes or a file object), making its parents."""
        if hasattr(data, "read"):
            data = data.read()
        info = self._box.write_file(path, data)
        return WriteInfo(name=info["name"], type=info.get("type"), path=info["path"])

    def remove(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> None:
        """Removes a file or a directory and its contents."""
        self._box.remove_file(path, recursive=True)

    def list(self, path: str, depth: Optional[int] = 1, user: Optional[str] = None, request_timeout: Optional[float] = None) -> List[EntryInfo]:
        """A directory's entries."""
        return [
            EntryInfo(name=e["name"], type=e.get("type"), path=e["path"], size=e.get("size", 0))
            for e in self._box.list_files(path, depth=depth)
        ]

    def exists(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> bool:
        """Whether the path exists."""
        return bool(self._box.stat(path)["exists"])

    def make_dir(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> bool:
        """Makes a directory; False when it was there already."""
        existed = self.exists(path)
        self._box.mkdir(path)
        return not existed

    def rename(self, old_path: str, new_path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> EntryInfo:
        """Renames a path."""
        e = self._box.rename(old_path, new_path)
        return EntryInfo(name=e["name"], type=e.get("type"), path=e["path"], size=e.get("size", 0))


class Stream:
    """`sandbox.stream`: a viewer of the box's screen (holm's takeover URL)."""

    def __init__(self, box: Box) -> None:
        self._box = box
        self._grants: Dict[str, Dict[str, Any]] = {}

    def start(self, vnc_port: Optional[int] = None, port: Optional[int] = None, require_auth: bool = False, window_id: Optional[str] = None) -> None:
        """Starts the stream: a takeover URL of the screen."""
        if self._grants:
            raise RuntimeError("Stream is already running")
        self._grants["control"] = self._box.create_viewer(0, mode="control", label="e2b-desktop stream")

    def get_auth_key(self) -> str:
        """The stream's key: the token its URL carries."""
        if not self._grants:
            raise RuntimeError("Unable to retrieve stream auth key, check if require_auth is enabled")
        return self._grants["control"]["url"].split("#token=", 1)[-1]

    def get_url(self, auto_connect: bool = True, view_only: bool = False, resize: str = "scale", auth_key: Optional[str] = None) -> str:
        """The stream's URL; `view_only` answers a URL that only watches."""
        if not self._grants:
            raise RuntimeError("The stream is not running: call stream.start() first")
        if view_only:
            if "view" not in self._grants:
                self._grants["view"] = self._box.create_viewer(0, mode="view", label="e2b-desktop stream")
            return self._grants["view"]["url"]
        return self._grants["control"]["url"]

    def stop(self) -> None:
        """Stops the stream: its URLs open nothing more."""
        for grant in self._grants.values():
            self._box.revoke_viewer(grant["id"])
        self._grants = {}


class Sandbox:
    """A desktop box with E2B Desktop's methods."""

    default_template = "desktop"

    def __init__(self, box: Optional[Box] = None, *, client: Optional[Holm] = None, envs: Optional[Dict[str, str]] = None, **create: Any) -> None:
        if box is None:
            created = Sandbox.create(envs=envs, **create)
            box, client, envs = created._box, created._client, created._envs
        self._client = client
        self._box: Box = box
        self._envs: Dict[str, str] = dict(envs or {})
        self.commands = Commands(self)
        self.files = Filesystem(box)
        self._stream = Stream(box)

    @classmethod
    def create(
        cls,
        template: Optional[str] = None,
        resolution: Optional[Tuple[int, int]] = None,
        dpi: Optional[int] = None,
        display: Optional[str] = None,
        timeout: Optional[int] = None,
        metadata: Optional[Dict[str, str]] = None,
        envs: Optional[Dict[str, str]] = None,
        secure: Optional[bool] = None,
        allow_internet_access: Optional[bool] = None,
        **opts: Any,
    ) -> "Sandbox":
        """Creates a desktop box and answers once it runs (see the module's
        doc for what each argument becomes)."""
        client = Holm()
        width, height = resolution or (1024, 768)
        fields: Dict[str, Any] = {"screen_size": f"{width}x{height}"}
        if timeout:
            fields["expires_after_secs"] = int(timeout)
        if metadata:
            fields["labels"] = dict(metadata)
        box = client.create(**fields)
        return cls(box, client=client, envs=envs)

    @classmethod
    def connect(cls, sandbox_id: str, **opts: Any) -> "Sandbox":
        """The box with this id."""
        client = Holm()
        return cls(client.get(sandbox_id), client=client)

    @property
    def sandbox_id(self) -> str:
        """The box's id."""
        return self._box.id

    @property
    def box(self) -> Box:
        """The holm box underneath, for everything else holm does."""
        return self._box

    @property
    def stream(self) -> Stream:
        """The screen's stream (holm's viewer)."""
        return self._stream

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()

    def kill(self, **opts: Any) -> bool:
        """Removes the box."""
        try:
            self._box.remove()
            return True
        except NotFoundError:
            return False

    def is_running(self, **opts: Any) -> bool:
        """Whether the box runs."""
        return self._box.refresh().get("state") == "running"

    def set_timeout(self, timeout: int, **opts: Any) -> None:
        """Makes the box end `timeout` seconds from now, or later: holm only
        moves a deadline later."""
        from datetime import datetime, timezone

        info = self._box.refresh()
        end = datetime.fromisoformat(info["expires_at"].replace("Z", "+00:00"))
        left = (end - datetime.now(timezone.utc)).total_seconds()
        if timeout > left:
            self._box.extend(int(timeout - left) + 1)

    # The screen.

    def screenshot(self, format: Literal["bytes", "stream"] = "bytes") -> Any:
        """A PNG of the screen, with the pointer: a bytearray, or an iterator of chunks."""
        data = self._box.screenshot(cursor=True).data
        return iter([data]) if format == "stream" else bytearray(data)

    def get_screen_size(self) -> Tuple[int, int]:
        """The screen's (width, height)."""
        s = self._box.screen(0)
        return (s["width"], s["height"])

    def get_cursor_position(self) -> Tuple[int, int]:
        """The pointer's (x, y)."""
        c = self._box.cursor(0)
        return (c["x"], c["y"])

    # The mouse.

    def _click(self, x: Optional[int], y: Optional[int], button: str, count: int = 1) -> None:
        if (x is None) != (y is None):
            raise ValueError("Both x and y must be provided together")
        self._box.input([a.click(x, y, button=button, count=count)])  # type: ignore[arg-type]

    def left_click(self, x: Optional[int] = None, y: Optional[int] = None) -> None:
        """Left click, at (x, y) or where the pointer is."""
        self._click(x, y, "left")

    def double_click(self, x: Optional[int] = None, y: Optional[int] = None) -> None:
        """Double left click."""
        self._click(x, y, "left", 2)

    def right_click(self, x: Optional[int] = None, y: Optional[int] = None) -> None:
        """Right click."""
        self._click(x, y, "right")

    def middle_click(self, x: Optional[int] = None, y: Optional[int] = None) -> None:
        """Middle click."""
        self._click(x, y, "middle")

    def scroll(self, direction: Literal["up", "down"] = "down", amount: int = 1) -> None:
        """Turns the wheel `amount` clicks up or down where the pointer is."""
        self._box.input([a.scroll(dy=-amount if direction == "up" else amount)])

    def move_mouse(self, x: int, y: int) -> None:
        """Moves the pointer."""
        self._box.input([a.move(x, y)])

    def mouse_press(self, button: Literal["left", "right", "middle"] = "left") -> None:
        """Presses a mouse button and keeps it down."""
        self._box.input([a.mouse_down(button=MOUSE[button])])  # type: ignore[arg-type]

    def mouse_release(self, button: Literal["left", "right", "middle"] = "left") -> None:
        """Releases a mouse button."""
        self._box.input([a.mouse_up(button=MOUSE[button])])  # type: ignore[arg-type]

    def drag(self, fr: Tuple[int, int], to: Tuple[int, int]) -> None:
        """Drags with the left button from `fr` to `to`."""
        self._box.input([a.drag([{"x": fr[0], "y": fr[1]}, {"x": to[0], "y": to[1]}])])

    # The keyboard.

    def write(self, text: str, *, chunk_size: int = 25, delay_in_ms: int = 75) -> None:
        """Types text where the focus is."""
        self._box.input([a.type(text)])

    def press(self, key: Union[str, List[str]]) -> None:
        """Presses a key (``enter``) or a combination (``["ctrl", "c"]``)."""
        chord = "+".join(map_key(k) for k in key) if isinstance(key, list) else map_key(key)
        self._box.input([a.key(chord)])

    def wait(self, ms: int) -> None:
        """Waits `ms` milliseconds."""
        time.sleep(ms / 1000)

    # Apps and windows.

    def open(self, file_or_url: str) -> None:
        """Opens a URL in the box's Chromium, or a file with its default app."""
        if "://" in file_or_url:
            self._browse(file_or_url)
            return
        self._box.spawn(f"xdg-open {shlex.quote(file_or_url)}")

    def launch(self, application: str, uri: Optional[str] = None) -> None:
        """Launches an application (see the module's doc)."""
        name = application.lower()
        if name in BROWSERS or (name == "firefox" and not self._has("firefox")):
            self._browse(uri or "about:blank")
            return
        command = shlex.quote(application) + (f" {shlex.quote(uri)}" if uri else "")
        self._box.spawn(command)

    def _has(self, program: str) -> bool:
        return self._box.run(["sh", "-c", f"command -v {shlex.quote(program)}"])["exit_code"] == 0

    def _browse(self, url: str) -> None:
        self._box.open_tab(url)
        for w in self._box.windows():
            if "chrom" in (w.get("app") or "").lower():
                self._box.focus_window(w["id"])
                return

    def get_current_window_id(self) -> str:
        """The focused window's id."""
        for w in self._box.windows():
            if w.get("focused"):
                return str(w["id"])
        raise HolmError("no window has the focus", code="not_found")

    def get_application_windows(self, application: str) -> List[str]:
        """The ids of the windows of an application (by its class or name)."""
        want = application.lower()
        return [str(w["id"]) for w in self._box.windows() if want in (w.get("app") or "").lower()]

    def get_window_title(self, window_id: str) -> str:
        """A window's title."""
        for w in self._box.windows():
            if str(w["id"]) == str(window_id):
                return w.get("title") or ""
        raise HolmError(f"no window has id {window_id}", code="not_found")


__all__ = [
    "CommandExitException",
    "CommandHandle",
    "CommandResult",
    "Commands",
    "EntryInfo",
    "Filesystem",
    "Sandbox",
    "Stream",
    "WriteInfo",
]
