// Error paths of the Streamable HTTP endpoint: JSON-RPC error codes, session
// handling, body size, protocol version header, Origin and Host checks, and
// the GET SSE stream with heartbeats.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, bankStdio, connectHttp, rawHttp, requireBinaries, rpc, startGateway, withDiagnostics } from './harness.mjs';

const MAX_BODY = 4096;
let gw;
let c; // an initialised session

before(async () => {
  requireBinaries();
  gw = await startGateway({
    listen: { max_body_bytes: MAX_BODY, heartbeat_ms: 200 },
    servers: [bankStdio()],
  });
  c = await connectHttp(gw.url);
});

/** The single JSON-RPC error object of a response, with HTTP status checked to be 200 or 400. */
function errorOf(res) {
  assert.ok([200, 400].includes(res.status), `HTTP ${res.status}: ${res.text}`);
  assert.ok(res.message, `no JSON-RPC response: HTTP ${res.status} ${res.text}`);
  assert.equal(res.message.jsonrpc, '2.0');
  assert.equal(res.message.result, undefined, JSON.stringify(res.message));
  assert.ok(res.message.error, JSON.stringify(res.message));
  assert.equal(typeof res.message.error.message, 'string');
  return res.message.error;
}

test(
  'malformed JSON → -32700',
  withDiagnostics(async () => {
    const res = await rpc(gw.url, '{"jsonrpc": "2.0", "id": 1, "method": "ping"', c.opts());
    assert.equal(errorOf(res).code, -32700);
    assert.equal(res.message.id, null);
  }),
);

test(
  'not a JSON-RPC request → -32600',
  withDiagnostics(async () => {
    const a = await rpc(gw.url, '{"jsonrpc":"2.0"}', c.opts());
    assert.equal(errorOf(a).code, -32600);
    const b = await rpc(gw.url, { jsonrpc: '2.0', id: 31, method: 42 }, c.opts());
    assert.equal(errorOf(b).code, -32600);
  }),
);

test(
  'unknown method → -32601',
  withDiagnostics(async () => {
    const res = await c.send('no/such_method', {});
    assert.equal(errorOf(res).code, -32601);
    assert.equal(typeof res.message.id, 'number');
  }),
);

test(
  'unknown tool → JSON-RPC error -32602, not a tool result',
  withDiagnostics(async () => {
    const res = await c.send('tools/call', { name: 'bank:no_such_tool', arguments: {} });
    assert.equal(errorOf(res).code, -32602);
    const res2 = await c.send('tools/call', { name: 'nosuchserver:list_accounts', arguments: {} });
    assert.equal(errorOf(res2).code, -32602);
  }),
);

test(
  'a request without Mcp-Session-Id after initialize → 400; an unknown session id → 404',
  withDiagnostics(async () => {
    const noSession = await rpc(gw.url, { jsonrpc: '2.0', id: 41, method: 'tools/list' }, { protocolVersion: c.protocolVersion });
    assert.equal(noSession.status, 400, noSession.text);
    const unknown = await rpc(gw.url, { jsonrpc: '2.0', id: 42, method: 'tools/list' }, { session: '0123456789abcdef0123456789abcdef', protocolVersion: c.protocolVersion });
    assert.equal(unknown.status, 404, unknown.text);
  }),
);

test(
  'DELETE ends the session; the id then gets 404',
  withDiagnostics(async () => {
    const s = await connectHttp(gw.url);
    assert.deepEqual(await s.result('ping'), {});
    const del = await fetch(gw.url, { method: 'DELETE', headers: { 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
    await del.text();
    assert.ok([200, 204].includes(del.status), `DELETE → ${del.status}`);
    const after = await s.send('ping');
    assert.equal(after.status, 404, after.text);
    // The other session is untouched.
    assert.deepEqual(await c.result('ping'), {});
  }),
);

/** A ping request of exactly `size` bytes. */
function pingOfSize(size) {
  const base = { jsonrpc: '2.0', id: 51, method: 'ping', params: { _meta: { pad: '' } } };
  const overhead = JSON.stringify(base).length;
  base.params._meta.pad = 'p'.repeat(size - overhead);
  const s = JSON.stringify(base);
  assert.equal(s.length, size);
  return s;
}

function sessionHeaders() {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': c.session,
    'mcp-protocol-version': c.protocolVersion,
  };
}

test(
  'a body larger than listen.max_body_bytes (Content-Length) → 413; one just under it works',
  withDiagnostics(async () => {
    const big = await rawHttp(gw.url, { headers: sessionHeaders(), body: pingOfSize(MAX_BODY * 3) });
    assert.equal(big.status, 413, big.body);
    const ok = await rpc(gw.url, pingOfSize(MAX_BODY - 100), c.opts());
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.message.result, {});
  }),
);

test(
  'a chunked body larger than listen.max_body_bytes → 413',
  withDiagnostics(async () => {
    const big = await rawHttp(gw.url, { headers: sessionHeaders(), body: pingOfSize(MAX_BODY * 3), chunked: true });
    assert.equal(big.status, 413, `chunked ${MAX_BODY * 3}-byte body with max_body_bytes ${MAX_BODY}: HTTP ${big.status} ${big.body}`);
    const ok = await rawHttp(gw.url, { headers: sessionHeaders(), body: pingOfSize(MAX_BODY - 100), chunked: true });
    assert.equal(ok.status, 200, ok.body);
  }),
);

test(
  'MCP-Protocol-Version: 1999-01-01 → 400',
  withDiagnostics(async () => {
    const res = await rpc(gw.url, { jsonrpc: '2.0', id: 61, method: 'ping' }, { session: c.session, protocolVersion: '1999-01-01' });
    assert.equal(res.status, 400, res.text);
  }),
);

test(
  'a foreign Origin → 403; loopback origins with the right port work',
  withDiagnostics(async () => {
    const evilInit = await rpc(gw.url, { jsonrpc: '2.0', id: 71, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, { headers: { origin: 'http://evil.example.com' } });
    assert.equal(evilInit.status, 403, evilInit.text);
    assert.equal(evilInit.headers.get('mcp-session-id'), null);
    const evil = await rpc(gw.url, { jsonrpc: '2.0', id: 72, method: 'ping' }, c.opts({ headers: { origin: 'http://evil.example.com' } }));
    assert.equal(evil.status, 403, evil.text);
    for (const origin of [`http://localhost:${gw.port}`, `http://127.0.0.1:${gw.port}`]) {
      const res = await rpc(gw.url, { jsonrpc: '2.0', id: 73, method: 'ping' }, c.opts({ headers: { origin } }));
      assert.equal(res.status, 200, `${origin}: ${res.status} ${res.text}`);
      assert.deepEqual(res.message.result, {});
    }
  }),
);

test(
  'Host: evil.example.com → 4xx (DNS rebinding); Host localhost works',
  withDiagnostics(async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 81, method: 'ping' });
    const base = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': c.session,
      'mcp-protocol-version': c.protocolVersion,
    };
    const evil = await rawHttp(gw.url, { headers: { ...base, host: 'evil.example.com' }, body });
    assert.ok(evil.status >= 400 && evil.status < 500, `Host evil.example.com → ${evil.status} ${evil.body}`);
    const evilPort = await rawHttp(gw.url, { headers: { ...base, host: `evil.example.com:${gw.port}` }, body });
    assert.ok(evilPort.status >= 400 && evilPort.status < 500, `Host evil.example.com:${gw.port} → ${evilPort.status}`);
    const good = await rawHttp(gw.url, { headers: { ...base, host: `localhost:${gw.port}` }, body });
    assert.equal(good.status, 200, good.body);
    assert.match(good.body, /"result"\s*:\s*\{\s*\}/);
  }),
);

test(
  'GET with a session opens an SSE stream that carries ": ping" heartbeats',
  withDiagnostics(async () => {
    const ac = new AbortController();
    try {
      const res = await fetch(gw.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': c.session, 'mcp-protocol-version': c.protocolVersion },
        // Only a stream that hangs meets this deadline.
        signal: AbortSignal.any([ac.signal, AbortSignal.timeout(20000)]),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') || '', /^text\/event-stream/);
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let raw = '';
      // A heartbeat is an SSE comment line, e.g. ": ping". One may come as
      // the stream opens; a second on the idle stream is the 200 ms beat.
      while ((raw.match(/(^|\n): ?ping\b/g) || []).length < 2) {
        const { value, done } = await reader.read();
        assert.ok(!done, `stream ended before two heartbeats; got: ${JSON.stringify(raw)}`);
        raw += dec.decode(value, { stream: true });
      }
      // Anything else on the stream is well-formed SSE.
      const parser = new SseParser();
      for (const ev of parser.push(raw.slice(0, raw.lastIndexOf('\n\n') + 2))) {
        if (ev.data !== undefined) JSON.parse(ev.data);
      }
      await reader.cancel();
    } finally {
      ac.abort();
    }
    // The session still works after the stream was dropped.
    assert.deepEqual(await c.result('ping'), {});
  }),
);
