// The package itself, without a box: its generated files and dist/ are
// fresh, it calls every route of the snapshot, the errors and the retry
// policy read answers as the API writes them, the PNG reader undoes every
// filter, and `npm install` of the directory, offline, gives a working
// package with no dependencies.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { deflateSync } from "node:zlib";
import * as holm from "@holm/sdk";
import { ROOT, SDK, installed } from "./helpers.mjs";

const snapshot = JSON.parse(readFileSync(join(ROOT, "docs", "api", "holmd.openapi.json"), "utf8"));

test("the generated files are fresh", () => {
  execFileSync(process.execPath, [join(SDK, "scripts", "generate.mjs"), "--check"], { stdio: "pipe" });
});

test("dist/ is what the sources compile to", () => {
  const out = mkdtempSync(join(tmpdir(), "holm-sdk-dist-"));
  try {
    execFileSync(process.execPath, [join(SDK, "node_modules", "typescript", "bin", "tsc"), "-p", join(SDK, "tsconfig.json"), "--outDir", out], { stdio: "pipe" });
    const built = readdirSync(out).sort();
    assert.deepEqual(readdirSync(join(SDK, "dist")).sort(), built);
    for (const f of built) {
      assert.equal(readFileSync(join(SDK, "dist", f), "utf8"), readFileSync(join(out, f), "utf8"), `dist/${f} is stale: run npx tsc in sdks/typescript`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("every route of the snapshot is called, and no other", () => {
  const used = new Set();
  for (const f of readdirSync(join(SDK, "src"))) {
    if (f === "routes.ts") continue;
    for (const m of readFileSync(join(SDK, "src", f), "utf8").matchAll(/\br\.([A-Z0-9_]+)\b/g)) used.add(m[1]);
  }
  const all = Object.keys(holm.routes.ROUTES);
  assert.deepEqual([...used].filter((n) => !all.includes(n)), []);
  assert.deepEqual(all.filter((n) => !used.has(n)), [], "routes no client method calls");
  const count = Object.values(snapshot.paths).reduce((n, item) => n + Object.keys(item).filter((m) => m !== "parameters").length, 0);
  assert.equal(all.length, count);
});

test("every action of the grammar has a builder", () => {
  const tags = snapshot.components.schemas.Action.oneOf.map((v) => v.properties.type.const).sort();
  assert.deepEqual([...holm.actions.ACTIONS].sort(), tags);
  for (const tag of tags) assert.equal(typeof holm.actions[tag], "function", tag);
  assert.deepEqual(holm.actions.click(3, 4, { button: "right" }), { type: "click", x: 3, y: 4, button: "right" });
  assert.deepEqual(holm.actions.drag([{ x: 1, y: 2 }, { x: 3, y: 4 }]).path[1], { x: 3, y: 4 });
});

test("errors carry the one shape, one class per code", () => {
  const codes = snapshot.components.schemas.ErrorCode.oneOf.map((c) => c.const);
  assert.deepEqual(Object.keys(holm.ERRORS).sort(), [...codes].sort());
  const body = JSON.stringify({ error: { code: "file_not_found", message: "/x: does not exist", hint: "h", details: { path: "/x" }, request_id: "req_1" } });
  const e = holm.fromAnswer(404, body, null, "http://h/v1/boxes/b/files/content");
  assert.ok(e instanceof holm.FileNotFoundError && e instanceof holm.HolmError && e instanceof Error);
  assert.deepEqual([e.name, e.code, e.message, e.hint, e.details, e.requestId, e.status], ["FileNotFoundError", "file_not_found", "/x: does not exist", "h", { path: "/x" }, "req_1", 404]);
  const plain = holm.fromAnswer(502, "<html>bad gateway</html>", "req_2", "http://h/v1/x");
  assert.ok(plain instanceof holm.GuestUnreachableError);
  assert.equal(plain.requestId, "req_2");
});

test("Retry-After is read as seconds or a date, and bounds the retries", () => {
  assert.equal(holm.parseRetryAfter("2"), 2000);
  assert.equal(holm.parseRetryAfter(null), null);
  assert.equal(holm.parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0);
  const retry = new holm.Retry({ budgetMs: 10_000 });
  const notReady = new holm.NotReadyError("starting", { details: { kind: "browser_starting", retry_after_ms: 250 } });
  assert.equal(retry.delayMs(notReady, "1", 0), 1000);
  assert.equal(retry.delayMs(notReady, null, 0), 250);
  const partial = new holm.NotReadyError("screen", { details: { kind: "screen_starting", performed: 2 } });
  assert.equal(retry.delayMs(partial, "1", 0), null, "input that ran part way is never repeated");
  assert.equal(retry.delayMs(new holm.ConflictError("no"), "1", 0), null);
  assert.equal(new holm.Retry({ budgetMs: 0 }).delayMs(notReady, "1", 0), null);
});

function png(width, height, rows, ctype = 2, filters = null) {
  const raw = Buffer.concat(rows.map((r, i) => Buffer.concat([Buffer.from([(filters ?? [])[i] ?? 0]), Buffer.from(r)])));
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind, body) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(Buffer.concat([Buffer.from(kind), body])));
    return Buffer.concat([len, Buffer.from(kind), body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, ctype, 0, 0, 0], 8);
  const sig = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);
  return new Uint8Array(Buffer.concat([sig, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]));
}

test("the PNG reader undoes every filter", async () => {
  // Row 0 raw; row 1 Sub; row 2 Up; row 3 Average; row 4 Paeth.
  const rows = [[1, 2, 3, 4, 5, 6], [10, 20, 30, 1, 2, 3], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]];
  const img = await holm.decodePng(png(2, 5, rows, 2, [0, 1, 2, 3, 4]));
  assert.deepEqual([img.pixel(0, 0), img.pixel(1, 0)], [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual([img.pixel(0, 1), img.pixel(1, 1)], [[10, 20, 30], [11, 22, 33]]);
  assert.deepEqual([img.pixel(0, 2), img.pixel(1, 2)], [[11, 21, 31], [12, 23, 34]]);
  assert.deepEqual([img.pixel(0, 3), img.pixel(1, 3)], [[5, 10, 15], [(5 + 12) >> 1, (10 + 23) >> 1, (15 + 34) >> 1]]);
  assert.deepEqual(img.pixel(0, 4), [5, 10, 15]);
  assert.deepEqual((await holm.decodePng(png(1, 1, [[9, 8, 7, 255]], 6))).pixel(0, 0), [9, 8, 7]);
  assert.equal(img.changed(img), null);
});

test("npm install of the directory, offline, gives the package and nothing else", async () => {
  const project = await installed();
  const pkg = join(project, "node_modules", "@holm", "sdk");
  assert.ok(!lstatSync(pkg).isSymbolicLink(), "installed as files, as from the registry");
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  assert.equal(manifest.dependencies, undefined, "no runtime dependencies");
  assert.deepEqual(readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith(".")), ["@holm"]);
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", "const m = await import('@holm/sdk'); console.log(import.meta.resolve('@holm/sdk'), typeof m.Holm, m.VERSION)"], { cwd: project, encoding: "utf8" });
  const [where, kind, version] = out.trim().split(" ");
  assert.ok(where.startsWith(`file://${pkg}/dist/`), where);
  assert.deepEqual([kind, version], ["function", manifest.version]);
});
