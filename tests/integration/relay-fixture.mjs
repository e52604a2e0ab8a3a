// An MCP server whose tools/call answers are written byte by byte (issue
// 45: the relay): well-formed answers with their members in odd places, so
// a test can tell whether the gateway passed the result's bytes on as they
// came or read them and wrote them again. Over stdio (newline-delimited
// JSON-RPC) or, with --http, Streamable HTTP (POST; a JSON body, or with
// `sse: true` in the arguments an SSE event).
//
//   node relay-fixture.mjs [--http]   (--http prints "listening http://127.0.0.1:PORT/mcp")
//
// Tool `answer {shape, bytes?, sse?, cut?}`: the result resultOf(shape) gives
// (relay-shapes.mjs), in a message with the id first or, for `plain` and
// `huge`, after the result; with `cut` (HTTP), a JSON body that announces
// its whole length and ends with the connection halfway. Tool `echo {text}` answers the text (a chain's
// next hop). Tool `request` answers the text of the request that called it,
// as it came (what the gateway wrote).
import http from 'node:http';
import { RAW_BAD, resultOf } from './relay-shapes.mjs';

const HTTP = process.argv.includes('--http');

function answer(id, shape, bytes) {
  const result = resultOf(shape, bytes);
  if (result === undefined) return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32602,"message":"no shape ${shape}"}}`;
  // The id after the result, jsonrpc last: only a reader that finds
  // members wherever they are relays it.
  if (shape === 'plain' || shape === 'huge') return `{"result":${result} , "id":${id},"jsonrpc":"2.0"}`;
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}

/** `text` as UTF-8, with each @@BAD@@ the two ill-formed bytes. */
function bytesOf(text) {
  const parts = text.split('@@BAD@@').map((t) => Buffer.from(t, 'utf8'));
  return Buffer.concat(parts.flatMap((p, i) => (i ? [RAW_BAD, p] : [p])));
}

const tools = [
  { name: 'answer', description: 'answers with a crafted result', inputSchema: { type: 'object', properties: { shape: { type: 'string' }, bytes: { type: 'integer' }, sse: { type: 'boolean' } } } },
  { name: 'echo', description: 'answers its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'request', description: 'answers the text of the request that called it, as it came', inputSchema: { type: 'object' } },
];

/** The answer to message `m` (whose text was `raw`) as bytes, with whether it goes as an SSE event; undefined for none. */
function handle(m, raw) {
  const reply = (result) => ({ bytes: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: m.id, result })) });
  switch (m.method) {
    case 'initialize':
      return reply({ protocolVersion: m.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'relay', version: '1' } });
    case 'tools/list':
      return reply({ tools });
    case 'ping':
      return reply({});
    case 'tools/call': {
      const args = m.params?.arguments ?? {};
      if (m.params?.name === 'echo') return reply({ content: [{ type: 'text', text: String(args.text) }] });
      if (m.params?.name === 'request') return reply({ content: [{ type: 'text', text: raw }] });
      return { bytes: bytesOf(answer(JSON.stringify(m.id), args.shape, args.bytes ?? 0)), sse: !!args.sse, cut: !!args.cut };
    }
    default:
      return m.id === undefined ? undefined : { bytes: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } })) };
  }
}

if (!HTTP) {
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      const line = pending.subarray(0, nl).toString('utf8');
      pending = pending.subarray(nl + 1);
      const a = handle(JSON.parse(line), line);
      if (a) process.stdout.write(Buffer.concat([a.bytes, Buffer.from('\n')]));
    }
  });
  process.stdin.on('end', () => process.exit(0));
} else {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const a = handle(JSON.parse(body), body);
      if (!a) {
        res.writeHead(202).end();
        return;
      }
      if (a.cut) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': a.bytes.length });
        res.write(a.bytes.subarray(0, a.bytes.length >> 1), () => res.socket.destroy());
        return;
      }
      if (!a.sse) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': a.bytes.length }).end(a.bytes);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // One data line per line of the message (the reader joins them with \n).
      const lines = a.bytes.toString('latin1').split(/\r?\n|\r/).map((l) => `data: ${l}\n`);
      res.end(Buffer.from(`event: message\n${lines.join('')}\n`, 'latin1'));
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`));
}
