// JSON-RPC over HTTP beyond single requests: batches answered as one array
// matched by id, an upstream's JSON-RPC error relayed as is, and the
// Prometheus counters those calls leave in /metrics.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bankStdio, connectHttp, httpGet, requireBinaries, rpc, startGateway, toolboxStdio, withDiagnostics } from './harness.mjs';

let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({ servers: [bankStdio(), toolboxStdio()] });
});

test(
  'a batch [ping, tools/call echo, invalid] gets one JSON array with three answers matched by id',
  withDiagnostics(async () => {
    // Batches exist in 2025-03-26 (removed in 2025-06-18).
    const c = await connectHttp(gw.url, { protocolVersion: '2025-03-26' });
    assert.equal(c.protocolVersion, '2025-03-26');
    const batch = [
      { jsonrpc: '2.0', id: 'p-1', method: 'ping' },
      { jsonrpc: '2.0', id: 'e-2', method: 'tools/call', params: { name: 'toolbox:echo', arguments: { text: 'batched' } } },
      { jsonrpc: '2.0', id: 'x-3' }, // neither a request nor a response
    ];
    const res = await rpc(gw.url, batch, c.opts());
    assert.equal(res.status, 200, res.text);
    assert.match(res.contentType, /^application\/json/);
    assert.ok(Array.isArray(res.json), `not a JSON array: ${res.text}`);
    assert.equal(res.json.length, 3, res.text);
    const byId = Object.fromEntries(res.json.map((m) => [m.id, m]));
    assert.deepEqual(Object.keys(byId).sort(), ['e-2', 'p-1', 'x-3'], res.text);
    for (const m of res.json) assert.equal(m.jsonrpc, '2.0');
    assert.deepEqual(byId['p-1'].result, {});
    assert.deepEqual(byId['e-2'].result, { content: [{ type: 'text', text: 'batched' }] });
    assert.equal(byId['x-3'].result, undefined);
    assert.equal(byId['x-3'].error.code, -32600, JSON.stringify(byId['x-3']));
    await c.close();
  }),
);

test(
  'batch edge cases: only notifications → 202; a non-object member → -32600 with id null',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { protocolVersion: '2025-03-26' });
    const n = await rpc(gw.url, [{ jsonrpc: '2.0', method: 'notifications/initialized' }], c.opts());
    assert.equal(n.status, 202, n.text);
    assert.equal(n.text, '');
    const mixed = await rpc(gw.url, [{ jsonrpc: '2.0', id: 9, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }], c.opts());
    assert.equal(mixed.status, 200);
    assert.deepEqual(mixed.json, [{ jsonrpc: '2.0', id: 9, result: {} }]);
    const bad = await rpc(gw.url, '[1]', c.opts());
    assert.ok(Array.isArray(bad.json), bad.text);
    assert.equal(bad.json.length, 1);
    assert.equal(bad.json[0].id, null);
    assert.equal(bad.json[0].error.code, -32600);
    await c.close();
  }),
);

test(
  'an upstream JSON-RPC error is relayed: toolbox:rpc_error → -32000 "deliberate failure"',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await c.send('tools/call', { name: 'toolbox:rpc_error', arguments: {} });
    assert.equal(res.status, 200, res.text);
    const m = res.message;
    assert.equal(m.result, undefined, JSON.stringify(m));
    assert.equal(m.error.code, -32000);
    assert.equal(m.error.message, 'deliberate failure');
    assert.equal(typeof m.id, 'number');
    // The session and the upstream are fine afterwards.
    assert.deepEqual(await c.callTool('toolbox:echo', { text: 'ok' }), { content: [{ type: 'text', text: 'ok' }] });
    await c.close();
  }),
);

/** Prometheus text → [{name, labels, value}]. */
function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

function sample(metrics, name, want) {
  const hits = metrics.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
  return hits.reduce((a, s) => a + s.value, 0);
}

test(
  '/metrics counts tool calls by server and shows mcpgw_upstream_up',
  withDiagnostics(async () => {
    const before = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    const c = await connectHttp(gw.url);
    for (let i = 0; i < 3; i++) await c.callTool('toolbox:echo', { text: `m${i}` });
    await c.callTool('bank:list_accounts');
    assert.equal((await c.request('tools/call', { name: 'toolbox:rpc_error', arguments: {} })).error.code, -32000);
    const m = await httpGet(`${gw.base}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.text, /^mcpgw_tool_calls_total\{/m);
    assert.match(m.text, /^mcpgw_tool_calls_total\{[^}]*server="toolbox"/m);
    assert.match(m.text, /^mcpgw_upstream_up\b/m);
    const after = parseMetrics(m.text);
    // Tests in a file run one after another: nothing else calls meanwhile.
    const delta = (labels) => sample(after, 'mcpgw_tool_calls_total', labels) - sample(before, 'mcpgw_tool_calls_total', labels);
    assert.equal(delta({ server: 'toolbox' }), 4, m.text);
    assert.equal(delta({ server: 'toolbox', outcome: 'ok' }), 3, m.text); // the rpc_error call is not a success
    assert.equal(delta({ server: 'bank' }), 1, m.text);
    assert.equal(sample(after, 'mcpgw_upstream_up', { server: 'toolbox' }), 1);
    assert.equal(sample(after, 'mcpgw_upstream_up', { server: 'bank' }), 1);
    await c.close();
  }),
);
