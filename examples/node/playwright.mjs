// Playwright connecting to a box's Chromium through the bridge.
//
//   npm install
//   holm bridge "$BOX" --json > bridge.json
//   node playwright.mjs bridge.json https://example.com
//
// The bridge answers the browser's WebSocket address and the header with
// the bridge's own secret (not the box's); playwright-core downloads no
// browser, it only connects.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [accessFile, url = 'about:blank'] = process.argv.slice(2);
const access = JSON.parse(readFileSync(accessFile, 'utf8'));
const browser = await chromium.connectOverCDP(access.http_url, { headers: access.headers });
const context = browser.contexts()[0];
const page = context.pages()[0] ?? (await context.newPage());
await page.goto(url);
console.log(JSON.stringify({ title: await page.title(), url: page.url() }));
// For a browser reached over CDP, close() only disconnects: the box's
// browser keeps running.
await browser.close();
