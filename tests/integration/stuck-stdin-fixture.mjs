// A stdio MCP server that stops reading its stdin at its first tools/call
// and never answers it: a hung upstream whose pipe fills up. The gateway
// must bound what it queues for it and fail the calls beyond the bound.
//
//   node stuck-stdin-fixture.mjs
import readline from 'node:readline';

const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize')
    out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stuck', version: '1' } } });
  else if (m.method === 'tools/list')
    out({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'swallow', inputSchema: { type: 'object' } }] } });
  else if (m.method === 'tools/call') {
    // Hung from now on: nothing more is read, nothing answered.
    lines.close();
    process.stdin.pause();
  } else if (m.id !== undefined) out({ jsonrpc: '2.0', id: m.id, result: {} });
});
// Alive until killed, whatever happens to stdin.
setInterval(() => {}, 1 << 30);
