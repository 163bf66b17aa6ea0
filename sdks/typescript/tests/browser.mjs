// Chromium's page tools and state, and the bridge: playwright-core (pinned;
// it only connects, so no browser is downloaded) drives the box's Chromium
// over CDP with the URL and header `connectOverCdp` hands it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { PageErrorError } from "@holm/sdk";
import { EVENTS_URL, desk, events, fieldValue } from "./helpers.mjs";

test("page tools read and drive a tab", async () => {
  const box = await events();
  assert.equal((await box.navigate(EVENTS_URL)).title, "holm events");
  await box.pageFill("#field", "filled");
  assert.equal(await fieldValue(box), "filled");
  await box.pageClick("#go");
  await box.pageWait("#out");
  assert.ok((await box.pageText()).content.includes("clicked 1"));
  await box.pageType(" typed", { selector: "#field" });
  await box.pagePress("End", { selector: "#field" });
  assert.equal(await fieldValue(box), "filled typed");
  assert.ok((await box.pageHtml()).content.includes('<button id="go"'));
  await assert.rejects(box.evaluate("throw new Error('boom')"), PageErrorError);
  const shot = await box.pageScreenshot();
  assert.equal(shot.format, "png");
  assert.ok(shot.width > 0);
});

test("tabs open, move through their history, switch and close", async () => {
  const box = await desk();
  const before = await box.tabs();
  const tab = await box.openTab("about:blank");
  assert.ok(tab.current);
  const second = `${EVENTS_URL}?second`;
  await box.navigate(EVENTS_URL, { tab: tab.id });
  await box.navigate(second, { tab: tab.id });
  assert.equal((await box.pageBack(tab.id)).url, EVENTS_URL);
  assert.equal((await box.pageForward(tab.id)).url, second);
  assert.equal((await box.pageReload(tab.id)).url, second);
  assert.ok((await box.tabs()).some((t) => t.id === tab.id));
  const eventsTab = before.find((t) => t.url.startsWith(EVENTS_URL));
  await box.activateTab(eventsTab.id);
  assert.equal((await box.tabs()).find((t) => t.current).id, eventsTab.id);
  await box.closeTab(tab.id);
  assert.ok(!(await box.tabs()).some((t) => t.id === tab.id));
});

test("state loads into the browser and saves back", async () => {
  const box = await desk();
  const cookie = { name: "sdk_ts_cookie", value: "kept", domain: "example.test", path: "/", expires: 4102444800, http_only: false, secure: false };
  assert.equal((await box.loadState({ cookies: [cookie], origins: [] })).cookies, 1);
  const mine = (await box.saveState()).cookies.filter((c) => c.name === "sdk_ts_cookie");
  assert.equal(mine[0]?.value, "kept");
});

test("playwright connects over the bridge", async () => {
  const box = await events();
  const browser = await box.connectOverCdp(chromium);
  try {
    const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url().startsWith(EVENTS_URL));
    assert.ok(page, "the events page is among the bridge's pages");
    await page.fill("#field", "from playwright");
    await page.click("#go");
    assert.ok((await page.textContent("#out")).startsWith("clicked"));
  } finally {
    await browser.close();
  }
  // What Playwright typed is in the box's page, seen through holm; the box's
  // browser still runs.
  assert.equal(await fieldValue(box), "from playwright");
  assert.equal((await box.refresh()).state, "running");
  // Without the bridge's header, the bridge refuses.
  const access = await box.bridge();
  await assert.rejects(chromium.connectOverCDP(access.http_url, { timeout: 10_000 }));
});
