"""Playwright over a box's bridge, from Python: Playwright connects to the
box's Chromium with the URL and header the bridge hands out (the bridge's
own secret, not the box's), opens a page, and reads it back; holm's page
tools see the same tab.

    pip install playwright   # no browser download is needed: it only connects
    python sdks/python/examples/playwright_bridge.py [URL]

With HOLM_BOX_ID set it uses that box; otherwise it makes one and removes
it at the end.
"""

from __future__ import annotations

import json
import os
import sys

from playwright.sync_api import sync_playwright

import holm

URL = "data:text/html,<title>hello from holm</title><h1 id=hi>hello</h1>"


def main() -> None:
    url = sys.argv[1] if len(sys.argv) > 1 else URL
    given = os.environ.get("HOLM_BOX_ID")
    with holm.Holm() as client:
        box = client.get(given) if given else client.create()
        try:
            with sync_playwright() as p:
                browser = box.connect_over_cdp(p.chromium)
                page = browser.contexts[0].new_page()
                page.goto(url)
                seen = [t["url"] for t in box.tabs()]
                print(json.dumps({"box": box.id, "title": page.title(), "url": page.url, "holm_sees_it": page.url in seen}))
                page.close()
                # For a browser reached over CDP, close() only disconnects:
                # the box's browser keeps running.
                browser.close()
        finally:
            if not given:
                box.remove()


if __name__ == "__main__":
    main()
