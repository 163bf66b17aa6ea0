// The drop-in computers, driven by the frameworks' own packages (pinned
// devDependencies) on the desk box's events page, which says what the box
// did:
//
// - the OpenAI Agents SDK runs its own agent loop with
//   `computerTool({ computer: new HolmComputer(box) })`: a scripted model
//   (the SDK's `Model` interface, so its Runner executes every call as it
//   would a real model's) asks for a computer call of every action;
// - Anthropic's SDK runs the loop of Anthropic's docs against a stand-in of
//   the Messages API on loopback that answers the recorded tool inputs
//   (sdks/python/tests/recorded/anthropic_tool_uses.json, shared with the
//   Python suite: one of every action of computer_20251124, zoom included).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { Agent, Runner, Usage, computerTool, setTracingDisabled } from "@openai/agents";
import Anthropic from "@anthropic-ai/sdk";
import { AnthropicComputer, ANTHROPIC_BETA, ANTHROPIC_TOOL_TYPE, HolmComputer, imageSize, scaleFor } from "@holm/sdk";
import { ROOT, SDK, clearLog, elementCenter, events, kinds, nonEmpty, pageLog, pageOrigin, waitUntil } from "./helpers.mjs";

// No traces: they would be sent to OpenAI.
setTracingDisabled(true);

test("the compat modules fit the frameworks' own types (tsc against the pinned packages)", () => {
  const tsc = join(SDK, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", join(SDK, "tests", "types", "tsconfig.json")], { stdio: "pipe" });
});

/** A model answering a computer call per scripted action, then a text. */
class ScriptedModel {
  constructor(actions) {
    this.actions = [...actions];
    this.requests = [];
  }

  async getResponse(request) {
    this.requests.push(request);
    const n = this.requests.length;
    const action = this.actions.shift();
    const output = action
      ? [{ type: "computer_call", id: `cu_${n}`, callId: `call_${n}`, status: "completed", action }]
      : [{ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
    return { usage: new Usage(), output, responseId: `resp_${n}` };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  }
}

test("the Agents SDK's Runner drives the box through HolmComputer", async () => {
  const box = await events();
  const field = await elementCenter(box, "#field");
  const go = await elementCenter(box, "#go");
  const origin = await pageOrigin(box);
  const spot = { x: origin.x + 600, y: origin.y + 400 };
  const actions = [
    { type: "screenshot" },
    { type: "click", button: "left", x: field.x, y: field.y },
    { type: "type", text: "hello agents" },
    { type: "keypress", keys: ["CTRL", "A"] },
    { type: "double_click", x: go.x, y: go.y },
    { type: "click", button: "right", x: spot.x, y: spot.y },
    { type: "click", button: "wheel", x: spot.x, y: spot.y },
    { type: "scroll", x: spot.x, y: spot.y, scroll_x: 0, scroll_y: 300 },
    { type: "drag", path: [{ x: spot.x, y: spot.y }, { x: spot.x + 80, y: spot.y + 40 }] },
    { type: "move", x: spot.x + 10, y: spot.y + 10 },
    { type: "wait" },
  ];
  const model = new ScriptedModel(actions);
  const computer = new HolmComputer(box);
  const agent = new Agent({ name: "desk", instructions: "Use the computer.", model, tools: [computerTool({ computer })] });
  const result = await new Runner().run(agent, "Fill in the form.", { maxTurns: actions.length + 2 });
  assert.equal(result.finalOutput, "done");

  // The Runner read the size as the run started and sent a screenshot of the
  // box back after every call.
  const screen = await box.screen(0);
  assert.deepEqual(computer.dimensions, [screen.width, screen.height]);
  const last = model.requests[model.requests.length - 1].input;
  const shots = last.filter((i) => i.type === "computer_call_result").map((i) => i.output.data);
  assert.equal(shots.length, actions.length);
  for (const s of shots) assert.match(s, /^data:image\/png;base64,iVBOR/);

  const log = await pageLog(box);
  const at = (e, p) => Math.abs(e.x - p.x) <= 1 && Math.abs(e.y - p.y) <= 1;
  assert.equal((await box.evaluate("document.getElementById('field').value")).value, "hello agents");
  assert.ok(log.some((e) => e.type === "keydown" && e.key === "a" && e.mods.join() === "ctrl"), "ctrl+a");
  assert.ok(log.some((e) => e.type === "dblclick" && at(e, go)), "double click on Go");
  assert.ok(log.some((e) => e.type === "contextmenu" && at(e, spot)), "right click");
  assert.ok(log.some((e) => e.type === "auxclick" && e.button === 1), "wheel click");
  const wheel = log.filter((e) => e.type === "wheel");
  assert.ok(wheel.length && wheel.every((e) => e.dy === 1), "300 pixels scroll down");
  assert.ok((await box.evaluate("window.scrollY")).value > 0);
  const ups = log.filter((e) => e.type === "mouseup");
  assert.ok(ups.length && ups[ups.length - 1].x === spot.x + 80 && ups[ups.length - 1].y === spot.y + 40, "drag's end");
  assert.deepEqual(await box.cursor(), { screen: 0, x: spot.x + 10, y: spot.y + 10 });
});

/** A Messages API on loopback answering scripted assistant turns, and
 * keeping every request the SDK sent. */
async function messagesStandIn(turns) {
  const requests = [];
  const headers = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      requests.push(body);
      headers.push(req.headers);
      const n = requests.length;
      const content = turns.shift() ?? [{ type: "text", text: "done" }];
      const answer = {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content,
        stop_reason: content.some((c) => c.type === "tool_use") ? "tool_use" : "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, headers, close: () => server.close() };
}

/** The recorded tool inputs, their `$name` points filled in. */
function recorded(points) {
  let text = readFileSync(join(ROOT, "sdks", "python", "tests", "recorded", "anthropic_tool_uses.json"), "utf8");
  for (const [name, value] of Object.entries(points)) text = text.replaceAll(`"$${name}"`, JSON.stringify(value));
  return JSON.parse(text).tool_uses;
}

const pngSize = (b64) => {
  const data = Buffer.from(b64, "base64");
  return [data.readUInt32BE(16), data.readUInt32BE(20)];
};

test("every action of Anthropic's computer tool through Anthropic's SDK", async () => {
  const box = await events();
  const screen = await box.screen(0);
  const scale = scaleFor(screen.width, screen.height);
  assert.ok(scale < 1, "the desk's screen is larger than the model takes, so the tool scales");
  const [iw, ih] = imageSize(screen.width, screen.height, scale);
  const img = (p) => [Math.round(p.x * scale), Math.round(p.y * scale)];

  const field = await elementCenter(box, "#field");
  const go = await elementCenter(box, "#go");
  const origin = await pageOrigin(box);
  const spot = { x: origin.x + 600, y: origin.y + 400 };
  const to = { x: origin.x + 700, y: origin.y + 450 };
  const points = { field: img(field), go: img(go), spot: img(spot), to: img(to) };
  const [sx, sy] = points.spot;
  points.zoom = [sx - 50, sy - 40, sx + 50, sy + 40];
  const inputs = recorded(points);
  assert.deepEqual(
    new Set(inputs.map((u) => u.action)),
    new Set([
      "screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
      "left_click_drag", "left_mouse_down", "left_mouse_up", "mouse_move", "scroll", "type", "key",
      "hold_key", "wait", "cursor_position", "zoom",
    ]),
  );
  const standIn = await messagesStandIn(inputs.map((input, i) => [{ type: "tool_use", id: `toolu_${i}`, name: "computer", input }]));
  try {
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: standIn.url, maxRetries: 0 });
    const computer = new AnthropicComputer(box);
    // The loop as Anthropic's docs write it.
    const messages = [{ role: "user", content: "Fill in the form." }];
    for (;;) {
      const response = await client.beta.messages.create({
        model: "claude-sonnet-4-6",
        max_tokens: 1024,
        tools: [await computer.tool()],
        betas: [ANTHROPIC_BETA],
        messages,
      });
      messages.push({ role: "assistant", content: response.content });
      const uses = response.content.filter((b) => b.type === "tool_use");
      if (!uses.length) break;
      const results = [];
      for (const use of uses) results.push(await computer.toolResult(use));
      messages.push({ role: "user", content: results });
    }
  } finally {
    standIn.close();
  }

  // What the SDK sent: the tool, the beta, and a result per tool use.
  assert.deepEqual(standIn.requests[0].tools, [
    { type: ANTHROPIC_TOOL_TYPE, name: "computer", display_width_px: iw, display_height_px: ih, enable_zoom: true },
  ]);
  assert.ok(standIn.headers[0]["anthropic-beta"].includes(ANTHROPIC_BETA));
  const results = {};
  for (const body of standIn.requests.slice(1)) {
    const last = body.messages[body.messages.length - 1];
    assert.equal(last.role, "user");
    for (const block of last.content) results[block.tool_use_id] = block;
  }
  assert.equal(Object.keys(results).length, inputs.length);
  const byAction = Object.fromEntries(inputs.map((u, i) => [u.action, results[`toolu_${i}`]]));
  for (const [action, result] of Object.entries(byAction)) assert.ok(!result.is_error, `${action}: ${JSON.stringify(result)}`);
  assert.deepEqual(pngSize(byAction.screenshot.content[0].source.data), [iw, ih]);
  assert.deepEqual(pngSize(byAction.left_click.content[0].source.data), [iw, ih]);
  const [x0, y0, x1, y1] = inputs.find((u) => u.action === "zoom").region;
  const [zw, zh] = pngSize(byAction.zoom.content[0].source.data);
  assert.ok(Math.abs(zw - Math.round((x1 - x0) / scale)) <= 2 && Math.abs(zh - Math.round((y1 - y0) / scale)) <= 2, `zoom ${zw}x${zh}`);
  const cursorText = byAction.cursor_position.content[0].text;
  const [cx, cy] = cursorText.split(",").map((part) => Number(part.split("=")[1]));
  assert.ok(Math.abs(cx - points.spot[0]) <= 1 && Math.abs(cy - points.spot[1]) <= 1, cursorText);

  // What the box did, as the page saw it (screen pixels, within rounding).
  const log = await pageLog(box);
  const near = (e, p, slack = 2) => Math.abs(e.x - p.x) <= slack && Math.abs(e.y - p.y) <= slack;
  const clicks = log.filter((e) => e.type === "click");
  assert.ok(clicks.some((e) => near(e, field) && e.detail === 1 && e.mods.length === 0), "left_click");
  assert.ok(clicks.some((e) => near(e, go) && e.mods.join() === "shift"), "left_click with text: shift");
  assert.ok(log.some((e) => e.type === "dblclick" && near(e, go)), "double_click");
  assert.ok(clicks.some((e) => e.detail === 3 && near(e, field)), "triple_click");
  assert.ok(log.some((e) => e.type === "contextmenu" && e.button === 2 && near(e, spot)), "right_click");
  assert.ok(log.some((e) => e.type === "auxclick" && e.button === 1 && near(e, spot)), "middle_click");
  assert.ok(log.some((e) => e.type === "mousedown" && near(e, spot)) && log.some((e) => e.type === "mouseup" && near(e, to)), "mouse down, up");
  const wheel = log.filter((e) => e.type === "wheel");
  assert.ok(wheel.some((e) => e.dy === 1 && e.mods.length === 0) && wheel.some((e) => e.mods.join() === "shift"), "scrolls");
  const keys = log.filter((e) => e.type === "keydown");
  assert.ok(keys.some((e) => e.key === "a" && e.mods.join() === "ctrl"), "key ctrl+a");
  assert.ok(keys.some((e) => e.key === "Shift") && log.some((e) => e.type === "keyup" && e.key === "Shift"), "hold_key shift");
  assert.equal((await box.evaluate("document.getElementById('field').value")).value, "hello claude");
});

test("refused Anthropic tool inputs are error results and change nothing", async () => {
  const box = await events();
  const computer = new AnthropicComputer(box);
  const { display_width_px: w } = await computer.tool();
  for (const bad of [
    { action: "left_click", coordinate: [w + 10, 5] },
    { action: "left_click", coordinate: [-1, 5] },
    { action: "left_click", coordinate: [1.5, 5] },
    { action: "scroll", coordinate: [5, 5], scroll_direction: "sideways", scroll_amount: 1 },
    { action: "type" },
    { action: "hold_key", text: "shift", duration: 500 },
    { action: "fly" },
    { action: "zoom", region: [10, 10, 5, 5] },
  ]) {
    const result = await computer.toolResult({ type: "tool_use", id: "toolu_bad", name: "computer", input: bad });
    assert.equal(result.is_error, true, JSON.stringify(bad));
    assert.equal(typeof result.content, "string");
  }
  assert.deepEqual((await pageLog(box)).filter((e) => ["click", "wheel", "keydown", "mousemove"].includes(e.type)), []);
  // A move the tool takes, after them: the page sees it at the point, scaled back.
  const go = await elementCenter(box, "#go");
  await clearLog(box);
  const blocks = await computer.run({ action: "mouse_move", coordinate: [Math.round(go.x * computer.scale), Math.round(go.y * computer.scale)] });
  assert.equal(blocks[0].type, "image");
  const moved = await waitUntil("the move", async () => nonEmpty(await kinds(box, "mousemove")));
  const end = moved[moved.length - 1];
  assert.ok(Math.abs(end.x - go.x) <= 2 && Math.abs(end.y - go.y) <= 2, JSON.stringify(end));
});
