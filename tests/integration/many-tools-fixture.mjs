// A stdio MCP server (stateful revisions, newline-delimited JSON-RPC) with a
// large generated catalog, for tool search tests and the search benchmark:
// --tools N (default 5000) tools named <domain>_<verb>_<object>, each with a
// description and parameters written from the same words, all different and
// deterministic. `add_tool {name, description}` adds a tool and announces it
// with notifications/tools/list_changed; any other tool answers with its own
// name and arguments.
//
//   node many-tools-fixture.mjs [--tools N]
import readline from 'node:readline';

const at = process.argv.indexOf('--tools');
const COUNT = at > 0 ? Number(process.argv[at + 1]) : 5000;

const DOMAINS = [
  'crm', 'billing', 'ledger', 'payroll', 'inventory', 'shipping', 'helpdesk', 'calendar', 'mail', 'storage',
  'wiki', 'tracker', 'analytics', 'marketing', 'hr', 'procurement', 'fleet', 'warehouse', 'catalog', 'pricing',
  'survey', 'forum', 'chat', 'video', 'photo', 'music', 'weather', 'maps', 'travel', 'booking',
  'clinic', 'pharmacy', 'school', 'library', 'gym', 'restaurant', 'hotel', 'parking', 'energy', 'garden',
];
const VERBS = [
  ['get', 'Gets'], ['list', 'Lists'], ['create', 'Creates'], ['update', 'Updates'], ['delete', 'Deletes'],
  ['search', 'Searches'], ['export', 'Exports'], ['archive', 'Archives'], ['sync', 'Synchronises'],
  ['validate', 'Validates'], ['count', 'Counts'], ['summarize', 'Summarises'],
];
const OBJECTS = [
  ['record', 'records'], ['report', 'reports'], ['note', 'notes'], ['invoice', 'invoices'], ['contact', 'contacts'],
  ['order', 'orders'], ['ticket', 'tickets'], ['event', 'events'], ['document', 'documents'], ['user', 'users'],
  ['schedule', 'schedules'], ['setting', 'settings'],
];

function generated(i) {
  const domain = DOMAINS[i % DOMAINS.length];
  const [verb, verbs] = VERBS[Math.floor(i / DOMAINS.length) % VERBS.length];
  const [object, objects] = OBJECTS[Math.floor(i / (DOMAINS.length * VERBS.length)) % OBJECTS.length];
  return {
    name: `${domain}_${verb}_${object}`,
    description: `${verbs} ${objects} in the ${domain} system.`,
    inputSchema: {
      type: 'object',
      properties: {
        [`${object}Id`]: { type: 'string', description: `The ${object} to work on` },
        limit: { type: 'integer', description: `At most this many ${objects}` },
      },
    },
    annotations: { readOnlyHint: ['get', 'list', 'search', 'count', 'summarize'].includes(verb) },
  };
}

if (!(COUNT >= 0 && COUNT <= DOMAINS.length * VERBS.length * OBJECTS.length)) {
  process.stderr.write(`--tools must be from 0 to ${DOMAINS.length * VERBS.length * OBJECTS.length}\n`);
  process.exit(2);
}
const tools = [
  {
    name: 'add_tool',
    description: 'Adds a tool to this server (a test fixture) and announces it with list_changed.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' } }, required: ['name'] },
  },
];
for (let i = 0; i < COUNT; ++i) tools.push(generated(i));

const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const text = (t) => ({ content: [{ type: 'text', text: t }] });

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
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'many-tools', version: '1.0.0' },
      });
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools });
    case 'tools/call': {
      const { name, arguments: args = {} } = m.params ?? {};
      if (name === 'add_tool') {
        tools.push({ name: args.name, description: args.description ?? '', inputSchema: { type: 'object' } });
        ok(text(`added ${args.name}`));
        return out({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
      if (!tools.some((t) => t.name === name)) return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${name}` } });
      return ok(text(`${name} ${JSON.stringify(args)}`));
    }
    default:
      return out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
