// Resumability of an upstream's SSE stream (2025-11-25), from the outside:
// a raw session-based HTTP upstream (in this process, on a loopback port)
// answers a tools/call with an SSE stream that ends before the response,
// after an event with an id and a `retry` delay. mcpgw goes on in a GET with
// Last-Event-ID (and the session), where the response comes. A stream that
// ends without the response every time is given up after five resumptions,
// and the client gets an isError saying so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connectHttp, requireBinaries, startGateway, tempDir, textOf, withDiagnostics } from '../integration/harness.mjs';

const SESSION = 'resume-session-1';
/** The GETs that resumed a stream, in order: { lastEventId, session }. */
const resumes = [];
/** The tools/call request ids, by tool. */
const callIds = {};
let upstream;
let gw;

function sse(res, events) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Mcp-Session-Id': SESSION });
  for (const e of events) res.write(e);
  res.end();
}

function onPost(msg, res) {
  if (msg.id === undefined) return res.writeHead(202).end();
  const json = (result) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': SESSION });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  };
  switch (msg.method) {
    case 'initialize':
      return json({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'resumer', version: '1.0.0' } });
    case 'tools/list':
      return json({ tools: ['resumed', 'never'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
    case 'tools/call':
      callIds[msg.params.name] = msg.id;
      // A priming event with an id (no data), then the stream ends early.
      return sse(res, [`id: ${msg.params.name}-0\nretry: 20\ndata:\n\n`]);
    default:
      return json({});
  }
}

function onGet(req, res) {
  const last = req.headers['last-event-id'];
  // The standalone stream for server-initiated messages is not offered.
  if (!last) return res.writeHead(405).end();
  resumes.push({ lastEventId: last, session: req.headers['mcp-session-id'] });
  const [tool, n] = last.split('-');
  if (tool === 'resumed') {
    const answer = { jsonrpc: '2.0', id: callIds.resumed, result: { content: [{ type: 'text', text: 'resumed' }] } };
    return sse(res, [`id: resumed-${Number(n) + 1}\ndata: ${JSON.stringify(answer)}\n\n`]);
  }
  // Another event with an id, and the stream ends again without the answer.
  return sse(res, [`id: ${tool}-${Number(n) + 1}\nretry: 20\ndata:\n\n`]);
}

before(async () => {
  requireBinaries();
  upstream = http.createServer((req, res) => {
    if (req.method === 'GET') return onGet(req, res);
    if (req.method === 'DELETE') return res.writeHead(200).end();
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => onPost(JSON.parse(body), res));
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${upstream.address().port}/mcp`;
  gw = await startGateway(
    { welcome: { strategy: 'none' }, servers: [{ name: 'resumer', transport: 'http', url, timeout_ms: 20000 }] },
    { dir: tempDir('mcpgw-sse-resume-') },
  );
});

after(async () => {
  await gw?.proc.stop();
  await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve()));
});

test('a stream that ends before the answer goes on in a GET with Last-Event-ID and the session', withDiagnostics(async () => {
  const c = await connectHttp(gw.url);
  const res = await c.callTool('resumer:resumed');
  assert.equal(res.isError, undefined, JSON.stringify(res));
  assert.equal(textOf(res), 'resumed');
  assert.deepEqual(resumes, [{ lastEventId: 'resumed-0', session: SESSION }]);
  await c.close();
}));

test('a stream that never brings the answer is given up after five resumptions, each from the last event', withDiagnostics(async () => {
  resumes.length = 0;
  const c = await connectHttp(gw.url);
  const res = await c.callTool('resumer:never');
  assert.equal(res.isError, true, JSON.stringify(res));
  assert.match(textOf(res), /upstream 'resumer'.*SSE stream ended without a response/);
  // Each resumption names the last event id it saw: the POST's, then each GET's.
  assert.deepEqual(
    resumes.map((r) => r.lastEventId),
    ['never-0', 'never-1', 'never-2', 'never-3', 'never-4'],
  );
  assert.ok(resumes.every((r) => r.session === SESSION));
  await c.close();
}));
