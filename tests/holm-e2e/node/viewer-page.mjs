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
  const scripts = [];
  const hashing = [];
  page.on('response', (r) => {
    if (r.request().resourceType() !== 'script') return;
    const entry = { url: r.url(), status: r.status(), sha256: null };
    scripts.push(entry);
    hashing.push(r.body().then(
      (b) => { entry.sha256 = createHash('sha256').update(b).digest('hex'); },
      () => {},
    ));
  });
  const opened = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.state === 'connected', null, { timeout: 60000 });
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
  await Promise.all(hashing);
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
