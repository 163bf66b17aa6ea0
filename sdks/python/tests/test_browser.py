"""Chromium's page tools and state, and the bridge: Python's Playwright
(pinned; it downloads no browser here, it only connects) drives the box's
Chromium over CDP with the URL and header `connect_over_cdp` hands it."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright

import holm
from holm import errors

from conftest import EVENTS_URL


def test_page_tools_read_and_drive_a_tab(events: holm.Box):
    page = events.navigate(EVENTS_URL)
    assert page["title"] == "holm events"
    events.page_fill("#field", "filled")
    assert events.evaluate("document.getElementById('field').value")["value"] == "filled"
    events.page_click("#go")
    events.page_wait("#out")
    assert "clicked 1" in events.page_text()["content"]
    events.page_type(" typed", selector="#field")
    events.page_press("End", selector="#field")
    assert events.evaluate("document.getElementById('field').value")["value"] == "filled typed"
    assert '<button id="go"' in events.page_html()["content"]
    with pytest.raises(errors.PageErrorError):
        events.evaluate("throw new Error('boom')")
    shot = events.page_screenshot()
    assert shot.format == "png" and shot.width > 0 and shot.data.startswith(b"\x89PNG")


def test_tabs_open_move_through_history_switch_and_close(desk: holm.Box):
    before = desk.tabs()
    tab = desk.open_tab("about:blank")
    assert tab["id"] in {t["id"] for t in desk.tabs()} and tab["current"]
    second = EVENTS_URL + "?second"
    desk.navigate(EVENTS_URL, tab=tab["id"])
    desk.navigate(second, tab=tab["id"])
    assert desk.page_back(tab["id"])["url"] == EVENTS_URL
    assert desk.page_forward(tab["id"])["url"] == second
    assert desk.page_reload(tab["id"])["url"] == second
    events_tab = [t for t in before if t["url"].startswith(EVENTS_URL)][0]
    desk.activate_tab(events_tab["id"])
    assert [t for t in desk.tabs() if t["current"]][0]["id"] == events_tab["id"]
    desk.close_tab(tab["id"])
    assert tab["id"] not in {t["id"] for t in desk.tabs()}


def test_state_loads_into_the_browser_and_saves_back(desk: holm.Box):
    cookie = {
        "name": "sdk_cookie",
        "value": "kept",
        "domain": "example.test",
        "path": "/",
        "expires": 4102444800.0,
        "http_only": False,
        "secure": False,
    }
    loaded = desk.load_state({"cookies": [cookie], "origins": []})
    assert loaded["cookies"] == 1
    saved = desk.save_state()
    mine = [c for c in saved["cookies"] if c["name"] == "sdk_cookie"]
    assert mine and mine[0]["value"] == "kept" and mine[0]["domain"].endswith("example.test")


def test_playwright_connects_over_the_bridge(events: holm.Box):
    access = events.bridge()
    assert access["headers"]["Authorization"].startswith("Bearer ") or access["headers"].get("authorization")
    with sync_playwright() as p:
        browser = events.connect_over_cdp(p.chromium)
        pages = [pg for ctx in browser.contexts for pg in ctx.pages if pg.url.startswith(EVENTS_URL)]
        assert pages, [pg.url for ctx in browser.contexts for pg in ctx.pages]
        page = pages[0]
        page.fill("#field", "from playwright")
        page.click("#go")
        assert page.text_content("#out").startswith("clicked")
        browser.close()
    # What Playwright typed is in the box's page, seen through holm.
    assert events.evaluate("document.getElementById('field').value")["value"] == "from playwright"
    # Without the bridge's header, the bridge refuses.
    with sync_playwright() as p:
        with pytest.raises(Exception):
            p.chromium.connect_over_cdp(access["http_url"], timeout=10_000)


def test_async_playwright_connects_too(events: holm.Box):
    async def main() -> str:
        async with holm.AsyncHolm() as c, async_playwright() as p:
            box = c.box(events.id)
            browser = await box.connect_over_cdp(p.chromium)
            title = await [pg for ctx in browser.contexts for pg in ctx.pages if pg.url.startswith(EVENTS_URL)][0].title()
            await browser.close()
            return title

    assert asyncio.run(main()) == "holm events"
