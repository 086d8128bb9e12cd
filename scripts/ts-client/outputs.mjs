// Calls tools over stdio with the official TypeScript SDK client, which
// validates every answer's structuredContent against the tool's
// outputSchema with the validator it compiled at tools/list (and fails the
// call when it does not match), and prints what it saw as one JSON object
// on stdout for e2e/outputs_tsclient_test.go to check.
//
//   node outputs.mjs BINARY 'CALLS'
//
// CALLS is a JSON list of [tool, arguments]. The server is started with
// this process's environment. Besides each call's outcome it reports how
// many output schemas tools/list carried, how many the client compiled
// (tools sharing an $id would share one validator; ours carry none), and whether each called
// tool's validator refuses an empty object, which every one of them
// requires something of: a validator that accepted anything would make
// the calls prove nothing.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [binary, callsJSON] = process.argv.slice(2);
if (!binary || !callsJSON) {
  console.error("usage: node outputs.mjs BINARY '[[tool, args], ...]'");
  process.exit(2);
}

async function main() {
  const transport = new StdioClientTransport({ command: binary, args: [], env: { ...process.env }, stderr: 'ignore' });
  const client = new Client({ name: 'tmux-mcp-ts-outputs-check', version: '0.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const withSchema = tools.filter((t) => t.outputSchema);
  const ids = new Set(withSchema.map((t) => t.outputSchema.$id).filter((id) => typeof id === 'string'));
  const out = {
    outputSchemas: withSchema.length,
    compiled: withSchema.filter((t) => typeof t.outputSchema.$id !== 'string').length + ids.size,
    ids: Object.fromEntries(withSchema.filter((t) => t.outputSchema.$id).map((t) => [t.name, t.outputSchema.$id])),
    validators: withSchema.filter((t) => client.getToolOutputValidator(t.name)).length,
    calls: []
  };
  for (const [name, args] of JSON.parse(callsJSON)) {
    const c = { tool: name };
    try {
      const r = await client.callTool({ name, arguments: args });
      c.isError = r.isError ?? false;
      c.structured = r.structuredContent !== undefined;
      if (c.isError) c.text = r.content?.map((x) => x.text).join('');
    } catch (err) {
      c.thrown = String(err?.message ?? err); // the SDK's refusal of an answer that does not match
    }
    const v = client.getToolOutputValidator(name);
    c.hasValidator = Boolean(v);
    c.rejectsEmpty = v ? !v({}).valid : false;
    out.calls.push(c);
  }
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(`ts-client: ${err?.stack ?? err}`);
  process.exit(1);
});
