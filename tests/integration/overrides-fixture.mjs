// A stdio MCP server (stateful revisions, newline-delimited JSON-RPC) for
// the servers[].tools tests: its tools answer with what they received, so a
// test sees the names and values that reached the upstream.
// - create_issue {repo, title, body, labels}: the contract's example tool;
//   answers `{"tool":"create_issue","arguments":{...}}` as text and as
//   structuredContent; its MCP Apps view is ui://form/create_issue.html.
// - triage {next, next_arguments}: answers "triaged" with `_meta.nextTool =
//   {tool: next, arguments: next_arguments}` (a chain, in the names the
//   caller gives: the server's own tool name and argument names, or exposed ones).
// - echo_args: answers with its arguments (no schema).
//
//   node overrides-fixture.mjs
import readline from 'node:readline';

const VIEW = 'ui://form/create_issue.html';
const tools = [
  {
    name: 'create_issue',
    description: 'Create an issue',
    annotations: { destructiveHint: true, openWorldHint: true },
    inputSchema: {
      type: 'object',
      properties: {
        repo: { type: 'string', description: 'owner/name' },
        title: { type: 'string' },
        body: { type: 'string', description: 'Body' },
        labels: { type: 'array', items: { type: 'string' } },
      },
      required: ['repo', 'title', 'body'],
    },
    _meta: { ui: { resourceUri: VIEW } },
  },
  {
    name: 'triage',
    description: 'Triage, then ask for the next tool',
    inputSchema: { type: 'object', properties: { next: { type: 'string' }, next_arguments: { type: 'object' } } },
  },
  { name: 'echo_args', description: 'Answers with its arguments', inputSchema: { type: 'object' } },
];

const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const received = (name, args) => ({
  content: [{ type: 'text', text: JSON.stringify({ tool: name, arguments: args }) }],
  structuredContent: { tool: name, arguments: args },
});

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || !m.method) return;
  const ok = (result) => out({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      return ok({
        protocolVersion: m.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: { listChanged: true }, resources: {} },
        serverInfo: { name: 'overrides-fixture', version: '1.0.0' },
      });
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools });
    case 'resources/list':
      return ok({ resources: [{ uri: VIEW, name: 'create_issue form', mimeType: 'text/html;profile=mcp-app' }] });
    case 'resources/templates/list':
      return ok({ resourceTemplates: [] });
    case 'resources/read':
      return ok({
        contents: [{ uri: VIEW, mimeType: 'text/html;profile=mcp-app', text: '<html><head></head><body>form</body></html>' }],
      });
    case 'tools/call': {
      const { name, arguments: args = {} } = m.params ?? {};
      if (name === 'triage') {
        return ok({ content: [{ type: 'text', text: 'triaged' }], _meta: { nextTool: { tool: args.next, arguments: args.next_arguments ?? {} } } });
      }
      if (!tools.some((t) => t.name === name)) return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${name}` } });
      return ok(received(name, args));
    }
    default:
      return out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
