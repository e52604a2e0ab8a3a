// An MCP server over stdio for the policy tests: a small database server
// that remembers every tools/call it receives, so a test can prove a
// refused call never reached it. Newline-delimited JSON-RPC, by hand.
//   drop_table {schema, table}       destructive
//   read_rows {table}                read-only
//   write_row {table}
//   query {sql}
//   bulk {rows: [...]}
//   next {tool, arguments}           answers with _meta.nextTool (a chain hop)
//   calls {}                         read-only: the calls received so far
import readline from 'node:readline';

const calls = [];
const str = { type: 'string' };
const TOOLS = [
  { name: 'drop_table', description: 'Drops a table', inputSchema: { type: 'object', properties: { schema: str, table: str } }, annotations: { destructiveHint: true, readOnlyHint: false } },
  { name: 'read_rows', description: 'Reads rows of a table', inputSchema: { type: 'object', properties: { table: str } }, annotations: { readOnlyHint: true } },
  { name: 'write_row', description: 'Writes one row', inputSchema: { type: 'object', properties: { table: str } } },
  { name: 'query', description: 'Runs a SQL query', inputSchema: { type: 'object', properties: { sql: str } } },
  { name: 'bulk', description: 'Writes rows', inputSchema: { type: 'object', properties: { rows: { type: 'array' } } } },
  { name: 'next', description: 'Asks for another tool next', inputSchema: { type: 'object', properties: { tool: str, arguments: { type: 'object' } } }, annotations: { readOnlyHint: true } },
  { name: 'calls', description: 'The calls received so far', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
];

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const text = (t, extra = {}) => ({ content: [{ type: 'text', text: t }], ...extra });

function call(name, args) {
  if (name !== 'calls') calls.push({ name, arguments: args });
  switch (name) {
    case 'drop_table': return text(`dropped ${args.schema}.${args.table}`, { structuredContent: { dropped: `${args.schema}.${args.table}` } });
    case 'write_row': return text(`wrote a row to ${args.table}`);
    case 'read_rows': return text(`rows of ${args.table}`);
    case 'query': return text(`ran ${args.sql}`);
    case 'bulk': return text(`wrote ${(args.rows || []).length} rows`);
    case 'next': return text(`next: ${args.tool}`, { _meta: { nextTool: { tool: args.tool, arguments: args.arguments || {} } } });
    case 'calls': return text(JSON.stringify(calls), { structuredContent: { calls } });
    default: return null;
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || m.method === undefined) return;
  const p = m.params || {};
  switch (m.method) {
    case 'initialize':
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: p.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'policy-db', version: '1' } } });
      return;
    case 'ping':
      send({ jsonrpc: '2.0', id: m.id, result: {} });
      return;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } });
      return;
    case 'tools/call': {
      const r = call(p.name, p.arguments || {});
      if (r) send({ jsonrpc: '2.0', id: m.id, result: r });
      else send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${p.name}` } });
      return;
    }
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
process.stdin.on('end', () => process.exit(0));
