// An MCP server that misbehaves on purpose (issue 22: "never twice, never
// lost"), over stdio (newline-delimited JSON-RPC) or, with --http, over
// Streamable HTTP (POST only; GET is 405). It reads and writes raw bytes, so
// a test sees exactly what crossed the wire.
//
//   node hostile-fixture.mjs [--http] [--name NAME]
//     (--http prints "listening http://127.0.0.1:PORT/mcp" on stdout)
//
// Tools:
//   malformed {shape, sse?}   answers the call's id with a malformed message:
//                             surrogate (a lone \ud83d), huge_number (1e400),
//                             string_error, both (result and error), no_jsonrpc;
//                             over HTTP with sse: true as an SSE event on a
//                             stream it then keeps open
//   bad_utf8                  a result whose text carries raw ill-formed bytes
//   inspect {text}            says whether the bytes of its request were
//                             well-formed UTF-8, and the hex of `text`'s bytes
//   progress_burst {count, size}   `count` progress notifications of about
//                             `size` bytes each (with the call's progressToken),
//                             then the answer "burst done"
//   elicit_flood {count, answer_after}   sends `count` elicitation requests at
//                             once, and answers the call once `answer_after`
//                             of them were answered or refused (default 0;
//                             answering later needs stdio)
//   hold {ms}                 answers after `ms` (work that takes time; stdio),
//                             counting how many calls it holds at once
//   hold_stats                the most calls held at once, and how many ended
//   elicit_stats              what became of those requests: answered (by
//                             the client), refused (with an error; the first
//                             one kept), unanswered
import http from 'node:http';

const argv = process.argv.slice(2);
const HTTP = argv.includes('--http');
const nameAt = argv.indexOf('--name');
const NAME = nameAt >= 0 ? argv[nameAt + 1] : 'hostile';
const strict = new TextDecoder('utf-8', { fatal: true });

const tools = [
  { name: 'malformed', description: 'answers with a malformed message', inputSchema: { type: 'object', properties: { shape: { type: 'string' }, sse: { type: 'boolean' } } } },
  { name: 'bad_utf8', description: 'answers with ill-formed UTF-8 bytes', inputSchema: { type: 'object' } },
  { name: 'inspect', description: 'reports the bytes it received', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'progress_burst', description: 'many progress notifications, then the answer', inputSchema: { type: 'object', properties: { count: { type: 'integer' }, size: { type: 'integer' } } } },
  { name: 'elicit_flood', description: 'many elicitation requests, then the answer', inputSchema: { type: 'object', properties: { count: { type: 'integer' } } } },
  { name: 'elicit_stats', description: 'what became of the elicitation requests', inputSchema: { type: 'object' } },
  { name: 'hold', description: 'answers after ms', inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } } },
  { name: 'hold_stats', description: 'the most calls held at once', inputSchema: { type: 'object' } },
];
const held = { now: 0, most: 0, ended: 0 };

const stats = { sent: 0, answered: 0, refused: 0, firstRefusal: null, lastRefusal: null };
const flood = new Set(); // ids of elicitation requests without an answer yet
let floodWaiter = null; // {left, answer}: the call answered once `left` more responses came

const MALFORMED = {
  surrogate: (id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"cut mid-emoji \\ud83d"}]}}`,
  huge_number: (id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[],"n":1e400}}`,
  string_error: (id) => `{"jsonrpc":"2.0","id":${id},"error":"it broke"}`,
  both: (id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[]},"error":{"code":-32000,"message":"and failed"}}`,
  no_jsonrpc: (id) => `{"id":${id},"result":{"content":[{"type":"text","text":"no version"}]}}`,
};

const json = (m) => Buffer.from(JSON.stringify(m));
const result = (id, r) => json({ jsonrpc: '2.0', id, result: r });
const text = (t, extra = {}) => ({ content: [{ type: 'text', text: t }], ...extra });

/**
 * Handles one message; `send(bytes)` writes a message to the client (in
 * the call's own stream over HTTP), `rawLine` is the message as received.
 * Returns the answer (bytes) or undefined; `sse` asks for an open stream.
 */
function handle(m, rawLine, send) {
  const p = m.params || {};
  if (m.method === undefined) {
    if (flood.delete(m.id)) {
      if (m.error) {
        stats.refused++;
        stats.firstRefusal ??= m.error;
        stats.lastRefusal = m.error;
      } else stats.answered++;
      if (floodWaiter && --floodWaiter.left === 0) {
        floodWaiter.answer();
        floodWaiter = null;
      }
    }
    return undefined;
  }
  if (m.id === undefined) return undefined;
  switch (m.method) {
    case 'initialize':
      return result(m.id, { protocolVersion: p.protocolVersion, serverInfo: { name: NAME, version: '1.0.0' }, capabilities: { tools: {} } });
    case 'ping':
      return result(m.id, {});
    case 'tools/list':
      return result(m.id, { tools });
    case 'tools/call':
      break;
    default:
      return json({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
  const args = p.arguments || {};
  const token = p._meta?.progressToken;
  switch (p.name) {
    case 'malformed': {
      const shape = MALFORMED[args.shape];
      if (!shape) return result(m.id, text(`no shape ${args.shape}`, { isError: true }));
      return Object.assign(Buffer.from(shape(JSON.stringify(m.id))), { sse: !!args.sse });
    }
    case 'bad_utf8':
      return Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[{"type":"text","text":"caf`),
        Buffer.from([0xe9, 0x20, 0xf0, 0x9f, 0x98]), // Latin-1 é, a space, an emoji cut short
        Buffer.from(' end"}]}}'),
      ]);
    case 'inspect': {
      let wellFormed = true;
      try {
        strict.decode(rawLine);
      } catch {
        wellFormed = false;
      }
      const bytes = Buffer.from(String(args.text ?? ''), 'utf8');
      return result(m.id, { ...text(`received ${wellFormed ? 'well-formed' : 'ill-formed'} UTF-8`), structuredContent: { wellFormed, hex: bytes.toString('hex') } });
    }
    case 'progress_burst': {
      const count = Number(args.count ?? 100);
      const pad = 'p'.repeat(Number(args.size ?? 1000));
      if (token !== undefined)
        for (let i = 1; i <= count; i++) send(json({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: count, message: `${i} ${pad}` } }));
      return result(m.id, text(`burst done after ${count}`));
    }
    case 'elicit_flood': {
      const count = Number(args.count ?? 100);
      const after = Number(args.answer_after ?? 0);
      for (let i = 0; i < count; i++) {
        const id = `${NAME}-flood-${stats.sent++}`;
        flood.add(id);
        send(json({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { message: `question ${i}`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } }));
      }
      const answer = result(m.id, text(`flooded ${count}`));
      if (after <= 0) return answer;
      floodWaiter = { left: after, answer: () => send(answer) };
      return undefined;
    }
    case 'hold': {
      held.now++;
      held.most = Math.max(held.most, held.now);
      setTimeout(() => {
        held.now--;
        held.ended++;
        send(result(m.id, text('held')));
      }, Number(args.ms ?? 100));
      return undefined;
    }
    case 'hold_stats':
      return result(m.id, { ...text(JSON.stringify(held)), structuredContent: { ...held } });
    case 'elicit_stats':
      return result(m.id, { ...text(JSON.stringify(stats)), structuredContent: { ...stats, unanswered: flood.size } });
    default:
      return json({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${p.name}` } });
  }
}

function parse(raw) {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

if (!HTTP) {
  const write = (bytes) => process.stdout.write(Buffer.concat([bytes, Buffer.from('\n')]));
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      const line = pending.subarray(0, nl);
      pending = pending.subarray(nl + 1);
      const m = parse(line);
      if (!m || typeof m !== 'object') continue;
      const answer = handle(m, line, write);
      if (answer) write(answer);
    }
  });
  process.stdin.on('end', () => process.exit(0));
} else {
  const session = `hostile-${process.pid}`;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const m = parse(raw);
      if (!m || typeof m !== 'object') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
        return;
      }
      const related = [];
      const answer = handle(m, raw, (bytes) => related.push(bytes));
      if (!answer) {
        res.writeHead(202, { 'mcp-session-id': session }).end();
        return;
      }
      if (!related.length && !answer.sse) {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session }).end(answer);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': session });
      for (const r of related) res.write(Buffer.concat([Buffer.from('data: '), r, Buffer.from('\n\n')]));
      res.write(Buffer.concat([Buffer.from('data: '), answer, Buffer.from('\n\n')]));
      // A malformed answer as an event on a stream that stays open: only
      // reading it tells the caller the answer came.
      if (answer.sse) req.socket.on('close', () => res.end());
      else res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`));
}
