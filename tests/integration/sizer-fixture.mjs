// A minimal MCP server (stateful revisions) whose answers can be made any
// size: over stdio (newline-delimited, each answer serialized result first
// and id last, as the TypeScript SDK writes it), or over Streamable HTTP or
// HTTPS (plain JSON answers, or SSE when a call asks for it).
//
//   node sizer-fixture.mjs --stdio
//   node sizer-fixture.mjs --http [--tls CERT KEY]     prints "listening URL"
//
// Tools: echo {text} returns text; big {bytes, sse?} returns a text of that
// many bytes (on an SSE stream when sse is true).
import http from 'node:http';
import https from 'node:https';
import readline from 'node:readline';
import { readFileSync } from 'node:fs';

const tools = [
  { name: 'echo', description: 'returns text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  {
    name: 'big',
    description: 'returns a text of `bytes` bytes',
    inputSchema: { type: 'object', properties: { bytes: { type: 'integer' }, sse: { type: 'boolean' } } },
  },
];

/** The result of request `m`, or undefined for a notification. */
function answer(m) {
  if (m.id === undefined) return undefined;
  switch (m.method) {
    case 'initialize':
      return {
        protocolVersion: m.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'sizer', version: '1.0.0' },
      };
    case 'tools/list':
      return { tools };
    case 'tools/call': {
      const args = m.params?.arguments ?? {};
      if (m.params?.name === 'big') return { content: [{ type: 'text', text: 'x'.repeat(args.bytes ?? 0) }] };
      return { content: [{ type: 'text', text: String(args.text ?? '') }] };
    }
    case 'ping':
      return {};
    default:
      return undefined;
  }
}

const frame = (m) => {
  const result = answer(m);
  if (result !== undefined) return { result, jsonrpc: '2.0', id: m.id };
  return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
};

if (process.argv.includes('--stdio')) {
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.method && m.id !== undefined) process.stdout.write(`${JSON.stringify(frame(m))}\n`);
  });
  rl.on('close', () => process.exit(0));
} else {
  const tlsAt = process.argv.indexOf('--tls');
  const handler = (req, res) => {
    if (req.method === 'DELETE') return res.writeHead(200).end();
    if (req.method !== 'POST') return res.writeHead(405).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let m;
      try {
        m = JSON.parse(body);
      } catch {
        return res.writeHead(400).end();
      }
      if (m.id === undefined) return res.writeHead(202).end();
      const out = JSON.stringify(frame(m));
      const headers = m.method === 'initialize' ? { 'Mcp-Session-Id': 'sizer-session' } : {};
      if (m.params?.arguments?.sse) {
        res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream' });
        return res.end(`event: message\ndata: ${out}\n\n`);
      }
      res.writeHead(200, { ...headers, 'Content-Type': 'application/json' }).end(out);
    });
  };
  const server =
    tlsAt > 0
      ? https.createServer({ cert: readFileSync(process.argv[tlsAt + 1]), key: readFileSync(process.argv[tlsAt + 2]) }, handler)
      : http.createServer(handler);
  server.listen(0, '127.0.0.1', () => {
    const scheme = tlsAt > 0 ? 'https' : 'http';
    process.stdout.write(`listening ${scheme}://localhost:${server.address().port}/mcp\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
