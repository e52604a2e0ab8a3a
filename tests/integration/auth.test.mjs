// Bearer-token auth: missing or wrong token → 401 with WWW-Authenticate:
// Bearer; a right token initializes; a session is bound to the principal
// that opened it (another valid token gets 404 for it).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpClient, bankStdio, connectHttp, httpGet, requireBinaries, rpc, startGateway, textOf, withDiagnostics } from './harness.mjs';

let gw;
const A = { authorization: 'Bearer s3cret' };
const B = { authorization: 'Bearer other-t0ken' };

before(async () => {
  requireBinaries();
  gw = await startGateway({
    auth: { bearer_tokens: [{ token: 's3cret', name: 'ci' }, { token: 'other-t0ken', name: 'second' }] },
    servers: [bankStdio()],
  });
});

const init = (id = 1) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } } });

function assert401(res, what) {
  assert.equal(res.status, 401, `${what}: HTTP ${res.status} ${res.text}`);
  const www = res.headers.get('www-authenticate');
  assert.ok(www, `${what}: no WWW-Authenticate header`);
  assert.match(www, /^Bearer\b/, `${what}: WWW-Authenticate: ${www}`);
  assert.equal(res.headers.get('mcp-session-id'), null, `${what}: a session was created`);
}

test(
  'no Authorization header → 401 with WWW-Authenticate: Bearer',
  withDiagnostics(async () => {
    assert401(await rpc(gw.url, init()), 'no header');
  }),
);

test(
  'a wrong token, a wrong scheme, an empty token → 401',
  withDiagnostics(async () => {
    assert401(await rpc(gw.url, init(), { headers: { authorization: 'Bearer s3cret-not' } }), 'wrong token');
    assert401(await rpc(gw.url, init(), { headers: { authorization: 'Bearer S3CRET' } }), 'wrong case');
    assert401(await rpc(gw.url, init(), { headers: { authorization: 'Basic czNjcmV0' } }), 'Basic scheme');
    assert401(await rpc(gw.url, init(), { headers: { authorization: 'Bearer ' } }), 'empty token');
    assert401(await rpc(gw.url, init(), { headers: { authorization: 's3cret' } }), 'no scheme');
  }),
);

test(
  'the right token: initialize and calls work; each request needs the token',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: A });
    assert.match(c.session ?? '', /^[0-9a-fA-F]{32}$/);
    assert.equal(c.initializedStatus, 202);
    const accounts = await c.callTool('bank:list_accounts');
    assert.equal(textOf(accounts).split('\n')[0], 'You have 3 accounts:');
    // The same session without the token is refused as unauthenticated.
    assert401(await rpc(gw.url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { session: c.session, protocolVersion: c.protocolVersion }), 'session without token');
    assert.deepEqual(await c.result('ping'), {});
    assert.equal(await c.close(), 200);
  }),
);

test(
  'a session opened with token A is not usable with token B (404), nor deletable with it',
  withDiagnostics(async () => {
    const a = await connectHttp(gw.url, { headers: A });
    const b = await connectHttp(gw.url, { headers: B });
    assert.notEqual(a.session, b.session);
    const stolen = await rpc(gw.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bank:list_accounts', arguments: {} } }, { session: a.session, protocolVersion: a.protocolVersion, headers: B });
    assert.equal(stolen.status, 404, stolen.text);
    const thief = new HttpClient(gw.url, { headers: B });
    thief.session = a.session;
    thief.protocolVersion = a.protocolVersion;
    assert.equal(await thief.close(), 404);
    // Still A's, still alive.
    assert.deepEqual(await a.result('ping'), {});
    assert.deepEqual(await b.result('ping'), {});
    await Promise.all([a.close(), b.close()]);
  }),
);

test(
  '/healthz stays reachable without a token',
  withDiagnostics(async () => {
    assert.equal((await httpGet(`${gw.base}/healthz`)).status, 200);
  }),
);
