// A stdio MCP server that is slow to start: it answers its first request
// (initialize, or the server/discover probe) only after --delay-ms (default
// 2000), as a server that loads a model or opens a database does. It offers
// everything a gateway aggregates from its upstreams: tools (one of them
// flagged `_meta.welcomeTool`), a resource, a prompt, tasks and an
// extension of its own, so that a client can tell whether the gateway's
// first answers waited for it.
//
//   node slow-start-fixture.mjs [--delay-ms N] [--name NAME]
import readline from 'node:readline';

const arg = (flag, fallback) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const delayMs = Number(arg('--delay-ms', '2000'));
const name = arg('--name', 'slow');

const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const result = (id, r) => out({ jsonrpc: '2.0', id, result: r });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

const tools = [
  { name: 'hello', description: 'Says hello', inputSchema: { type: 'object', properties: { who: { type: 'string' } } } },
  {
    name: 'welcome',
    description: 'Instructions for the model',
    inputSchema: { type: 'object' },
    _meta: { welcomeTool: true },
  },
  {
    name: 'relay',
    description: 'Asks the gateway to call hello next',
    inputSchema: { type: 'object' },
  },
];

let started = false;
const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const m = JSON.parse(line);
  if (!started && (m.method === 'initialize' || m.method === 'server/discover')) {
    setTimeout(() => {
      started = true;
      answer(m);
    }, delayMs);
    return;
  }
  answer(m);
});

function answer(m) {
  switch (m.method) {
    case 'server/discover':
      out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
      return;
    case 'initialize':
      result(m.id, {
        protocolVersion: m.params.protocolVersion,
        capabilities: {
          tools: { listChanged: true },
          resources: {},
          prompts: {},
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          extensions: { 'com.example/slow-start': { ready: true } },
        },
        serverInfo: { name, version: '1' },
      });
      return;
    case 'tools/list':
      result(m.id, { tools });
      return;
    case 'tools/call': {
      const tool = m.params.name;
      if (tool === 'welcome') result(m.id, text(`welcome from the ${name} server`));
      else if (tool === 'hello') result(m.id, text(`hello ${m.params.arguments?.who ?? 'there'} from ${name}`));
      else if (tool === 'relay')
        result(m.id, { ...text('relayed'), _meta: { nextTool: { tool: 'hello', arguments: { who: 'chain' } } } });
      else out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${tool}` } });
      return;
    }
    case 'resources/list':
      result(m.id, { resources: [{ uri: 'file:///slow/readme.txt', name: 'readme', mimeType: 'text/plain' }] });
      return;
    case 'resources/templates/list':
      result(m.id, { resourceTemplates: [] });
      return;
    case 'resources/read':
      result(m.id, { contents: [{ uri: m.params.uri, mimeType: 'text/plain', text: `read from ${name}` }] });
      return;
    case 'prompts/list':
      result(m.id, { prompts: [{ name: 'greet', description: 'A greeting' }] });
      return;
    case 'prompts/get':
      result(m.id, { messages: [{ role: 'user', content: { type: 'text', text: `prompt from ${name}` } }] });
      return;
    default:
      if (m.id !== undefined) result(m.id, {});
  }
}
