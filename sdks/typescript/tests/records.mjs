// Viewers, takeover and handoff, recordings, the timeline and traces, the
// accessibility tree, windows, the clipboard and the guest's own
// credential, in the plain box; and the server's runtimes, images and apps.

import assert from "node:assert/strict";
import { test } from "node:test";
import { HolmError, NotFoundError, decodePng } from "@holm/sdk";
import { client, plain, waitUntil } from "./helpers.mjs";

const collect = async (iter) => {
  const out = [];
  for await (const e of iter) out.push(e);
  return out;
};

test("viewers are made, listed and revoked", async () => {
  const box = await plain();
  const grant = await box.createViewer({ screen: 0, mode: "view", expires_after_secs: 300, label: "sdk-ts" });
  assert.equal(grant.mode, "view");
  assert.ok(grant.url.includes("#token="));
  assert.ok((await box.viewers()).some((g) => g.id === grant.id));
  assert.equal((await fetch(grant.url.split("#")[0])).status, 200);
  assert.ok((await box.revokeViewer(grant.id)).revoked_at);
  assert.ok(Array.isArray((await box.viewerEvents({ after: 0, timeout_secs: 0 })).events));
});

test("asking for help answers a takeover URL and waits bounded", async () => {
  const box = await plain();
  const handoff = await box.askForHelp("press the button for me", { screen: 0, expires_after_secs: 300 });
  assert.equal(handoff.state, "waiting");
  assert.ok(handoff.takeover_url);
  assert.equal(handoff.help.reason, "press the button for me");
  assert.equal((await box.handoff({ wait_for: "handed_back", timeout_secs: 1 })).state, "waiting");
});

test("a recording is an MP4 of the screen", async () => {
  const box = await plain();
  const rec = await box.startRecording({ screen: 0, fps: 5 });
  assert.equal(rec.state, "recording");
  const moving = await box.spawn(["xterm", "-title", "sdk-ts-rec", "-e", "sleep", "600"]);
  await waitUntil("the xterm to show", async () => (await box.windows()).some((w) => w.title === "sdk-ts-rec"));
  await box.kill(moving.id);
  const done = await box.stopRecording(0);
  assert.equal(done.file, rec.file);
  assert.ok(done.bytes > 0);
  const video = await box.downloadRecording(done.file);
  assert.equal(new TextDecoder().decode(video.subarray(4, 8)), "ftyp");
  assert.equal(video.length, done.bytes);
  assert.ok((await box.recordings()).some((r) => r.file === done.file));
  await box.removeRecording(done.file);
  assert.ok(!(await box.recordings()).some((r) => r.file === done.file));
});

test("the timeline and traces tell what was done", async () => {
  const box = await plain();
  await box.run("echo timeline-mark");
  assert.ok((await box.steps()).some((s) => s.path.endsWith("/commands/run")));
  assert.equal((await box.timeline({ limit: 1 })).data.length, 1);
  const html = new TextDecoder().decode(await box.exportTimeline("html"));
  assert.ok(html.trimStart().toLowerCase().startsWith("<!doctype html"));
  const lines = new TextDecoder().decode(await box.exportTimeline("jsonl")).split("\n").filter((l) => l.trim());
  assert.ok("action" in JSON.parse(lines[0]));
  // The screenshot after an action is the next one taken.
  await box.move(20, 20);
  await box.screenshot({ max_width: 100 });
  const shots = await waitUntil("a step with the screenshot after it", async () => {
    const s = (await box.steps()).filter((s) => s.screenshot);
    return s.length ? s : null;
  });
  const image = await box.timelineScreenshot(shots.at(-1).screenshot.id);
  assert.ok(image.length > 8);
  assert.ok((await box.traces({ limit: 1000 })).data.some((t) => t.path.endsWith("/commands/run")));
});

test("windows appear, move and close", async () => {
  const box = await plain();
  const proc = await box.spawn(["xterm", "-title", "sdk-ts-window", "-geometry", "40x10+50+50"]);
  try {
    const [win] = await waitUntil("the xterm window", async () => {
      const w = (await box.windows()).filter((w) => w.title === "sdk-ts-window");
      return w.length ? w : null;
    });
    assert.ok((win.app ?? "").toLowerCase().includes("xterm"));
    await box.focusWindow(win.id);
    await box.moveWindow(win.id, 300, 200);
    const moved = (await box.windows()).find((w) => w.id === win.id);
    assert.notDeepEqual([moved.x, moved.y], [win.x, win.y]);
    await box.resizeWindow(win.id, 500, 300);
    // The window is on the screen where the box says: its pixels changed there.
    const shot = await decodePng((await box.screenshot({ region: [moved.x, moved.y, 40, 40] })).data);
    assert.ok(shot.width === 40);
    await box.closeWindow(win.id);
    await waitUntil("the window to close", async () => !(await box.windows()).some((w) => w.id === win.id));
  } finally {
    await box.kill(proc.id).catch((e) => assert.ok(e instanceof NotFoundError));
  }
});

test("the clipboard holds text and images", async () => {
  const box = await plain();
  await box.setClipboard({ text: "copied by the ts sdk" });
  assert.equal((await box.clipboard()).text, "copied by the ts sdk");
  const png = (await box.screenshot({ region: [0, 0, 8, 8] })).data;
  assert.ok((await box.setClipboard({ png })).types.includes("image/png"));
});

function find(nodes, role, name) {
  for (const n of nodes) {
    if (n.role === role && n.name === name) return n;
    const found = find(n.children ?? [], role, name);
    if (found) return found;
  }
  return null;
}

test("the accessibility tree of a GTK app, and a click through it", async () => {
  const box = await plain();
  const proc = await box.spawn(["yad", "--title=sdk-ts-a11y", "--text=pick", "--button=Pressed:0", "--button=Other:1"]);
  try {
    const [win] = await waitUntil("the yad window", async () => {
      const w = (await box.windows()).filter((w) => w.title === "sdk-ts-a11y");
      return w.length ? w : null;
    });
    await box.focusWindow(win.id);
    const tree = await waitUntil("the dialog's buttons in the tree", async () => {
      const t = await box.accessibility();
      return find(t.nodes, "push button", "Pressed") ? t : null;
    }, 30_000);
    assert.ok(tree.count >= 1);
    assert.ok((await box.accessibilityAct({ action: "click", role: "push button", name: "Pressed" })).node);
    const ended = await collect(box.follow(proc.id));
    assert.deepEqual([ended.at(-1).type, ended.at(-1).exit_code], ["exit", 0]);
  } finally {
    await box.kill(proc.id).catch(() => undefined);
  }
});

test("the guest credential opens only the guest, until revoked", async () => {
  const box = await plain();
  const access = await box.agent({ ttl_secs: 60 });
  assert.equal(access.box_id, box.id);
  const info = await fetch(access.url.replace(/\/$/, "") + "/v1/info", { headers: access.headers });
  assert.equal(info.status, 200);
  assert.ok((await info.json()).screens.length);
  await box.revokeAgent();
  assert.equal((await fetch(access.url.replace(/\/$/, "") + "/v1/info", { headers: access.headers })).status, 401);
  assert.ok((await box.guestInfo()).screens.length);
});

test("runtimes, images, apps and the server", async () => {
  const health = await client.health();
  assert.equal(health.status, "ok");
  assert.ok(health.version);
  assert.ok((await client.runtimes()).some((r) => r.name === "docker"));
  assert.equal((await client.runtime("docker")).name, "docker");
  const missing = await client.runtime("no-such-runtime").catch((e) => e);
  assert.ok(missing instanceof HolmError && ["not_found", "unknown_runtime"].includes(missing.code) && missing.requestId);
  const bad = await client.addRuntime({ name: "bad", provider: "no-such-vendor" }).catch((e) => e);
  assert.ok(bad instanceof HolmError && bad.status >= 400 && bad.status < 500, String(bad));
  assert.ok(!(await client.runtimes()).some((r) => r.name === "bad"));
  assert.ok((await client.apps()).some((a) => a.name === "firefox"));
  assert.ok((await client.images()).length);
  assert.ok((await client.openapi()).openapi.startsWith("3."));
  assert.ok(Array.isArray(await client.pruneImages({ dry_run: true })));
});
