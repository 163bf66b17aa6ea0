// Screens, screenshots and the whole input grammar, against the events page
// in the desk's Chromium: each action is checked by what the page saw (the
// DOM events, their screen points and modifiers), not by the call returning.

import assert from "node:assert/strict";
import { test } from "node:test";
import { actions as a, decodePng } from "@holm/sdk";
import { clearLog, desk, elementCenter, events, fieldValue, kinds, nonEmpty, pageOrigin, waitUntil } from "./helpers.mjs";

test("screens and screenshots say what they are", async () => {
  const box = await desk();
  const screens = await box.screens();
  assert.equal(screens.length, 1);
  assert.ok(screens[0].ready);
  const { width: w, height: h } = screens[0];
  assert.equal((await box.screen(0)).width, w);
  const shot = await box.screenshot();
  assert.deepEqual([shot.format, shot.width, shot.height, shot.scale, shot.region], ["png", w, h, 1, [0, 0, w, h]]);
  assert.ok(shot.frame);
  const img = await decodePng(shot.data);
  assert.deepEqual([img.width, img.height], [w, h]);
  // The page is white where it has nothing: the pixels are the box's screen.
  const page = await pageOrigin(await events());
  const [vw, vh] = JSON.parse((await box.evaluate("JSON.stringify([innerWidth, innerHeight])")).value);
  const blank = (await decodePng((await box.screenshot()).data)).pixel(page.x + Math.floor(vw * 0.75), page.y + Math.floor(vh * 0.75));
  assert.deepEqual(blank, [255, 255, 255]);

  const half = await box.screenshot({ max_width: w / 2, format: "jpeg", quality: 50 });
  assert.deepEqual([half.format, half.width, half.scale], ["jpeg", w / 2, 0.5]);
  assert.deepEqual([...half.data.subarray(0, 2)], [0xff, 0xd8]);
  const part = await box.screenshot({ region: [10, 20, 100, 50] });
  assert.deepEqual([part.width, part.height, part.region], [100, 50, [10, 20, 100, 50]]);
  assert.deepEqual(part.toScreen(0, 0), [10, 20]);
  assert.ok(part.dataUrl().startsWith("data:image/png;base64,iVBOR"));
});

test("an unchanged screen answers no image", async () => {
  const box = await events();
  const region = [0, 0, 64, 64];
  await waitUntil("two screenshots of a still corner", async () => {
    const frame = (await box.screenshot({ region })).frame;
    return (await box.screenshotIfChanged(frame, { region })) === null;
  });
});

test("clicks land where asked, with their button, count and modifiers", async () => {
  const box = await events();
  const go = await elementCenter(box, "#go");
  await box.click(go.x, go.y);
  const click = (await waitUntil("the click", async () => nonEmpty(await kinds(box, "click")))).at(-1);
  assert.deepEqual([click.x, click.y, click.button], [go.x, go.y, 0]);
  assert.equal((await box.evaluate("document.getElementById('out').textContent")).value, "clicked 1");

  await box.doubleClick(go.x, go.y);
  await waitUntil("the double click", async () => nonEmpty(await kinds(box, "dblclick")));
  await box.rightClick(go.x + 5, go.y);
  const menu = (await waitUntil("the context menu", async () => nonEmpty(await kinds(box, "contextmenu")))).at(-1);
  assert.deepEqual([menu.button, menu.x], [2, go.x + 5]);
  await box.click(go.x, go.y, { button: "middle" });
  await waitUntil("the middle click", async () => nonEmpty((await kinds(box, "auxclick")).filter((e) => e.button === 1)));
  await box.click(go.x, go.y, { count: 3, modifiers: ["shift"] });
  const triple = (await waitUntil("the triple click", async () => nonEmpty((await kinds(box, "click")).filter((e) => e.detail === 3)))).at(-1);
  assert.deepEqual(triple.mods, ["shift"]);
});

test("move, press, release and drag", async () => {
  const box = await events();
  const origin = await pageOrigin(box);
  const [x, y] = [origin.x + 500, origin.y + 300];
  await box.input([a.move(x, y)]);
  await waitUntil("the move", async () => nonEmpty((await kinds(box, "mousemove")).filter((e) => e.x === x && e.y === y)));
  assert.deepEqual(await box.cursor(), { screen: 0, x, y });
  await box.input([a.mouse_down(x, y), a.mouse_up(x + 40, y + 10)]);
  const downs = await waitUntil("press and release", async () => nonEmpty(await kinds(box, "mousedown", "mouseup")));
  assert.deepEqual(downs.slice(-2).map((e) => [e.type, e.x, e.y]), [["mousedown", x, y], ["mouseup", x + 40, y + 10]]);
  await box.drag([[x, y], [x + 100, y + 50], { x: x + 200, y: y + 60 }]);
  const seen = await waitUntil("the drag", async () => {
    const k = await kinds(box, "mousedown", "mouseup");
    return k.length >= 4 ? k : null;
  });
  assert.deepEqual([seen.at(-2).x, seen.at(-1).x, seen.at(-1).y], [x, x + 200, y + 60]);
});

test("the wheel scrolls the page", async () => {
  const box = await events();
  const origin = await pageOrigin(box);
  await box.scroll(origin.x + 400, origin.y + 300, { dy: 3 });
  const wheel = await waitUntil("the wheel", async () => nonEmpty(await kinds(box, "wheel")));
  assert.ok(wheel.every((e) => e.dy === 1));
  await waitUntil("the page to scroll", async () => (await box.evaluate("window.scrollY")).value > 0);
  await box.input([a.scroll(origin.x + 400, origin.y + 300, { dx: 2 })]);
  await waitUntil("the sideways wheel", async () => nonEmpty((await kinds(box, "wheel")).filter((e) => e.dx === 1)));
  await box.input([a.scroll(origin.x + 400, origin.y + 300, { dy: 1, modifiers: ["shift"] })]);
  await waitUntil("the wheel with shift held", async () => nonEmpty((await kinds(box, "wheel")).filter((e) => e.mods.join() === "shift")));
});

test("typing, keys, chords, holds and waits", async () => {
  const box = await events();
  const field = await elementCenter(box, "#field");
  await box.click(field.x, field.y);
  await box.type("héllo wörld");
  await waitUntil("the text", async () => (await fieldValue(box)) === "héllo wörld");
  await box.key("ctrl+a");
  await box.key("BackSpace");
  await waitUntil("the field to empty", async () => (await fieldValue(box)) === "");
  await box.input([a.key_down("shift"), a.key("x"), a.key_up("shift"), a.hold("y", 300), a.wait(50), a.key("z", { repeat: 2 })]);
  await waitUntil("X, y and zz", async () => (await fieldValue(box)).endsWith("zz"));
  const value = await fieldValue(box);
  assert.ok(value.startsWith("Xy"), value);
  assert.ok(nonEmpty((await kinds(box, "keyup")).filter((e) => e.key === "y")));
});

test("act-then-see answers the screen after the actions", async () => {
  const box = await events();
  const field = await elementCenter(box, "#field");
  const shot = await box.actAndSee([a.click(field.x, field.y), a.type("seen")], {
    settle: { quiet_ms: 100, timeout_ms: 2000 },
    max_width: 640,
  });
  assert.notEqual(shot.settled, null);
  assert.equal(shot.width, 640);
  assert.equal(await fieldValue(box), "seen");
  // Points taken from that downscaled image map back to the screen.
  const go = await elementCenter(box, "#go");
  await clearLog(box);
  await box.input([a.click(Math.round(go.x * shot.scale), Math.round(go.y * shot.scale))], {
    coordinate_space: { scale: shot.scale },
  });
  const click = (await waitUntil("the scaled click", async () => nonEmpty(await kinds(box, "click")))).at(-1);
  assert.ok(Math.abs(click.x - go.x) <= 2 && Math.abs(click.y - go.y) <= 2, JSON.stringify([click, go]));
});
