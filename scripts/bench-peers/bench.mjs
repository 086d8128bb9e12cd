// Side-by-side benchmark of tmux-mcp and Kcrong/tmux-mcp through the same
// TypeScript SDK client (scripts/bench-peers.sh sets it up; see there).
//
// Per run, each server (order alternating between runs) is started once:
// every op is called CALLS times after a short warm-up and its p50 kept;
// calls then continue to RSS_CALLS in total and VmRSS is read from /proc.
// Cold start is measured interleaved: spawn to the tools/list answer
// through the TS SDK client (connect + listTools, which compiles a
// validator per output schema) and through a raw JSON-RPC line client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { baseEnv, median, rawColdStart } from "./common.mjs";

const env = process.env;
const CALLS = Number(env.CALLS || 300);
const RUNS = Number(env.RUNS || 3);
const COLD = Number(env.COLD || 20);
const RSS_CALLS = Number(env.RSS_CALLS || 2000);
const WARM = 10;

// Each op maps to the peer's own tool for the same job (read from its
// source): Kcrong addresses a session it created, we address the pane.
const servers = [
  {
    name: "ours",
    command: env.OURS_BIN,
    env: { TMUX_MCP_SOCKET_PATH: env.OURS_SOCKET, TMUX_MCP_TMUX_BIN: env.TMUX_BIN, TMUX_MCP_AUDIT_LOG: "/dev/null" },
    setup: () => [],
    ops: () => ({
      "list sessions": ["list_sessions", {}],
      "pane info": ["get_pane_info", { pane_id: env.OURS_PANE }],
      "send keys + Enter": ["send_keys", { pane_id: env.OURS_PANE, keys: ":", enter: true }],
      "capture visible pane": ["capture_pane", { pane_id: env.OURS_PANE }],
      'run "echo hi"': ["run_command", { pane_id: env.OURS_PANE, command: "echo hi" }],
    }),
  },
];
if (env.KCRONG_BIN) {
  servers.push({
    name: "Kcrong",
    command: env.KCRONG_BIN,
    env: { TMUX_MCP_SOCKET: env.KCRONG_SOCKET, TMUX_MCP_TMUX_BIN: env.TMUX_BIN },
    // A session per run: its tmux server may outlive the previous process.
    setup: (run) => [["session_create", { name: `bench${run}`, command: env.BENCH_SHELL }]],
    ops: (run) => ({
      "list sessions": ["session_list", {}],
      "pane info": ["session_inspect", { session: `bench${run}` }],
      "send keys + Enter": ["send_keys", { session: `bench${run}`, keys: [":", "Enter"] }],
      "capture visible pane": ["capture", { session: `bench${run}` }],
      'run "echo hi"': ["run_shell", { command: "echo hi" }],
    }),
  });
}
const opNames = Object.keys(servers[0].ops(0));

async function connect(s) {
  const t0 = performance.now();
  const transport = new StdioClientTransport({ command: s.command, args: [], env: baseEnv(s.env), stderr: "ignore" });
  const client = new Client({ name: "bench-peers", version: "0" });
  await client.connect(transport);
  const t1 = performance.now();
  const list = await client.listTools();
  const t2 = performance.now();
  return { client, transport, connectMs: t1 - t0, listMs: t2 - t1, totalMs: t2 - t0, tools: list.tools };
}

async function call(client, [name, args]) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r;
}

function rssKB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

const results = {}; // results[server][metric] = [per-run values]
const put = (s, k, v) => {
  results[s] ??= {};
  (results[s][k] ??= []).push(v);
};

for (let run = 0; run < RUNS; run++) {
  const order = run % 2 === 0 ? servers : [...servers].reverse();
  for (const s of order) {
    const c = await connect(s);
    const pid = c.transport.pid;
    for (const op of s.setup(run)) await call(c.client, op);
    const ops = s.ops(run);
    let n = 0;
    for (const op of opNames) {
      for (let i = 0; i < WARM; i++, n++) await call(c.client, ops[op]);
      const ds = [];
      for (let i = 0; i < CALLS; i++, n++) {
        const t = performance.now();
        await call(c.client, ops[op]);
        ds.push(performance.now() - t);
      }
      put(s.name, op, median(ds));
    }
    const readOps = ["list sessions", "pane info", "capture visible pane"];
    for (let i = 0; n < RSS_CALLS; i++, n++) await call(c.client, ops[readOps[i % readOps.length]]);
    put(s.name, `RSS after ${RSS_CALLS} calls`, rssKB(pid) / 1024);
    await c.client.close();
  }
  const ts = {}, raw = {}, conn = {}, list = {};
  for (let i = 0; i < COLD; i++) {
    for (const s of i % 2 === 0 ? servers : [...servers].reverse()) {
      const c = await connect(s);
      await c.client.close();
      (ts[s.name] ??= []).push(c.totalMs);
      (conn[s.name] ??= []).push(c.connectMs);
      (list[s.name] ??= []).push(c.listMs);
      (raw[s.name] ??= []).push(await rawColdStart(s, "bench-peers"));
    }
  }
  for (const s of servers) {
    put(s.name, "cold start to tools/list (TS SDK client)", median(ts[s.name]));
    put(s.name, "  of which connect (initialize)", median(conn[s.name]));
    put(s.name, "  of which listTools (client compiles validators)", median(list[s.name]));
    put(s.name, "cold start to tools/list (raw JSON-RPC client)", median(raw[s.name]));
  }
  process.stderr.write(`run ${run + 1}/${RUNS} done\n`);
}

const metrics = [...opNames, ...Object.keys(results.ours).filter((k) => !opNames.includes(k))];
const fmt = (xs, unit) => {
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const f = (x) => (unit === "MB" ? x.toFixed(1) : x < 10 ? x.toFixed(2) : x.toFixed(1));
  return `${f(lo)}-${f(hi)} ${unit}`;
};
const peer = servers[1]?.name;
console.log(`| op (p50 over ${CALLS} calls, range over ${RUNS} runs) | ours |${peer ? ` ${peer} | ours vs ${peer} (ratio of medians) |` : ""}`);
console.log(`|---|---|${peer ? "---|---|" : ""}`);
for (const m of metrics) {
  const unit = m.startsWith("RSS") ? "MB" : "ms";
  const o = results.ours[m];
  let line = `| ${m} | ${fmt(o, unit)} |`;
  if (peer) {
    const k = results[peer][m];
    const r = median(o) / median(k);
    const word = unit === "MB" ? (r > 1 ? "more" : "less") : r > 1 ? "slower" : "faster";
    line += ` ${fmt(k, unit)} | ${r.toFixed(2)}x (${r > 1 ? r.toFixed(2) : (1 / r).toFixed(2)}x ${word}) |`;
  }
  console.log(line);
}
