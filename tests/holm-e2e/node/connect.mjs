// A real Playwright client for the end-to-end tests: connects to a box's
// Chromium through the bridge, finds the tab showing PAGE_URL, reads its
// title, clicks #go and reads #out. Prints one JSON line: the result, or
// {"error": "..."} (exit 2) when Playwright fails, such as a refused bridge.
//
//   node connect.mjs ENDPOINT_URL HEADERS_JSON PAGE_URL
import { chromium } from 'playwright-core';

const [endpoint, headersJson, pageUrl] = process.argv.slice(2);
const headers = JSON.parse(headersJson || '{}');

let browser;
try {
  browser = await chromium.connectOverCDP(endpoint, { headers, timeout: 20000 });
  const pages = browser.contexts().flatMap((c) => c.pages());
  const page = pages.find((p) => p.url().startsWith(pageUrl));
  if (!page) throw new Error(`no tab shows ${pageUrl}; tabs: ${pages.map((p) => p.url()).join(', ')}`);
  const title = await page.title();
  await page.click('#go', { timeout: 10000 });
  await page.waitForFunction(() => document.querySelector('#out').textContent.startsWith('clicked'), null, { timeout: 10000 });
  const out = await page.textContent('#out');
  console.log(JSON.stringify({ title, out, version: browser.version() }));
  // For a browser reached with connectOverCDP, close() only disconnects:
  // the box's browser keeps running (the tests connect again after this).
  await browser.close();
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message || e) }));
  process.exit(2);
}
