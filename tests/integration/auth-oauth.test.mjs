// mcpgw as an OAuth 2.1 resource server, against a real authorization
// server (the npm `oidc-provider`, a certified OpenID Connect server) and
// the official SDK v1 client: discovery (401 -> RFC 9728 metadata -> token
// -> retry), hand-made bad tokens each with its exact error, a missing
// scope, key rotation at the IdP picked up without a restart (and the JWKS
// read again at most once a minute), and the metadata documents.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import {
  Proc, REPO, bankStdio, closedPort, connectHttp, httpGet, requireBinaries, rpc, startGateway, tempDir, textOf, toYaml, withDiagnostics,
} from './harness.mjs';

let idp, issuer, gw, resource, keysFile;
const CLIENTS = [
  { id: 'alice', secret: 'alice-secret', scope: 'mcp:read mcp:write' },
  { id: 'carol', secret: 'carol-secret', scope: 'mcp:write' },
];

export async function startIdp(dir, resourceUrl, clients) {
  const proc = new Proc('idp', process.execPath, [path.join(REPO, 'tests/integration/idp-fixture.mjs'), dir, resourceUrl, JSON.stringify(clients)]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+)\s*$/);
  return { proc, issuer: m[1] };
}

async function tokenFor(id, secret, scope) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', resource, ...(scope ? { scope } : {}) });
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json.access_token;
}

const b64u = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** A token signed with the IdP's current key (or `key`), claims overridable. */
function handMade(claims = {}, { header = {}, key } = {}) {
  const jwk = key || JSON.parse(readFileSync(keysFile, 'utf8'))[0];
  const now = Math.floor(Date.now() / 1000);
  const h = { alg: 'RS256', typ: 'at+jwt', kid: jwk.kid, ...header };
  const c = { iss: issuer, aud: resource, sub: 'hand-made', scope: 'mcp:read', iat: now, exp: now + 300, ...claims };
  const input = `${b64u(h)}.${b64u(c)}`;
  const sig = crypto.sign('sha256', Buffer.from(input), crypto.createPrivateKey({ key: jwk, format: 'jwk' }));
  return `${input}.${sig.toString('base64url')}`;
}

const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-test', version: '1' } } };
const withToken = (t) => ({ headers: { authorization: `Bearer ${t}` } });
const metadataUrl = () => `${resource.replace(/\/mcp$/, '')}/.well-known/oauth-protected-resource/mcp`;

function assertInvalid(res, description, what) {
  assert.equal(res.status, 401, `${what}: HTTP ${res.status} ${res.text}`);
  assert.equal(res.headers.get('www-authenticate'),
    `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl()}"`, what);
  assert.equal(res.headers.get('mcp-session-id'), null, `${what}: a session was created`);
}

before(async () => {
  requireBinaries();
  const dir = tempDir();
  keysFile = path.join(dir, 'keys.json');
  const port = await closedPort();
  resource = `http://127.0.0.1:${port}/mcp`;
  ({ issuer } = idp = await startIdp(dir, resource, CLIENTS));
  gw = await startGateway(toYaml({
    listen: { host: '127.0.0.1', port, path: '/mcp' },
    auth: {
      bearer_tokens: [{ token: 'static-t0ken', name: 'ci' }],
      oauth: { issuer, audience: resource, jwks_url: `${issuer}/jwks`, required_scopes: ['mcp:read'], leeway_s: 5 },
    },
    servers: [bankStdio()],
  }), { dir });
});

after(() => idp?.proc.stop?.());

test(
  'the official SDK client (ClientCredentialsProvider) goes 401 -> metadata -> token -> retry and calls tools',
  withDiagnostics(async () => {
    const authProvider = new ClientCredentialsProvider({ clientId: 'alice', clientSecret: 'alice-secret', scope: 'mcp:read' });
    const client = new Client({ name: 'sdk-oauth', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(gw.url), { authProvider });
    await client.connect(transport);
    assert.ok(authProvider.tokens()?.access_token, 'the SDK got a token');
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'bank:list_accounts'));
    const r = await client.callTool({ name: 'bank:list_accounts', arguments: {} });
    assert.equal(textOf(r).split('\n')[0], 'You have 3 accounts:');
    await client.close();
    assert.match(gw.proc.stderrText, /principal=alice/);
  }),
);

test(
  'no token: 401 naming the metadata; the RFC 9728 documents at both well-known paths',
  withDiagnostics(async () => {
    const res = await rpc(gw.url, init);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl()}"`);
    const want = { resource, authorization_servers: [issuer], scopes_supported: ['mcp:read'], bearer_methods_supported: ['header'] };
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const m = await httpGet(`${gw.base}${p}`);
      assert.equal(m.status, 200, p);
      assert.deepEqual(JSON.parse(m.text), want, p);
    }
    assert.equal((await httpGet(`${gw.base}/.well-known/oauth-protected-resource/other`)).status, 404);
  }),
);

test(
  'a token from the IdP opens a session; static bearer tokens still work beside OAuth',
  withDiagnostics(async () => {
    const t = await tokenFor('alice', 'alice-secret', 'mcp:read');
    const c = await connectHttp(gw.url, withToken(t));
    assert.match(c.session ?? '', /^[0-9a-f]{32}$/);
    assert.deepEqual(await c.result('ping'), {});
    assert.equal(await c.close(), 200);
    const s = await connectHttp(gw.url, withToken('static-t0ken'));
    assert.deepEqual(await s.result('ping'), {});
    await s.close();
    assertInvalid(await rpc(gw.url, init, withToken('static-t0ken-not')), 'malformed token: expected three base64url parts separated by dots', 'unknown static token');
  }),
);

test(
  'hand-made bad tokens: each refused with its exact reason',
  withDiagnostics(async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      ['expired', handMade({ exp: now - 60 }), 'the token expired'],
      ['not yet valid', handMade({ nbf: now + 120 }), 'the token is not valid yet (nbf)'],
      ['no exp', handMade({ exp: undefined }), 'the token has no exp'],
      ['wrong audience', handMade({ aud: 'http://127.0.0.1:1/other' }), `wrong audience (expected \\"${resource}\\")`],
      ['wrong issuer', handMade({ iss: 'http://evil.example' }), `wrong issuer (expected \\"${issuer}\\")`],
      ['no sub', handMade({ sub: undefined }), 'the token has no sub claim (principal_claim)'],
    ];
    // alg none: an unsigned token.
    cases.push(['alg none', `${b64u({ alg: 'none', typ: 'JWT' })}.${b64u({ iss: issuer, aud: resource, sub: 'x', exp: now + 60 })}.`,
      'unsupported alg \\"none\\" (accepted: RS256, PS256, ES256)']);
    // HS256 keyed with the public key (the classic algorithm confusion).
    const jwk = JSON.parse(readFileSync(keysFile, 'utf8'))[0];
    const pub = crypto.createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hsInput = `${b64u({ alg: 'HS256', kid: jwk.kid })}.${b64u({ iss: issuer, aud: resource, sub: 'x', scope: 'mcp:read', exp: now + 60 })}`;
    cases.push(['HS256 with the public key', `${hsInput}.${crypto.createHmac('sha256', pub).update(hsInput).digest('base64url')}`,
      'unsupported alg \\"HS256\\" (accepted: RS256, PS256, ES256)']);
    // Tampered payload: a valid token whose claims were changed after signing.
    const good = handMade();
    const [h, , s] = good.split('.');
    cases.push(['tampered payload', `${h}.${b64u({ iss: issuer, aud: resource, sub: 'admin', scope: 'mcp:read', exp: now + 300 })}.${s}`, 'invalid signature']);
    cases.push(['garbage', 'a.b.c', 'malformed token: a part is not base64url']);
    cases.push(['huge', 'x'.repeat(20000), 'token is longer than 16384 bytes']);
    for (const [what, token, description] of cases) assertInvalid(await rpc(gw.url, init, withToken(token)), description, what);
    // The good hand-made token passes.
    assert.equal((await rpc(gw.url, init, withToken(good))).status, 200);
  }),
);

test(
  'a missing required scope: 403 insufficient_scope',
  withDiagnostics(async () => {
    const t = await tokenFor('carol', 'carol-secret', 'mcp:write');
    const res = await rpc(gw.url, init, withToken(t));
    assert.equal(res.status, 403, res.text);
    assert.equal(res.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="mcp:read", error_description="the token lacks the scope mcp:read", resource_metadata="${metadataUrl()}"`);
    const scp = await rpc(gw.url, init, withToken(handMade({ scope: undefined, scp: ['mcp:read'] })));
    assert.equal(scp.status, 200, 'an scp array counts as scopes');
  }),
);

test(
  'key rotation at the IdP is picked up without a restart; an unknown kid refetches at most once a minute',
  withDiagnostics(async () => {
    const hits = async () => (await (await fetch(`${issuer}/__hits`)).json()).jwks;
    const before = await hits();
    const { kid } = await (await fetch(`${issuer}/__rotate`, { method: 'POST' })).json();
    const t = await tokenFor('alice', 'alice-secret', 'mcp:read');
    assert.equal(JSON.parse(Buffer.from(t.split('.')[0], 'base64url')).kid, kid, 'the IdP signs with the new key');
    const c = await connectHttp(gw.url, withToken(t));
    assert.deepEqual(await c.result('ping'), {});
    await c.close();
    assert.equal(await hits(), before + 1, 'one refetch for the new kid');
    // Another unknown kid within the minute: refused without asking the IdP.
    const stranger = { ...JSON.parse(readFileSync(keysFile, 'utf8'))[0], kid: 'never-published' };
    assertInvalid(await rpc(gw.url, init, withToken(handMade({}, { key: stranger }))), 'unknown key id \\"never-published\\"', 'unknown kid');
    assert.equal(await hits(), before + 1, 'no second fetch within a minute');
  }),
);
