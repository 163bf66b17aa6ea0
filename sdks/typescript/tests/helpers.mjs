// The suite's shared parts: the server (holmd at HOLM_SERVER_URL with
// HOLM_SERVER_TOKEN, started by tests/holm-e2e/tests/sdk_typescript.rs), and
// the boxes the tests share where they do not conflict:
//
// - `desk()`: a box with Chromium, showing the events page (the Python
//   suite's sdks/python/tests/pages/events.html, which logs every input
//   event), for input, page tools and the bridge;
// - `plain()`: a box without a browser, for commands, files, the terminal,
//   windows, the clipboard, viewers, recordings and the timeline.
//
// Both are made at once on first use, and removed when the suite ends.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Holm } from "@holm/sdk";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const SDK = join(HERE, "..");
export const ROOT = join(SDK, "..", "..");
export const EVENTS_PAGE = "/tmp/holm-events.html";
export const EVENTS_URL = "file://" + EVENTS_PAGE;

for (const v of ["HOLM_SERVER_URL", "HOLM_SERVER_TOKEN"]) {
  if (!process.env[v]) {
    throw new Error(`the suite runs against a holmd: set ${v} (cargo test -p holm-e2e --test sdk_typescript starts one and sets it)`);
  }
}

export const client = new Holm();

let shared = null;

function boxes() {
  shared ??= {
    desk: (async () => {
      const box = await client.create({ screen_size: "1920x1080", labels: { suite: "ts-desk" } });
      await box.writeFile(EVENTS_PAGE, readFileSync(join(ROOT, "sdks", "python", "tests", "pages", "events.html")));
      await box.navigate(EVENTS_URL);
      return box;
    })(),
    plain: client.create({ browser: false, labels: { suite: "ts-plain" } }),
  };
  return shared;
}

/** The box with Chromium on the events page. */
export const desk = () => boxes().desk;
/** The box without a browser. */
export const plain = () => boxes().plain;

/** Removes the shared boxes that were made. */
export async function removeShared() {
  if (project) {
    const { rmSync } = await import("node:fs");
    rmSync(await project, { recursive: true, force: true });
  }
  if (!shared) return;
  for (const made of Object.values(shared)) {
    try {
      await (await made).remove();
    } catch (e) {
      console.error(`removing a shared box: ${e}`);
    }
  }
}

/** Polls `check` until it answers something true (an event the test waits
 * on, such as a window appearing), or fails naming `what`. */
export async function waitUntil(what, check, timeoutMs = 20_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(last)}`);
}

/** What the events page saw since it was last cleared. */
export async function pageLog(box) {
  return JSON.parse((await box.evaluate("JSON.stringify(window.log)")).value);
}

export async function kinds(box, ...wanted) {
  return (await pageLog(box)).filter((e) => wanted.includes(e.type));
}

/** The array, or null when it is empty (for `waitUntil`). */
export function nonEmpty(list) {
  return list.length ? list : null;
}

export async function fieldValue(box) {
  return (await box.evaluate("document.getElementById('field').value")).value;
}

export async function clearLog(box) {
  await box.evaluate(
    "window.log = []; window.clicks = 0; document.getElementById('field').value = '';" +
      " document.getElementById('out').textContent = 'not clicked'; window.scrollTo(0, 0); 0",
  );
}

/** The desk with the events page in front, focused, its log empty. */
export async function events() {
  const box = await desk();
  const page = (await box.tabs()).find((t) => t.url.startsWith(EVENTS_URL));
  if (page) await box.activateTab(page.id);
  else await box.navigate(EVENTS_URL);
  for (const w of await box.windows()) {
    if ((w.app ?? "").toLowerCase().includes("chrom")) await box.focusWindow(w.id);
  }
  await clearLog(box);
  return box;
}

/** Where the page's (0, 0) is on the screen: a pointer move tells, as its
 * event carries both the screen and the page point. */
export async function pageOrigin(box) {
  await box.move(600, 400);
  const moved = await waitUntil("the page to see the pointer move", async () => nonEmpty(await kinds(box, "mousemove")));
  const e = moved[moved.length - 1];
  return { x: e.x - e.cx, y: e.y - e.cy };
}

/** The screen point at the middle of an element of the events page. */
export async function elementCenter(box, selector) {
  const origin = await pageOrigin(box);
  const rect = JSON.parse(
    (await box.evaluate(`JSON.stringify(document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect())`)).value,
  );
  return { x: origin.x + Math.floor(rect.x + rect.width / 2), y: origin.y + Math.floor(rect.y + rect.height / 2) };
}

let project = null;

/** A project with `npm install ./sdks/typescript` done in it, offline (the
 * package has no dependencies to fetch), as a user would: made once. */
export function installed() {
  project ??= (async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { execFileSync } = await import("node:child_process");
    const dir = mkdtempSync(join(tmpdir(), "holm-sdk-user-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--install-links", "--loglevel=error", SDK], { cwd: dir, stdio: "pipe" });
    return dir;
  })();
  return project;
}
