// Drives tmux-mcp's confirmation (elicitation) with the official
// TypeScript SDK client, as a Node-based agent would: the client declares
// form elicitation and answers the question it is asked with ANSWER, then
// reports the question as it received it, its answer and the call's
// outcome as one JSON object on stdout for e2e/confirm_tsclient_test.go.
//
//   TMUX_MCP_TOKEN=... node confirm.mjs http URL SESSION ANSWER
//   node confirm.mjs stdio BINARY SESSION ANSWER
//
// ANSWER is accept, decline or cancel; none declares no elicitation at all.
// Over stdio the server is started with this process's environment (the
// test sets the tmux socket there). Any protocol error ends the run with
// status 1.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, where, session, answer] = process.argv.slice(2);
if (!['http', 'stdio'].includes(mode) || !where || !session || !['accept', 'decline', 'cancel', 'none'].includes(answer)) {
  console.error('usage: node confirm.mjs http|stdio URL|BINARY SESSION accept|decline|cancel|none');
  process.exit(2);
}

async function main() {
  let transport;
  if (mode === 'http') {
    transport = new StreamableHTTPClientTransport(new URL(where), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.TMUX_MCP_TOKEN}` } }
    });
  } else {
    transport = new StdioClientTransport({ command: where, args: [], env: { ...process.env }, stderr: 'ignore' });
  }
  let protocolVersion = null;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    protocolVersion = v;
    setVersion?.(v);
  };
  const capabilities = answer === 'none' ? {} : { elicitation: { form: {} } };
  const client = new Client({ name: 'tmux-mcp-ts-confirm', version: '0.0.0' }, { capabilities });
  const questions = [];
  if (answer !== 'none') {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const p = request.params;
      questions.push({ mode: p.mode ?? null, message: p.message, requestedSchema: p.requestedSchema ?? null });
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: answer };
    });
  }
  await client.connect(transport);
  const res = await client.callTool({ name: 'kill_session', arguments: { session_name: session } });
  const out = {
    transport: mode,
    protocolVersion,
    questions,
    answer,
    result: {
      isError: res.isError ?? false,
      errorType: res._meta?.error_type ?? null,
      text: (res.content ?? []).map((c) => c.text ?? '').join('')
    }
  };
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
});
