// Cold start of tmux-mcp beside Kcrong/tmux-mcp, and what the TypeScript
// SDK client spends compiling our output schemas (issue 22 goal 4).
// scripts/bench-peers.sh runs it with COLD_ONLY=1 (see there); alone:
//
//   OURS_BIN=... [BASE_BIN=...] KCRONG_BIN=... KCRONG_SOCKET=... node cold.mjs
//
// Each round spawns every server once through the TS SDK client (spawn →
// connect → listTools, which compiles a validator per output schema) and
// once through a raw JSON-RPC line client, in an order that rotates from
// round to round, so the servers share the machine's mood. BASE_BIN, when
// set, is a second build of ours (say main's) measured in the same rounds,
// for a before/after. Then, inside this process, the client's validator
// work for each server's tools/list is timed alone: a new
// AjvJsonSchemaValidator (as each Client makes) and getValidator for every
// outputSchema, as Client.cacheToolMetadata does, the servers alternating.
// CPU-time rows (process.cpuUsage) move less with the machine's load than
// the wall-clock ones.
//
// A fresh Node process per start-up (FRESH rounds) shows what a client that
// connects once pays: there ajv's own code is not yet optimized by V8.
//
// Two official TS clients are measured: @modelcontextprotocol/sdk 1.x
// (Client.listTools compiles a validator for every output schema at once)
// and @modelcontextprotocol/client 2.x (listTools compiles none; the first
// callTool compiles them all). So each is timed to the tools/list answer
// and to the answer of a first call (list_sessions, Kcrong's session_list):
// what a client waits for before it can offer the tools, and before its
// first tool result.
//
// Settings: ROUNDS (30), FRESH (10), COMPILES (60).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { baseEnv, median, rawColdStart } from "./common.mjs";

const env = process.env;
const ROUNDS = Number(env.ROUNDS || 30);
const COMPILES = Number(env.COMPILES || 60);
const FRESH = Number(env.FRESH || 10);

const oursEnv = { TMUX_MCP_SOCKET_PATH: env.OURS_SOCKET, TMUX_MCP_TMUX_BIN: env.TMUX_BIN, TMUX_MCP_AUDIT_LOG: "/dev/null" };
const servers = [{ name: "ours", command: env.OURS_BIN, env: oursEnv, first: "list_sessions" }];
if (env.BASE_BIN) servers.push({ name: "ours-before", command: env.BASE_BIN, env: oursEnv, first: "list_sessions" });
if (env.KCRONG_BIN) servers.push({ name: "Kcrong", command: env.KCRONG_BIN, env: { TMUX_MCP_SOCKET: env.KCRONG_SOCKET, TMUX_MCP_TMUX_BIN: env.TMUX_BIN }, first: "session_list" });

// tsColdStart spawns s through an official TS client (v2: the 2.x
// package) and times connect, listTools and a first tools/call.
async function tsColdStart(s, v2 = false) {
  const t0 = performance.now();
  const T = v2 ? StdioClientTransportV2 : StdioClientTransport;
  const C = v2 ? ClientV2 : Client;
  const transport = new T({ command: s.command, args: [], env: baseEnv(s.env), stderr: "ignore" });
  const client = new C({ name: "bench-cold", version: "0" });
  await client.connect(transport);
  const t1 = performance.now();
  const cpu = process.cpuUsage();
  const list = await client.listTools();
  const t2 = performance.now();
  const used = process.cpuUsage(cpu);
  const res = await client.callTool({ name: s.first, arguments: {} });
  const t3 = performance.now();
  if (res.isError) throw new Error(`${s.name} ${s.first}: ${JSON.stringify(res.content)}`);
  await client.close();
  return { total: t2 - t0, connect: t1 - t0, list: t2 - t1, listCPU: (used.user + used.system) / 1000, first: t3 - t0, tools: list.tools };
}

// ONE_SHOT=<server name>: one TS client cold start in this fresh process
// (ajv's code not yet compiled by V8, as in a client that connects once),
// printed as JSON for the parent's "fresh process" row.
if (env.ONE_SHOT) {
  const c = await tsColdStart(servers.find((s) => s.name === env.ONE_SHOT), env.ONE_SHOT_V2 === "1");
  console.log(JSON.stringify({ total: c.total, list: c.list, first: c.first }));
  process.exit(0);
}

const m = {}; // m[server][metric] = samples
const put = (s, k, v) => ((m[s] ??= {})[k] ??= []).push(v);
const lists = {};
for (let r = 0; r < ROUNDS; r++) {
  const order = servers.map((_, i) => servers[(i + r) % servers.length]);
  for (const s of order) {
    const c = await tsColdStart(s);
    put(s.name, "ts", c.total);
    put(s.name, "connect", c.connect);
    put(s.name, "list", c.list);
    put(s.name, "listCPU", c.listCPU);
    put(s.name, "tsFirst", c.first);
    lists[s.name] = c.tools;
    const c2 = await tsColdStart(s, true);
    put(s.name, "ts2", c2.total);
    put(s.name, "ts2First", c2.first);
    put(s.name, "raw", await rawColdStart(s, "bench-cold"));
  }
}

for (let r = 0; r < FRESH; r++) {
  for (const s of servers.map((_, i) => servers[(i + r) % servers.length])) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], { env: { ...env, ONE_SHOT: s.name } });
    const { total, list, first } = JSON.parse(out);
    put(s.name, "fresh", total);
    put(s.name, "freshList", list);
    put(s.name, "freshFirst", first);
    const out2 = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], { env: { ...env, ONE_SHOT: s.name, ONE_SHOT_V2: "1" } });
    const f2 = JSON.parse(out2);
    put(s.name, "fresh2", f2.total);
    put(s.name, "fresh2First", f2.first);
  }
}

// The client's validator work alone, on each server's tools/list as
// received (re-parsed each time: a client gets new objects off the wire).
const texts = Object.fromEntries(servers.map((s) => [s.name, JSON.stringify(lists[s.name])]));
for (let r = 0; r <= COMPILES; r++) {
  for (const s of servers) {
    const tools = JSON.parse(texts[s.name]);
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    const v = new AjvJsonSchemaValidator();
    for (const t of tools) if (t.outputSchema) v.getValidator(t.outputSchema);
    const used = process.cpuUsage(cpu);
    if (r > 0) { // round 0 warms the JIT
      put(s.name, "compile", performance.now() - t0);
      put(s.name, "compileCPU", (used.user + used.system) / 1000);
    }
  }
}

const peer = env.KCRONG_BIN ? "Kcrong" : null;
const rows = [
  ["ts", "cold start to tools/list, TS SDK client 1.x"],
  ["connect", "  of which connect (initialize)"],
  ["list", "  of which listTools (parse + validator compilation)"],
  ["listCPU", "  listTools, the client's CPU time"],
  ["tsFirst", "cold start to a first call's answer, TS SDK client 1.x"],
  ["ts2", "cold start to tools/list, TS client 2.x"],
  ["ts2First", "cold start to a first call's answer, TS client 2.x (compiles the validators)"],
  ["raw", "cold start to tools/list, raw JSON-RPC client"],
  ["fresh", "TS SDK client 1.x in a fresh Node process (first connection)"],
  ["freshList", "  of which listTools"],
  ["freshFirst", "  to a first call's answer"],
  ["fresh2", "TS client 2.x in a fresh Node process, to tools/list"],
  ["fresh2First", "  to a first call's answer"],
  ["compile", "in-Node: new validator + getValidator per outputSchema"],
  ["compileCPU", "  the same, CPU time (steadier on a loaded machine)"],
];
const cols = servers.map((s) => s.name);
// compilations: getValidator compiles each schema without an $id, and each
// $id once.
const compilations = (tools) => {
  const out = tools.filter((t) => t.outputSchema);
  return out.filter((t) => typeof t.outputSchema.$id !== "string").length + new Set(out.map((t) => t.outputSchema.$id).filter((id) => typeof id === "string")).size;
};
for (const s of servers) {
  const tools = lists[s.name];
  console.log(`${s.name}: ${tools.length} tools, ${tools.filter((t) => t.outputSchema).length} output schemas, ${compilations(tools)} compilations, ${texts[s.name].length} bytes of tools`);
}
console.log(`| median over ${ROUNDS} rounds (fresh: ${FRESH}, compile: ${COMPILES}) | ${cols.join(" | ")} |${peer ? cols.filter((c) => c !== peer).map((c) => ` ${c}/${peer} |`).join("") : ""}`);
console.log(`|---|${cols.map(() => "---|").join("")}${peer ? cols.filter((c) => c !== peer).map(() => "---|").join("") : ""}`);
for (const [k, label] of rows) {
  const med = Object.fromEntries(cols.map((c) => [c, median(m[c][k])]));
  let line = `| ${label} | ${cols.map((c) => `${med[c].toFixed(2)} ms`).join(" | ")} |`;
  if (peer) line += cols.filter((c) => c !== peer).map((c) => ` ${(med[c] / med[peer]).toFixed(2)}x |`).join("");
  console.log(line);
}
