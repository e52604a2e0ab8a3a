// Browsers and operators: CORS for the origins in listen.allowed_origins
// (preflight answered, responses expose the MCP headers; other origins
// 403), the `admin` listener (health, readiness, metrics there and not on
// the MCP listener), servers[].forward_headers seen by a real HTTP upstream
// (and the client's token never), and SIGHUP applying auth and limits to
// live sessions.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Proc, REPO, bankStdio, closedPort, connectHttp, httpGet, httpServer, pollUntil, requireBinaries, rpc, startGateway, toYaml, withDiagnostics,
} from './harness.mjs';

const ORIGIN = 'https://app.example';
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } } };
let gw, adminPort, upstream;

async function startHeadersUpstream() {
  const proc = new Proc('headers-echo', process.execPath, [path.join(REPO, 'tests/integration/headers-fixture.mjs')]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)\s*$/);
  return { proc, url: m[1] };
}

before(async () => {
  requireBinaries();
  upstream = await startHeadersUpstream();
  adminPort = await closedPort();
  gw = await startGateway({
    listen: { allowed_origins: [ORIGIN] },
    admin: { host: '127.0.0.1', port: adminPort },
    auth: { bearer_tokens: [{ token: 'tok', name: 'ci' }] },
    servers: [bankStdio(), httpServer('echo', upstream.url, { forward_headers: ['X-Customer-Id'], headers: { 'X-Static': 'from-config' } })],
  });
});

test(
  'CORS preflight from an allowed origin: 204 with the methods and headers an MCP client needs',
  withDiagnostics(async () => {
    const res = await fetch(gw.url, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-session-id' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, POST, DELETE, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type, mcp-session-id');
    assert.equal(res.headers.get('access-control-max-age'), '600');
  }),
);

test(
  'responses to an allowed origin carry Access-Control-Allow-Origin and expose Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version',
  withDiagnostics(async () => {
    const ok = await rpc(gw.url, init, { headers: { origin: ORIGIN, authorization: 'Bearer tok' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(ok.headers.get('access-control-expose-headers'), 'Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version');
    assert.ok(ok.headers.get('mcp-session-id'));
    const denied = await rpc(gw.url, init, { headers: { origin: ORIGIN } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), ORIGIN, 'a 401 is readable by the browser too');
  }),
);

test(
  'another origin: 403 for the preflight and the request, no CORS headers',
  withDiagnostics(async () => {
    const pre = await fetch(gw.url, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 403);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    const res = await rpc(gw.url, init, { headers: { origin: 'https://evil.example', authorization: 'Bearer tok' } });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  }),
);

test(
  'admin listener: /healthz, /readyz, /metrics served there only',
  withDiagnostics(async () => {
    const admin = `http://127.0.0.1:${adminPort}`;
    assert.equal((await httpGet(`${admin}/healthz`)).status, 200);
    const ready = await httpGet(`${admin}/readyz`);
    assert.equal(ready.status, 200, ready.text);
    assert.match((await httpGet(`${admin}/metrics`)).text, /^# (HELP|TYPE) /m);
    assert.equal((await httpGet(`${admin}/mcp`)).status, 404);
    for (const p of ['/healthz', '/readyz', '/metrics']) assert.equal((await httpGet(`${gw.base}${p}`)).status, 404, p);
  }),
);

test(
  'forward_headers: the listed client header reaches the HTTP upstream; Authorization and unlisted headers do not',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: { authorization: 'Bearer tok', 'x-customer-id': 'cust-42', 'x-other': 'nope' } });
    const r = await c.result('tools/call', { name: 'echo:echo_headers', arguments: {} });
    const seen = r.structuredContent.headers;
    assert.equal(seen['x-customer-id'], 'cust-42');
    assert.equal(seen['x-static'], 'from-config');
    assert.equal(seen['x-other'], undefined);
    assert.equal(seen.authorization, undefined, 'the client token never goes upstream');
    await c.close();
  }),
);

test(
  'SIGHUP applies auth and limits without dropping sessions; a session whose principal lost access gets 401/403',
  withDiagnostics(async () => {
    const base = {
      listen: { host: '127.0.0.1', port: gw.port, path: '/mcp', allowed_origins: [ORIGIN] },
      admin: { host: '127.0.0.1', port: adminPort },
      modes: { readonly: { include_slices: ['read'] } },
      servers: [bankStdio(), httpServer('echo', upstream.url, { forward_headers: ['X-Customer-Id'], headers: { 'X-Static': 'from-config' } })],
    };
    const write = (auth, limits) => writeFileSync(gw.configPath, toYaml({ ...base, auth, ...(limits ? { limits } : {}) }));
    write({ bearer_tokens: [{ token: 'tok', name: 'ci' }, { token: 'tok2', name: 'two' }, { token: 'tok3', name: 'three' }] });
    const reloaded = () => gw.proc.stderrText.split('reloaded ').length - 1;
    let n = reloaded();
    gw.proc.child.kill('SIGHUP');
    await pollUntil(() => reloaded() > n, { what: 'reload 1' });
    const ci = await connectHttp(gw.url, { headers: { authorization: 'Bearer tok' } });
    const two = await connectHttp(gw.url, { headers: { authorization: 'Bearer tok2' } });
    const three = await connectHttp(gw.url, { headers: { authorization: 'Bearer tok3' } });
    // tok2 is removed, three may only use readonly, and ci gets a rate limit.
    write({ bearer_tokens: [{ token: 'tok', name: 'ci' }, { token: 'tok3', name: 'three', modes: ['readonly'] }] }, { calls_per_s: 1, burst: 1 });
    n = reloaded();
    gw.proc.child.kill('SIGHUP');
    await pollUntil(() => reloaded() > n, { what: 'reload 2' });
    const lost = await rpc(gw.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { session: two.session, protocolVersion: two.protocolVersion, headers: two.headers });
    assert.equal(lost.status, 401);
    const narrowed = await rpc(gw.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { session: three.session, protocolVersion: three.protocolVersion, headers: three.headers });
    assert.equal(narrowed.status, 403);
    assert.equal(narrowed.json.error.message, 'Forbidden: principal "three" may not use mode "all"');
    // ci's session survived and is now rate limited.
    const call = () => ci.request('tools/call', { name: 'bank:list_accounts', arguments: {} });
    const [r1, r2] = [await call(), await call()];
    assert.ok(r1.result, JSON.stringify(r1));
    assert.equal(r2.error?.code, -32000, JSON.stringify(r2));
    await ci.close();
  }),
);
