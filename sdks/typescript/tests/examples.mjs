// The TypeScript agent loop and the README's TypeScript snippet run as
// written: compiled with the pinned tsc (type-checked against the installed
// package's declarations) in a project where `npm install ./sdks/typescript`
// was done, run with node against the real server, each with a box of its
// own; the test checks what they left.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT, SDK, client, installed } from "./helpers.mjs";

function readmeSnippet() {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
  const m = text.match(/<!-- typescript-snippet -->\s*```ts\n([\s\S]*?)```\s*<!-- \/typescript-snippet -->/);
  assert.ok(m, "README.md has no TypeScript snippet between <!-- typescript-snippet --> markers");
  return m[1];
}

let compiled = null;

/** The example and the snippet, compiled in the user's project. */
function compile() {
  compiled ??= (async () => {
    const project = await installed();
    copyFileSync(join(SDK, "examples", "agent_loop.ts"), join(project, "agent_loop.ts"));
    writeFileSync(join(project, "snippet.ts"), readmeSnippet());
    const config = {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: true,
        lib: ["ES2022", "DOM"],
        typeRoots: [join(SDK, "node_modules", "@types")],
        types: ["node"],
      },
      files: ["agent_loop.ts", "snippet.ts"],
    };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(config));
    execFileSync(process.execPath, [join(SDK, "node_modules", "typescript", "bin", "tsc"), "-p", project], { cwd: project, encoding: "utf8" });
    return project;
  })();
  return compiled;
}

function run(project, file) {
  return execFileSync(process.execPath, [file], { cwd: project, encoding: "utf8", timeout: 600_000 });
}

test("the agent loop types its line into a terminal", async () => {
  const project = await compile();
  const out = run(project, "agent_loop.js");
  const lines = out.trim().split("\n");
  const boxId = lines[0].split(" ")[1];
  assert.ok(lines.some((l) => /^step \d+: act \(2 actions\)$/.test(l)), out);
  assert.match(lines.at(-1), /^step \d+: done, \/tmp\/agent-loop.txt holds the line$/, out);
  // The example removed its box.
  assert.equal((await client.get(boxId)).state, "removed");
});

test("the README's TypeScript snippet runs as written", async () => {
  const project = await compile();
  const out = run(project, "snippet.js").trim().split(/\s+/);
  const [boxId, width, , height] = out;
  const data = readFileSync(join(project, "box.png"));
  assert.deepEqual([...data.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.deepEqual([data.readUInt32BE(16), data.readUInt32BE(20)], [Number(width), Number(height)]);
  assert.equal(out.at(-1), "x86_64");
  assert.equal((await client.get(boxId)).state, "removed");
});
