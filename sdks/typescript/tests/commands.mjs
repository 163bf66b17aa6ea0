// Commands (run, stream), background processes (output, follow, stdin,
// signals, kill), files, and the terminal over its WebSocket, in the plain box.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DirectoryNotEmptyError, FileNotFoundError, HolmError, NotFoundError } from "@holm/sdk";
import { execFileSync } from "node:child_process";
import { installed, plain } from "./helpers.mjs";

const collect = async (iter) => {
  const out = [];
  for await (const e of iter) out.push(e);
  return out;
};

test("run with a shell or argv, env, cwd, stdin and a timeout", async () => {
  const box = await plain();
  const r = await box.run("echo $GREETING from $(pwd); echo oops >&2; exit 3", { env: { GREETING: "hi" }, cwd: "/tmp" });
  assert.deepEqual([r.stdout, r.stderr, r.exit_code, r.timed_out], ["hi from /tmp\n", "oops\n", 3, false]);
  assert.equal((await box.run(["printf", "%s|", "a b", "c"])).stdout, "a b|c|");
  assert.equal((await box.run(["cat"], { stdin: "fed in" })).stdout, "fed in");
  assert.equal((await box.run("sleep 20", { timeout_ms: 300 })).timed_out, true);
});

test("stream yields events as they happen", async () => {
  const box = await plain();
  const events = await collect(box.stream("echo one; echo two >&2; echo three"));
  assert.equal(events[0].type, "start");
  assert.equal(events.at(-1).type, "exit");
  assert.equal(events.at(-1).exit_code, 0);
  assert.equal(events.filter((e) => e.type === "stdout").map((e) => e.data).join(""), "one\nthree\n");
  assert.ok(events.some((e) => e.type === "stderr" && e.data.includes("two")));
});

test("background processes take stdin and signals", async () => {
  const box = await plain();
  const p = await box.spawn(["sh", "-c", "while read line; do echo got:$line; done; echo closed"], { tag: "reader" });
  assert.ok((await box.processes()).some((q) => q.id === p.id));
  await box.writeStdin(p.id, "first\n");
  const page = await box.processOutput(p.id, { cursor: 0, wait_ms: 10_000 });
  assert.ok(page.data.some((e) => e.data === "got:first\n"), JSON.stringify(page));
  await box.writeStdin(p.id, new TextEncoder().encode("second\n"), { eof: true });
  const followed = await collect(box.follow(p.id, { cursor: page.next_cursor }));
  assert.equal(followed.map((e) => e.data ?? "").join(""), "got:second\nclosed\n");
  assert.deepEqual([followed.at(-1).type, followed.at(-1).exit_code], ["exit", 0]);
  assert.equal((await box.process(p.id)).state, "exited");

  const sleeper = await box.spawn("sleep 600");
  await box.signal(sleeper.id, "TERM");
  const ended = await collect(box.follow(sleeper.id));
  assert.equal(ended.at(-1).type, "exit");
  assert.ok(["TERM", "SIGTERM", "15"].includes(ended.at(-1).signal), JSON.stringify(ended.at(-1)));
  await box.kill(sleeper.id);
  await assert.rejects(box.process(sleeper.id), NotFoundError);
});

test("files: write, read, list, stat, rename and remove", async () => {
  const box = await plain();
  const info = await box.writeFile("/tmp/sdk-ts/a/b.txt", "bee", { mode: "640" });
  assert.deepEqual([info.path, info.size], ["/tmp/sdk-ts/a/b.txt", 3]);
  assert.equal(await box.readText("/tmp/sdk-ts/a/b.txt"), "bee");
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
  await box.writeFile("/tmp/sdk-ts/a/bin", bytes);
  assert.deepEqual(await box.readFile("/tmp/sdk-ts/a/bin"), bytes);
  assert.equal((await box.run("stat -c %a /tmp/sdk-ts/a/b.txt; sha256sum < /tmp/sdk-ts/a/bin")).stdout.split("\n")[0], "640");
  assert.equal((await box.mkdir("/tmp/sdk-ts/c/d")).type, "dir");
  const names = new Set((await box.listFiles("/tmp/sdk-ts", { depth: 3 })).map((f) => f.path));
  for (const p of ["/tmp/sdk-ts/a/b.txt", "/tmp/sdk-ts/a/bin", "/tmp/sdk-ts/c/d"]) assert.ok(names.has(p), p);
  assert.equal((await box.rename("/tmp/sdk-ts/a/b.txt", "/tmp/sdk-ts/c/b.txt")).path, "/tmp/sdk-ts/c/b.txt");
  assert.equal((await box.stat("/tmp/sdk-ts/a/b.txt")).exists, false);
  await assert.rejects(box.removeFile("/tmp/sdk-ts"), DirectoryNotEmptyError);
  await box.removeFile("/tmp/sdk-ts", { recursive: true });
  assert.equal((await box.run("test -e /tmp/sdk-ts")).exit_code, 1);
  const missing = await box.readFile("/tmp/sdk-ts/none").catch((e) => e);
  assert.ok(missing instanceof FileNotFoundError && missing instanceof HolmError);
  assert.deepEqual([missing.code, missing.status, typeof missing.requestId], ["file_not_found", 404, "string"]);
});

test("the terminal is a real pty", async () => {
  const box = await plain();
  const term = await box.terminal({ cols: 100, rows: 30 });
  try {
    assert.ok(term.pid > 0);
    assert.deepEqual([term.cols, term.rows], [100, 30]);
    term.send("stty size; echo mark-$((6*7))\n");
    assert.ok((await term.readUntil("mark-42")).includes("30 100"));
    term.resize(120, 40);
    term.send("stty size\n");
    await term.readUntil("40 120");
    term.send("echo from-the-terminal > /tmp/sdk-ts-term.txt; exit 5\n");
    assert.equal(await term.wait(30_000), 5);
  } finally {
    term.close();
  }
  assert.ok(term.exited);
  assert.equal((await term.read()).length, 0);
  // What the shell did is in the box.
  assert.equal(await box.readText("/tmp/sdk-ts-term.txt"), "from-the-terminal\n");
});

test("installed without ws, the terminal uses the global WebSocket, or is refused saying why", async () => {
  const box = await plain();
  const project = await installed();
  const script = `
    import { Holm } from "@holm/sdk";
    const box = new Holm().box(process.argv[1]);
    try {
      const term = await box.terminal({ command: "echo via-global-websocket" });
      console.log(JSON.stringify({ printed: await term.readUntil("via-global-websocket"), exit: await term.wait() }));
    } catch (e) {
      console.log(JSON.stringify({ code: e.code, message: e.message }));
    }`;
  const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script, box.id], { cwd: project, encoding: "utf8" }));
  if (typeof globalThis.WebSocket === "function") {
    assert.equal(out.exit, 0, JSON.stringify(out));
  } else {
    assert.equal(out.code, "unsupported", JSON.stringify(out));
    assert.ok(out.message.includes("install the ws package"), out.message);
  }
});
