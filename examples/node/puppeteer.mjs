// Puppeteer connecting to a box's Chromium through the bridge.
//
//   npm install
//   holm bridge "$BOX" --json > bridge.json
//   node puppeteer.mjs bridge.json https://example.com
//
// Puppeteer takes the browser's WebSocket address and the bridge's header;
// a client that cannot send headers uses ticket_ws_url instead (one
// connection, within its expiry).
import { readFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const [accessFile, url = 'about:blank'] = process.argv.slice(2);
const access = JSON.parse(readFileSync(accessFile, 'utf8'));
const browser = await puppeteer.connect({ browserWSEndpoint: access.ws_url, headers: access.headers });
const [page] = await browser.pages();
await page.goto(url);
console.log(JSON.stringify({ title: await page.title(), url: page.url() }));
// disconnect() leaves the box's browser running.
await browser.disconnect();
