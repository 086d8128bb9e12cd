// Drives `tmux-mcp serve --http` with the official TypeScript SDK client,
// as a Node-based agent would, and prints what it saw as one JSON object on
// stdout for e2e/http_tsclient_test.go to check.
//
//   TMUX_MCP_TOKEN=... node client.mjs http://127.0.0.1:8765/mcp SESSION PANE
//
// The token comes from the environment (argv is visible to every user) and
// travels as the Authorization header, the way clients configured with
// `headers` send it. Any protocol error ends the run with status 1.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, session = 'main', pane = '%0'] = process.argv.slice(2);
const token = process.env.TMUX_MCP_TOKEN;
if (!url || !token) {
  console.error('usage: TMUX_MCP_TOKEN=... node client.mjs URL [SESSION] [PANE]');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } }
  });
  const client = new Client({ name: 'tmux-mcp-ts-client-check', version: '0.0.0' });
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await client.connect(transport);

  const out = {
    protocolVersion: transport.protocolVersion,
    sessionId: transport.sessionId ?? null,
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities()
  };

  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name);

  const sessions = await client.callTool({ name: 'list_sessions', arguments: {} });
  out.listSessions = { isError: sessions.isError ?? false, structured: sessions.structuredContent };

  const info = await client.callTool({ name: 'get_pane_info', arguments: { pane_id: pane } });
  out.paneInfo = { isError: info.isError ?? false, structured: info.structuredContent };

  const sessionURI = `tmux://sessions/${encodeURIComponent(session)}`;
  const read = await client.readResource({ uri: sessionURI });
  out.resource = read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, text: c.text }));

  const prompt = await client.getPrompt({ name: 'diagnose_failing_pane', arguments: { pane_id: pane } });
  out.prompt = prompt.messages.map((m) => ({ role: m.role, text: m.content.text }));

  const completion = await client.complete({
    ref: { type: 'ref/resource', uri: 'tmux://sessions/{session_name}{?socket_name}' },
    argument: { name: 'session_name', value: session.slice(0, 2) }
  });
  out.completion = completion.completion.values;

  // Subscribe to the pane's content, change it with a tool, and wait for
  // notifications/resources/updated on the session's GET stream.
  const contentURI = `tmux://panes/${encodeURIComponent(pane)}/content`;
  await client.subscribeResource({ uri: contentURI });
  await sleep(300); // the subscription's first capture
  const typed = await client.callTool({
    name: 'send_keys',
    arguments: { pane_id: pane, keys: 'echo ts-client-$((6*7))' }
  });
  out.sendKeys = { isError: typed.isError ?? false };
  const deadline = Date.now() + 10000;
  while (!updates.includes(contentURI) && Date.now() < deadline) {
    await sleep(20);
  }
  out.updates = [...updates];
  await client.unsubscribeResource({ uri: contentURI });
  const content = await client.readResource({ uri: contentURI });
  out.content = content.contents.map((c) => c.text).join('');

  // Listen without calling for longer than the server's idle timeout
  // (TMUX_MCP_IDLE_MS, when set): the server's pings on the GET stream,
  // which the SDK answers by itself, must keep the session alive.
  const idle = Number(process.env.TMUX_MCP_IDLE_MS ?? 0);
  if (idle > 0) {
    await sleep(idle);
    const again = await client.callTool({ name: 'get_pane_info', arguments: { pane_id: pane } });
    out.afterIdle = { isError: again.isError ?? false, structured: again.structuredContent };
  }

  await transport.terminateSession();
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(`ts-client: ${err?.stack ?? err}`);
  process.exit(1);
});
