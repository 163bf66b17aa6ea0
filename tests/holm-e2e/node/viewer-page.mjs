// A real Chromium (the host's, driven by playwright-core) opens a viewer
// page the way a person would. Prints one JSON line: the page's state and
// title, how long the first frame took, and the canvas scaled back to the
// screen's size as a PNG in base64. With TYPE, clicks the canvas at (X, Y)
// in screen pixels and types TYPE through the page first. Also reports
// every script the page ran (its URL and the SHA-256 of its bytes) and
// whether a planted payload ran (`window.__holmPwned`).
// {"error": "..."} (exit 2) when the page never shows the screen.
//
//   node viewer-page.mjs PAGE_URL WIDTH HEIGHT [X Y TYPE]
import { createHash } from 'node:crypto';
import { chromium } from 'playwright-core';

const [url, width, height, x, y, text] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

let browser;
try {
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
  // The page says when its canvas first shows the screen; heard from the
  // first script on, in the page's own clock (ms since navigation began).
  await page.addInitScript(() => {
    window.addEventListener('holm-first-frame', () => { window.__holmFirstFrame = performance.now(); }, { once: true });
  });
  // What the page went through, for the report when it never connects.
  const seen = [];
  // Every script the page loads is fetched here and handed to the page
  // byte for byte, so its hash is of exactly what the page got (reading a
  // response's body back from the browser afterwards can fail when the
  // browser has already let it go).
  const scripts = [];
  await page.route('**/*', async (route) => {
    const request = route.request();
    if (request.resourceType() !== 'script') return route.continue();
    try {
      const response = await route.fetch();
      const body = await response.body();
      scripts.push({ url: request.url(), status: response.status(), sha256: createHash('sha256').update(body).digest('hex') });
      await route.fulfill({ response, body });
    } catch (e) {
      // The page went away (a reload) while its script was fetched.
      seen.push('script ' + request.url() + ' not fetched: ' + e);
      await route.abort().catch(() => {});
    }
  });
  page.on('console', (m) => seen.push('console ' + m.type() + ': ' + m.text()));
  page.on('requestfailed', (r) => seen.push('failed ' + r.url().split('#')[0] + ': ' + (r.failure() || {}).errorText));
  page.on('websocket', (ws) => {
    seen.push('websocket opened');
    ws.on('close', () => seen.push('websocket closed'));
    ws.on('socketerror', (e) => seen.push('websocket error: ' + e));
  });
  const opened = Date.now();
  // Chromium ends every request in flight with ERR_NETWORK_CHANGED when
  // the host's interfaces change, which Docker does whenever a box of any
  // test starts or stops (a veth comes or goes). A page whose modules were
  // cut off that way never starts; on that event (not after a time) the
  // page is loaded again, as a person would, three times at most.
  for (let attempt = 1; ; attempt++) {
    let networkChanged;
    const changed = new Promise((resolve) => { networkChanged = resolve; });
    const onFailed = (r) => {
      if (((r.failure() || {}).errorText || '').includes('ERR_NETWORK_CHANGED')) networkChanged('changed');
    };
    page.on('requestfailed', onFailed);
    // Only the scripts of the load that showed the screen ran.
    scripts.length = 0;
    // The URL's token is in its fragment: a second goto to it would be a
    // same-document navigation, so a new load is a reload.
    await (attempt === 1 ? page.goto(url) : page.reload()).catch((e) => {
      if (!String(e).includes('ERR_NETWORK_CHANGED')) throw e;
      networkChanged('changed');
    });
    const connected = page
      .waitForFunction(() => document.body.dataset.state === 'connected', null, { timeout: 60000 })
      .then(() => 'connected');
    connected.catch(() => {});
    const outcome = await Promise.race([connected, changed]).catch(async (e) => {
      const state = await page.evaluate(() => [document.body.dataset.state, document.getElementById('state').textContent, document.getElementById('notice').textContent]);
      throw new Error(e.message + ' (page state ' + JSON.stringify(state) + '; ' + JSON.stringify(seen.slice(-20)) + ')');
    });
    page.off('requestfailed', onFailed);
    if (outcome === 'connected') break;
    if (attempt >= 3) throw new Error('the host network changed under the page three times: ' + JSON.stringify(seen.slice(-20)));
    seen.push('loading the page again: the host network changed');
    console.error('viewer-page: the host network changed while the page loaded; loading it again');
  }
  const sinceOpen = Date.now() - opened;
  await page.waitForFunction(() => window.__holmFirstFrame !== undefined, null, { timeout: 20000 }).catch(() => {});
  const frameMs = await page.evaluate(() => window.__holmFirstFrame === undefined ? null : Math.round(window.__holmFirstFrame));
  if (text) {
    const canvas = page.locator('#screen canvas');
    const box = await canvas.boundingBox();
    const sx = box.width / Number(width), sy = box.height / Number(height);
    await page.mouse.click(box.x + Number(x) * sx, box.y + Number(y) * sy);
    await page.keyboard.type(text, { delay: 30 });
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1500);
  }
  // Let the stream settle, then read the canvas at the screen's own size.
  await page.waitForTimeout(1000);
  const png = await page.evaluate(([w, h]) => {
    const src = document.querySelector('#screen canvas');
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    c.getContext('2d').drawImage(src, 0, 0, w, h);
    return c.toDataURL('image/png').split(',')[1];
  }, [Number(width), Number(height)]);
  const canvasSize = await page.evaluate(() => {
    const c = document.querySelector('#screen canvas');
    return [c.width, c.height];
  });
  console.log(JSON.stringify({
    state: await page.evaluate(() => document.body.dataset.state),
    title: await page.title(),
    header: await page.textContent('#title'),
    first_frame_ms: frameMs,
    connected_ms: sinceOpen,
    canvas: canvasSize,
    pwned: await page.evaluate(() => window.__holmPwned === true),
    scripts,
    png,
  }));
  await browser.close();
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message || e) }));
  if (browser) await browser.close();
  process.exit(2);
}
