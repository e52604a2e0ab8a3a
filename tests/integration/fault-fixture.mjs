// A minimal Streamable HTTP MCP server written on node:http alone (one POST
// route, JSON answers, revision 2025-06-18), with the faults a gateway must
// survive switched on by flags:
//
//   --get stream|404|405   what a GET on /mcp gets: an SSE stream, or the
//                          status of a server without a GET route (default 404,
//                          as a framework answers a route it does not have)
//   --cut TOOL             a tools/call of TOOL is carried out (counted), then
//                          the connection is closed without an answer: a crash
//                          after the side effect
//   --cut-every N          every Nth act is carried out, then cut like --cut
//   --record FILE          append the key of every act carried out to FILE
//                          (one line each), so that executions survive a kill
//   --stall tools/list     that method is never answered (initialize is)
//   --hold tools/list      that method is answered once stdin says "release"
//   --silent               accept connections and never answer anything
//   --idle-close-ms MS     close a kept-alive connection idle this long, and
//                          print "closed" for every connection that closes
//   --port PORT            (default 0: a free one)
//
// Prints "listening http://127.0.0.1:PORT/mcp". Reads commands on stdin, so
// a test can make it act between calls: "flood N" sends N
// notifications/message on every open GET stream (outside any call);
// "release" answers the requests --hold kept waiting (and any later one).
//
// Tools: act {key} (counts each execution per key; "done KEY"), count {key}
// (how many times act ran for key), echo {text}.
import http from 'node:http';
import net from 'node:net';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const GET = arg('--get', '404');
const CUT = arg('--cut', '');
const CUT_EVERY = Number(arg('--cut-every', '0'));
const RECORD = arg('--record', '');
let acts = 0;
const STALL = arg('--stall', '');
let hold = arg('--hold', '');
const held = []; // answers --hold keeps until "release"
const SILENT = process.argv.includes('--silent');
const PORT = Number(arg('--port', '0'));
const IDLE_CLOSE_MS = Number(arg('--idle-close-ms', '0'));

const executions = new Map(); // act key -> times carried out
const streams = new Set(); // open GET streams
const sessions = new Set();

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const tools = [
  { name: 'act', description: 'A call with a side effect: counts its executions per key.', inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } },
  { name: 'count', description: 'How many times act ran for key.', inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } },
  { name: 'echo', description: 'Returns text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
];

function callTool(params) {
  const args = params.arguments || {};
  if (params.name === 'act') {
    executions.set(args.key, (executions.get(args.key) || 0) + 1);
    if (RECORD) appendFileSync(RECORD, `${args.key}\n`);
    return text(`done ${args.key}`);
  }
  if (params.name === 'count') return text(String(executions.get(args.key) || 0));
  if (params.name === 'echo') return text(String(args.text ?? ''));
  return { ...text(`unknown tool ${params.name}`), isError: true };
}

/** The JSON-RPC answer to request `m`, or undefined for none. */
function answer(m) {
  switch (m.method) {
    case 'initialize':
      return { protocolVersion: '2025-06-18', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'fault-fixture', version: '1.0.0' } };
    case 'ping':
      return {};
    case 'logging/setLevel':
      return {};
    case 'tools/list':
      return { tools };
    case 'tools/call':
      return callTool(m.params || {});
    default:
      return undefined;
  }
}

function reply(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

function onPost(req, res, body) {
  let m;
  try {
    m = JSON.parse(body);
  } catch {
    return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  }
  if (m.id === undefined) return reply(res, 202);
  if (m.method === STALL) return; // never answered
  const headers = {};
  if (m.method === 'initialize') {
    const sid = randomUUID();
    sessions.add(sid);
    headers['Mcp-Session-Id'] = sid;
  } else if (req.headers['mcp-session-id'] !== undefined && !sessions.has(req.headers['mcp-session-id'])) {
    return reply(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
  }
  const result = answer(m);
  const cut = m.method === 'tools/call' && (m.params?.name === CUT || (CUT_EVERY > 0 && m.params?.name === 'act' && ++acts % CUT_EVERY === 0));
  if (cut) {
    // The work is done; the process "crashes" before it can answer.
    req.socket.destroy();
    return;
  }
  const send = () =>
    result === undefined
      ? reply(res, 200, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } }, headers)
      : reply(res, 200, { jsonrpc: '2.0', id: m.id, result }, headers);
  if (m.method === hold) held.push(send);
  else send();
}

function onGet(req, res) {
  if (GET !== 'stream') {
    res.writeHead(Number(GET), { 'Content-Type': 'text/plain' });
    res.end(GET === '404' ? `Cannot GET ${req.url}` : 'Method Not Allowed');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(': stream\n\n');
  streams.add(res);
  res.on('close', () => streams.delete(res));
}

let server;
if (SILENT) {
  // Accepts, reads, never answers; the sockets stay open.
  const sockets = new Set();
  server = net.createServer((s) => {
    sockets.add(s);
    s.on('data', () => {});
    s.on('close', () => sockets.delete(s));
  });
} else {
  server = http.createServer((req, res) => {
    if (req.url.split('?')[0] !== '/mcp') return reply(res, 404);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST') onPost(req, res, Buffer.concat(chunks).toString('utf8'));
      else if (req.method === 'GET') onGet(req, res);
      else if (req.method === 'DELETE') reply(res, 200);
      else reply(res, 405);
    });
  });
}

if (IDLE_CLOSE_MS > 0) {
  server.keepAliveTimeout = IDLE_CLOSE_MS;
  server.on('connection', (s) => s.on('close', () => process.stdout.write('closed\n')));
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, n] = line.trim().split(/\s+/);
  if (cmd === 'release') {
    hold = '';
    for (const send of held.splice(0)) send();
    process.stdout.write('released\n');
    return;
  }
  if (cmd !== 'flood') return;
  const count = Number(n);
  for (const s of streams) {
    let out = '';
    for (let i = 0; i < count; i++) {
      const msg = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'flood', data: `line ${i}` } };
      out += `data: ${JSON.stringify(msg)}\n\n`;
    }
    s.write(out);
  }
  process.stdout.write(`flooded ${count} on ${streams.size}\n`);
});

server.listen(PORT, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`);
});
