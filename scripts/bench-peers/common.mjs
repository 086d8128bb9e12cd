// What bench.mjs and cold.mjs share: the servers' environment, the median,
// and the raw JSON-RPC cold start.
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

// baseEnv is this process's environment without tmux's and tmux-mcp's own
// variables (a bench run inside tmux must not leak its pane), plus extra.
export function baseEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k !== "TMUX" && k !== "TMUX_PANE" && !k.startsWith("TMUX_MCP_")) e[k] = v;
  }
  return { ...e, ...extra };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

// rawColdStart spawns the server s ({command, env}) and returns the time to
// its tools/list answer, speaking JSON-RPC lines directly; clientName is the
// clientInfo name it initializes with.
export function rawColdStart(s, clientName) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(s.command, [], { env: baseEnv(s.env), stdio: ["pipe", "pipe", "ignore"] });
    let buf = "";
    let stage = 0;
    p.on("error", reject);
    p.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (stage === 0 && /"id":0[,}]/.test(line)) {
          stage = 1;
          p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
        } else if (stage === 1 && /"id":1[,}]/.test(line)) {
          const ms = performance.now() - t0;
          stage = 2;
          p.on("exit", () => resolve(ms));
          p.stdin.end();
        }
      }
    });
    p.stdin.write(
      JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: clientName, version: "0" } } }) + "\n",
    );
  });
}
