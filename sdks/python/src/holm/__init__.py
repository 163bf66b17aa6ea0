"""holm for Python: boxes (Linux desktops for AI agents) through holmd's REST
API, sync (`Holm`, `Box`) and async (`AsyncHolm`, `AsyncBox`).

    import holm

    with holm.Holm() as client, client.create(browser=False) as box:
        box.type("hello")
        shot = box.screenshot()

The server's address and token come from ``HOLM_SERVER_URL`` and
``HOLM_SERVER_TOKEN`` unless given. Errors are `holm.errors.HolmError`s in
the API's one shape. The drop-in computers for agent frameworks are in
`holm.compat`.
"""

from . import actions, errors, png, types
from ._async_box import AsyncBox
from ._async_client import AsyncHolm
from ._async_terminal import AsyncTerminal
from ._core import DEFAULT_SERVER_URL, Retry, Screenshot
from ._sync_box import Box
from ._sync_client import Holm
from ._sync_terminal import Terminal
from .errors import BoxNotRunningError, HolmError

__version__ = "0.1.0"

__all__ = [
    "AsyncBox",
    "AsyncHolm",
    "AsyncTerminal",
    "Box",
    "BoxNotRunningError",
    "DEFAULT_SERVER_URL",
    "Holm",
    "HolmError",
    "Retry",
    "Screenshot",
    "Terminal",
    "actions",
    "errors",
    "png",
    "types",
]

#: What the generated reference (docs/sdks/python-reference.md) describes.
REFERENCE_CLASSES = [Holm, Box, Terminal, Screenshot, Retry, png.Image]
REFERENCE_FUNCTIONS = [png.decode]
