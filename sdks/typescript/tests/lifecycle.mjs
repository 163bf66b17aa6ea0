// A box's life through the SDK: create with progress and an idempotency
// key, get, list, wait, extend, pause and resume, stop and start (caught
// starting, so `not_ready` is retried after Retry-After, or thrown with
// retries off), fork, remove. One box lives through all of it (and its
// fork), in order. And the one error shape for a wrong token, a server that
// cannot be reached, and a call that takes too long.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { inspect } from "node:util";
import {
  Holm,
  HolmError,
  IdempotencyKeyReusedError,
  NotReadyError,
  NotRunningError,
  Retry,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
  routes,
} from "@holm/sdk";
import { client, plain } from "./helpers.mjs";

test("a box lives its whole life", async () => {
  const events = [];
  const key = `sdk-ts-${randomUUID()}`;
  const spec = { browser: false, expires_after_secs: 1800, labels: { suite: "ts-lifecycle" } };
  const box = await client.create({ ...spec, idempotencyKey: key, onProgress: (e) => events.push(e) });
  try {
    // Progress: stages as they came, the box last, and it runs.
    assert.equal(events.at(-1).type, "box");
    assert.equal(events.at(-1).box.state, "running");
    const stages = events.filter((e) => e.type === "stage").map((e) => e.stage);
    assert.ok(stages.includes("container") && stages.includes("desktop"), stages.join());
    assert.equal(box.state, "running");
    assert.equal(box.info.spec.labels.suite, "ts-lifecycle");

    // The same key and body answer the same box; another body is refused.
    const again = await client.create({ ...spec, idempotencyKey: key });
    assert.equal(again.id, box.id);
    assert.equal(again.info.replayed, true);
    await assert.rejects(client.create({ browser: false, expires_after_secs: 900, idempotencyKey: key }), IdempotencyKeyReusedError);
    await assert.rejects(client.create({ no_such_field: 1 }), TypeError);

    assert.equal((await client.get(box.id)).state, "running");
    assert.ok((await client.boxes()).some((b) => b.id === box.id));
    assert.ok((await client.listBoxes({ state: "running", limit: 100 })).data.some((b) => b.id === box.id));

    const before = Date.parse(box.info.expires_at);
    const after = Date.parse((await box.extend(600)).expires_at);
    assert.ok(Math.abs(after - before - 600_000) <= 2000, `${after - before}`);

    await box.writeFile("/root/kept.txt", "kept");
    assert.equal((await box.pause()).state, "paused");
    await assert.rejects(box.run("true"), NotRunningError);
    assert.equal((await box.resume()).state, "running");
    assert.equal((await box.run("cat /root/kept.txt")).stdout, "kept");

    assert.equal((await box.stop()).state, "stopped");
    assert.equal((await box.waitFor("stopped", 5)).state, "stopped");

    // Started without waiting, the box is caught starting: with retries
    // off the refusal is thrown as it is; with them on, the client waits
    // Retry-After and tries again until the screenshot comes.
    await box.start({ wait: false });
    const noRetry = new Holm({ retry: new Retry({ budgetMs: 0 }) });
    const refused = await noRetry.box(box.id).screenshot().catch((e) => e);
    assert.ok(refused instanceof NotReadyError, String(refused));
    assert.deepEqual([refused.kind, refused.status], ["box_starting", 503]);
    const seen = [];
    const recording = (url, init) =>
      fetch(url, init).then((r) => {
        seen.push([r.status, r.headers.get("retry-after")]);
        return r;
      });
    const retrying = new Holm({ fetch: recording, retry: { budgetMs: 300_000 } });
    const shot = await retrying.box(box.id).screenshot();
    assert.ok(shot.width > 0);
    const notReady = seen.filter(([s]) => s === 503);
    assert.ok(notReady.length, `the box was never caught starting: ${JSON.stringify(seen)}`);
    assert.ok(notReady.every(([, after]) => after === "1"), JSON.stringify(notReady));
    assert.equal(retrying.retries, notReady.length);

    assert.equal((await box.refresh({ waitFor: "running", timeoutSecs: 120 })).state, "running");
    assert.equal(await box.readText("/root/kept.txt"), "kept");

    const fork = await box.fork({ name: "the-ts-fork" });
    try {
      assert.notEqual(fork.id, box.id);
      assert.equal(fork.info.forked_from, box.id);
      assert.equal(await fork.readText("/root/kept.txt"), "kept");
    } finally {
      assert.equal((await fork.remove()).state, "removed");
    }
  } finally {
    assert.equal((await box.remove()).state, "removed");
  }
  const gone = await box.run("true").catch((e) => e);
  assert.ok(gone instanceof HolmError && ["not_running", "not_found"].includes(gone.code), String(gone));
});

test("a wrong token is unauthorized, with a request id", async () => {
  const e = await new Holm({ token: "not-the-token" }).boxes().catch((e) => e);
  assert.ok(e instanceof UnauthorizedError && e instanceof HolmError);
  assert.deepEqual([e.code, e.status], ["unauthorized", 401]);
  assert.ok(e.requestId && e.message);
  assert.equal(e.toJSON().error.code, "unauthorized");
});

test("a refusal carries the one shape and changes nothing", async () => {
  const box = await plain();
  const e = await box.input([{ type: "click", x: 1, y: 1, button: "sideways" }]).catch((e) => e);
  assert.ok(e instanceof HolmError);
  assert.equal(e.code, "invalid_request");
  assert.ok(e.requestId);
  assert.ok(String(e).startsWith("error[invalid_request]: "));
  const missing = await client.get("box_doesnotexist").catch((e) => e);
  assert.deepEqual([missing.code, missing.status], ["not_found", 404]);
});

test("a server that cannot be reached is unavailable, with a hint", async () => {
  const e = await new Holm({ url: "http://127.0.0.1:9" }).health().catch((e) => e);
  assert.ok(e instanceof UnavailableError, String(e));
  assert.ok(e.hint.includes("HOLM_SERVER_URL"));
});

test("a call that takes longer than its timeout is a timeout error", async () => {
  const box = await plain();
  const short = new Holm({ timeoutMs: 1000 }).box(box.id);
  const proc = await box.spawn(["sleep", "30"]);
  try {
    // A read that waits on the server: a process's output with wait_ms
    // past the client's timeout.
    const e = await short.transport
      .json(routes.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT, { id: box.id, process: proc.id },
        { query: { wait_ms: 10_000 } },
      )
      .catch((e) => e);
    assert.ok(e instanceof TimeoutError, String(e));
    assert.equal(e.code, "timeout");
  } finally {
    await box.kill(proc.id);
  }
});

test("the token never shows", () => {
  const token = process.env.HOLM_SERVER_TOKEN;
  assert.ok(!JSON.stringify(client).includes(token));
  assert.ok(!JSON.stringify(client.transport.config).includes(token));
  assert.ok(!inspect(client, { depth: 10, showHidden: true }).includes(token));
});
