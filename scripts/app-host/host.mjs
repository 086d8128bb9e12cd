// A test host for tmux-mcp's pane view (ui://tmux-mcp/pane), run by
// e2e/app_browser_test.go. It does what a host that renders MCP Apps does,
// with the official pieces: the TypeScript SDK client talks to a real
// tmux-mcp (stdio or streamable HTTP), and headless Chromium shows the
// view through the official host bridge (@modelcontextprotocol/ext-apps
// AppBridge over postMessage). Then it measures: how long after send_keys
// the view shows what was typed, what the pause button does, which network
// requests any frame made, which tools the view had the host call. It
// prints one JSON report on stdout; the Go test judges it.
//
// Two MCP clients: "driver" does what the host and the test do (list,
// read the view, the call that opens it, send_keys), "view" carries only
// the view's tools/call requests, so the audit log tells the view's calls
// apart by client (over HTTP) or by file (over stdio, one server each).
//
// Usage: node host.mjs CONFIG_JSON, where CONFIG_JSON has transport
// ("http" or "stdio"), endpoint and token (http), binary, env and
// viewEnv (stdio: the servers' environments), chromium, pane, trials and
// screenshot (a PNG path, or "").

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { build } from "esbuild";
import puppeteer from "puppeteer-core";

const cfg = JSON.parse(process.argv[2]);
const here = dirname(fileURLToPath(import.meta.url));
const EXT = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const OPENER = "capture_pane_image";
const log = (...a) => console.error("[app-host]", ...a);

// ---- MCP clients -------------------------------------------------------------

async function connect(name, env) {
  const client = new Client({ name, version: "1.0.0" }, {
    capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } } },
  });
  const transport = cfg.transport === "http"
    ? new StreamableHTTPClientTransport(new URL(cfg.endpoint), { requestInit: { headers: { Authorization: `Bearer ${cfg.token}` } } })
    : new StdioClientTransport({ command: cfg.binary, args: [], env, stderr: "inherit" });
  await client.connect(transport);
  return client;
}

const report = { transport: cfg.transport };
const driver = await connect("tmux-mcp-app-driver", cfg.env);
const viewClient = await connect("tmux-mcp-app-view", cfg.viewEnv);
const closeAll = async () => { await driver.close().catch(() => {}); await viewClient.close().catch(() => {}); };

try {
  // What a host does at start: list tools and resources, find the tool
  // that names a view, read the view.
  const tools = (await driver.listTools()).tools;
  const opener = tools.find((t) => t.name === OPENER);
  report.openerListed = !!opener;
  report.openerMeta = opener ? opener._meta ?? null : null;
  let uri = opener?._meta?.ui?.resourceUri;
  let openWith = OPENER;
  if (!opener) {
    // Not in this build (issue 25 item 1 brings it): the host opens the
    // view for a capture_pane result instead, which tests the same view
    // through the same bridge; the Go test says so.
    uri = "ui://tmux-mcp/pane";
    openWith = "capture_pane";
  }
  report.openedWith = openWith;
  report.resourceUri = uri ?? null;
  if (!uri) throw new Error(`${OPENER} is listed without _meta.ui.resourceUri: ${JSON.stringify(opener._meta)}`);
  report.resourceListed = (await driver.listResources()).resources.some((r) => r.uri === uri);
  const read = await driver.readResource({ uri });
  const content = read.contents[0];
  report.mimeType = content.mimeType;
  report.csp = content._meta?.ui?.csp ?? null;
  const html = content.text;

  const toolInput = { pane_id: cfg.pane };
  const toolResult = await driver.callTool({ name: openWith, arguments: toolInput });
  report.openerIsError = !!toolResult.isError;

  // ---- the browser -------------------------------------------------------------

  const bundle = (await build({
    entryPoints: [join(here, "host-page.js")], bundle: true, format: "iife", platform: "browser",
    write: false, minify: true, logLevel: "warning",
  })).outputFiles[0].text;

  const profile = mkdtempSync(join(tmpdir(), "tmux-mcp-app-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: cfg.chromium,
    headless: true,
    userDataDir: profile,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 820, height: 560, deviceScaleFactor: 1 });

    // Every request any frame makes is recorded and refused: the host page
    // and the view are inline, so there should be none. A data: URL (the
    // view shows the tool result's image that way until its first reading)
    // carries its bytes in itself and reaches no network: it is counted
    // apart and let through.
    const requests = [];
    const dataURLs = [];
    await page.setRequestInterception(true);
    page.on("request", (req) => {
      const frame = req.frame() === page.mainFrame() ? "host" : "view";
      if (req.url().startsWith("data:")) {
        dataURLs.push({ frame, type: req.resourceType(), mime: req.url().slice(5, req.url().search(/[;,]/)) });
        req.continue().catch(() => {});
        return;
      }
      requests.push({ url: req.url().slice(0, 200), frame, type: req.resourceType() });
      req.abort("blockedbyclient").catch(() => {});
    });
    page.on("console", (m) => { if (m.type() === "error" || m.type() === "warn") log("console:", m.text()); });
    page.on("pageerror", (e) => log("page error:", e.message));

    const viewCalls = {};
    await page.exposeFunction("hostCallTool", async (params) => {
      viewCalls[params.name] = (viewCalls[params.name] || 0) + 1;
      return await viewClient.callTool(params);
    });

    // The host page: a frame for the view, sandboxed to scripts only (an
    // opaque origin, apart from the host's), and the bridge. This test
    // host applies no CSP of its own to the view, so a request the view
    // tried would be made and seen here, not blocked unseen.
    await page.setContent(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>tmux-mcp pane view in a test host</title>
<style>body{margin:0;font:14px system-ui,sans-serif;background:#f3f3f3;color:#222}
.chat{padding:10px 16px}.call{font:12px ui-monospace,monospace;color:#555;margin:0 0 8px}
iframe{width:100%;border:1px solid #ccc;border-radius:8px;background:#fff;height:420px}</style></head>
<body><div class="chat"><p class="call">tools/call ${openWith} {"pane_id": "${cfg.pane}"}</p>
<iframe id="view" sandbox="allow-scripts" title="pane view"></iframe></div>
<script>${bundle}</script></body></html>`);

    // A negative control first: a view that does make requests must be
    // seen making them, or "no requests" below would prove nothing.
    const probe = `<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/probe.png"><script>fetch("http://127.0.0.1:9/probe").catch(()=>{})</script></body></html>`;
    await page.evaluate((h) => { document.getElementById("view").srcdoc = h; }, probe);
    const deadline = Date.now() + 5000;
    while (requests.filter((r) => r.frame === "view").length < 2 && Date.now() < deadline) await sleep(50);
    report.probeRequests = requests.filter((r) => r.frame === "view").length;
    requests.length = 0;
    await page.evaluate(() => { document.getElementById("view").srcdoc = "<!DOCTYPE html><title>blank</title>"; });
    await sleep(200);
    requests.length = 0;

    // The view, through the official bridge.
    await page.evaluate(async (html, toolInput, toolResult) => {
      const iframe = document.getElementById("view");
      const bridge = new window.AppBridge(null, { name: "tmux-mcp test host", version: "1.0.0" },
        { serverTools: {}, logging: {} },
        { hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], containerDimensions: { maxHeight: 700 } } });
      bridge.oncalltool = (params) => window.hostCallTool(params);
      bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = Math.min(height, 700) + "px"; };
      bridge.oninitialized = async () => {
        await bridge.sendToolInput({ arguments: toolInput });
        await bridge.sendToolResult(toolResult);
        window.viewInitialized = true;
      };
      await bridge.connect(new window.PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
      window.bridge = bridge;
      iframe.srcdoc = html;
    }, html, toolInput, toolResult);
    await page.waitForFunction(() => window.viewInitialized === true, { timeout: 10000 });
    const frame = await (await page.$("#view")).contentFrame();
    await frame.waitForFunction(() => document.getElementById("screen").textContent.trim().length > 0, { timeout: 10000 });

    const screenHas = (marker, timeout) => frame.waitForFunction(
      (m) => document.getElementById("screen").textContent.includes(m), { polling: "mutation", timeout }, marker);
    const type = (keys) => driver.callTool({ name: "send_keys", arguments: { pane_id: cfg.pane, keys, enter: true } });

    // send_keys, then the view shows it: the delay, several times.
    report.delaysMs = [];
    for (let i = 0; i < cfg.trials; i++) {
      const marker = `view${i}x${Math.floor(Math.random() * 1e9)}`;
      await sleep(Math.random() * 500); // start at any point of the view's interval
      const t0 = performance.now();
      const res = await type(`echo ${marker}`);
      if (res.isError) throw new Error("send_keys: " + JSON.stringify(res.content));
      await screenHas(marker, 5000);
      report.delaysMs.push(Math.round(performance.now() - t0));
    }

    // Pause: no call and no change while paused; resume brings both back.
    await frame.click("#toggle");
    await sleep(400); // a call in flight when the button was pressed ends
    const before = total(viewCalls);
    const paused = `paused${Math.floor(Math.random() * 1e9)}`;
    await type(`echo ${paused}`);
    await sleep(2000);
    report.pause = {
      callsWhilePaused: total(viewCalls) - before,
      shownWhilePaused: await frame.evaluate((m) => document.getElementById("screen").textContent.includes(m), paused),
      status: await frame.evaluate(() => document.getElementById("status").textContent),
      button: await frame.evaluate(() => document.getElementById("toggle").textContent),
    };
    const t1 = performance.now();
    await frame.click("#toggle");
    await screenHas(paused, 5000);
    report.pause.resumeMs = Math.round(performance.now() - t1);

    if (cfg.screenshot) {
      // A screen worth looking at: colours, attributes, a prompt and the cursor.
      await type("clear; printf '\\033[1;34mtmux-mcp\\033[0m live pane view: \\033[32mgreen\\033[0m \\033[31mred\\033[0m \\033[1mbold\\033[0m \\033[7m reverse \\033[0m \\033[4munderline\\033[0m\\n'; " +
        "for c in 196 202 208 214 220 226 190 154 118 82 46 47 48 49 50 51 45 39 33 27 21 57 93 129 165 201; do printf '\\033[48;5;%sm  ' $c; done; printf '\\033[0m\\n'; " +
        "printf '\\033[38;2;255;135;0mtrue colour\\033[0m  \\033[3mitalic\\033[0m  \\033[9mstrike\\033[0m  \\033[2mdim\\033[0m\\n'");
      await frame.waitForFunction(() => document.getElementById("screen").textContent.includes("true colour"), { polling: "mutation", timeout: 5000 });
      await sleep(1200);
      const box = await page.evaluate(() => {
        const r = document.querySelector(".chat").getBoundingClientRect();
        return { x: 0, y: 0, width: Math.ceil(r.right), height: Math.ceil(r.bottom) };
      });
      await page.screenshot({ path: cfg.screenshot, clip: box });
      report.screenshot = cfg.screenshot;
    }

    report.viewCalls = viewCalls;
    report.requests = requests;
    report.dataURLs = dataURLs;
    report.viewTitle = await frame.evaluate(() => document.getElementById("title").textContent);
    await page.evaluate(() => window.bridge.teardownResource({})).catch((e) => log("teardown:", e.message));
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
} finally {
  await closeAll();
}
process.stdout.write(JSON.stringify(report) + "\n");

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function total(calls) { return Object.values(calls).reduce((a, b) => a + b, 0); }
