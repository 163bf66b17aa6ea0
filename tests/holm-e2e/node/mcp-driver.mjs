// A real MCP client for holm's end-to-end tests: the official TypeScript
// SDKs, which no one at holm wrote, connected to holm's MCP server and driven
// by the Rust test one JSON line at a time.
//
//   node mcp-driver.mjs <http|stdio> <v1|v2>
//
//   v1: @modelcontextprotocol/sdk, protocol 2025-11-25 (sessions over HTTP)
//   v2: @modelcontextprotocol/client pinned to 2026-07-28 (stateless)
//
// Environment: MCP_URL and MCP_TOKEN (http; no token, no Authorization
// header), MCP_COMMAND, MCP_ARGS and MCP_ENV (stdio; JSON), so no secret is
// on a command line.
//
// The first line printed says whether the client connected. Then each line
// read is a request and each line printed its answer:
//   {"op":"list_tools"}                     -> {"ok":true,"result":{"tools":[...]}}
//   {"op":"call","name":N,"arguments":{}}   -> {"ok":true,"result":CallToolResult}
//   {"op":"call",...,"progress":true}       -> {"ok":true,"result":...,"progress":[{progress,total,message}]}
//   {"op":"validate_schemas"}               -> {"ok":true,"result":{"errors":{...}}}
//   {"op":"list_resources"}                 -> {"ok":true,"result":{"resources":[...]}}
//   {"op":"read_resource","uri":U}          -> {"ok":true,"result":{"contents":[...]}}
//   {"op":"close"}                          -> {"ok":true} and the driver exits
// A failure answers {"ok":false,"error":{"name","message","code"}}.

import { createInterface } from "node:readline";
import Ajv2020 from "ajv/dist/2020.js";

const [transportKind, sdk] = process.argv.slice(2);
const env = process.env;

function say(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

function failure(e) {
  return { ok: false, error: { name: e?.name, message: String(e?.message ?? e), code: e?.code } };
}

async function connect() {
  const headers = env.MCP_TOKEN ? { Authorization: `Bearer ${env.MCP_TOKEN}` } : {};
  if (sdk === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const client = new Client({ name: "holm-e2e-v1", version: "1.0.0" });
    let transport;
    if (transportKind === "http") {
      const { StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/sdk/client/streamableHttp.js"
      );
      transport = new StreamableHTTPClientTransport(new URL(env.MCP_URL), { requestInit: { headers } });
    } else {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      transport = new StdioClientTransport({
        command: env.MCP_COMMAND,
        args: JSON.parse(env.MCP_ARGS ?? "[]"),
        env: JSON.parse(env.MCP_ENV ?? "{}"),
        stderr: "inherit",
      });
    }
    await client.connect(transport);
    return {
      client,
      transport,
      about: {
        sdk: "@modelcontextprotocol/sdk",
        protocolVersion: transport.protocolVersion ?? null,
        sessionId: transport.sessionId ?? null,
      },
    };
  }
  const mod = await import("@modelcontextprotocol/client");
  const client = new mod.Client(
    { name: "holm-e2e-v2", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  let transport;
  if (transportKind === "http") {
    transport = new mod.StreamableHTTPClientTransport(new URL(env.MCP_URL), { requestInit: { headers } });
  } else {
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    transport = new StdioClientTransport({
      command: env.MCP_COMMAND,
      args: JSON.parse(env.MCP_ARGS ?? "[]"),
      env: JSON.parse(env.MCP_ENV ?? "{}"),
      stderr: "inherit",
    });
  }
  await client.connect(transport);
  return {
    client,
    transport,
    about: {
      sdk: "@modelcontextprotocol/client",
      protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null,
      sessionId: transport.sessionId ?? null,
    },
  };
}

let session;
try {
  session = await connect();
} catch (e) {
  say(failure(e));
  process.exit(0);
}
const { client, transport, about } = session;
say({
  ok: true,
  result: {
    ...about,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
  },
});

// Every tool's input schema compiles with a strict JSON Schema 2020-12
// validator (the dialect MCP names), which rejects unknown keywords too.
function validateSchemas(tools) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
  // Formats schemars writes for integers (uint8, int32...) are annotations.
  for (const f of ["uint", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]) {
    ajv.addFormat(f, true);
  }
  const errors = {};
  for (const tool of tools) {
    try {
      ajv.compile(tool.inputSchema);
    } catch (e) {
      errors[tool.name] = String(e.message ?? e);
    }
  }
  return { errors };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    say(failure(e));
    continue;
  }
  try {
    switch (request.op) {
      case "list_tools":
        say({ ok: true, result: await client.listTools() });
        break;
      case "call": {
        const params = { name: request.name, arguments: request.arguments ?? {} };
        const options = { timeout: request.timeout_ms ?? 120000 };
        // With "progress": true the call asks for progress notifications (the
        // SDK sends a progress token) and the answer carries them.
        const progress = [];
        if (request.progress) options.onprogress = (p) => progress.push(p);
        // The two SDKs differ only here: v1 takes a result schema second.
        const result =
          sdk === "v1" ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
        say(request.progress ? { ok: true, result, progress } : { ok: true, result });
        break;
      }
      case "list_resources":
        say({ ok: true, result: await client.listResources() });
        break;
      case "read_resource":
        say({ ok: true, result: await client.readResource({ uri: request.uri }) });
        break;
      case "validate_schemas": {
        const { tools } = await client.listTools();
        say({ ok: true, result: validateSchemas(tools) });
        break;
      }
      case "close":
        await transport.terminateSession?.().catch(() => {});
        await client.close();
        say({ ok: true });
        process.exit(0);
        break;
      default:
        say({ ok: false, error: { message: `unknown op ${request.op}` } });
    }
  } catch (e) {
    say(failure(e));
  }
}
await client.close();
