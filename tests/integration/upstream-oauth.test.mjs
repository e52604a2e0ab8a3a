// Upstreams that require OAuth (servers[].oauth), through the real gateway
// against a real authorization server (oidc-provider) and an upstream on the
// official SDK that checks every token (issuer, audience, scope) against
// its keys: the gateway's own identity (client_credentials, with a secret
// and with private_key_jwt), each principal's own (authorization_code with
// PKCE: the consent asked in each client era's form and given on the
// provider's own pages as a person would), on-behalf-of (token_exchange),
// the callback's refusals, a token the upstream refuses (renewed once),
// revocation, the audit trail and `mcpgw check`,
// and no token anywhere in what the gateway wrote.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import {
  HttpClient, MCPGW, httpGet, openGetStream, pollUntil, readJsonLines, requireBinaries, startGateway, tempDir, textOf, withDiagnostics,
} from './harness.mjs';
import { Browser, consent, decline } from './oauth-browser.mjs';
import {
  GATEWAY_AUDIENCE, SCOPE, assertNoTokens, fileText, linkIn, startOAuthUpstream, startProvider, whoami,
} from './oauth-common.mjs';

let provider, upstream, gw, dir, auditFile, appTokens;
/** A Client ID Metadata Document URL the gateway serves (at its path). */
const CIMD_URL = 'https://mcpgw.test/oauth/client-metadata.json';
const bearer = (who) => ({ authorization: `Bearer ${who}-token` });

/** The gateway's clients at the provider; the callback is added once known. */
function clients(callback) {
  const { publicKey } = jwtKey;
  return [
    { client_id: 'gw-service', client_secret: 'service-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: SCOPE },
    {
      client_id: 'gw-jwt', token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' }] },
      grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: SCOPE,
    },
    {
      client_id: 'gw-users', client_secret: 'users-secret', grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: callback ? [callback] : [], response_types: ['code'], scope: `${SCOPE} offline_access`,
    },
    {
      client_id: 'gw-exchange', client_secret: 'exchange-secret', grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'],
      redirect_uris: [], response_types: [], scope: SCOPE,
    },
    // Apps that hold tokens for the gateway itself (its auth.oauth).
    { client_id: 'alice-app', client_secret: 'alice-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp' },
    { client_id: 'bob-app', client_secret: 'bob-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'mcp' },
  ];
}
const jwtKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });

before(async () => {
  requireBinaries();
  dir = tempDir();
  auditFile = path.join(dir, 'audit.jsonl');
  const keyFile = path.join(dir, 'gw-jwt.pem');
  writeFileSync(keyFile, jwtKey.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  provider = await startProvider(dir, { clients: clients(), resources: {}, exchange: { audience: GATEWAY_AUDIENCE } });
  upstream = await startOAuthUpstream(provider.issuer, path.join(dir, 'upstream.jsonl'));
  await provider.configure({ resources: { [upstream.url]: { scope: SCOPE, ttl: 600 }, [GATEWAY_AUDIENCE]: { scope: 'mcp', ttl: 600 } } });
  const tokens = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace'].map((n) => ({ token: `${n}-token`, name: n }));
  gw = await startGateway({
    auth: {
      bearer_tokens: tokens,
      oauth: { issuer: provider.issuer, audience: GATEWAY_AUDIENCE, jwks_url: `${provider.issuer}/jwks`, required_scopes: ['mcp'] },
    },
    audit: { path: auditFile },
    servers: [
      { name: 'svc', transport: 'http', url: upstream.url, oauth: { grant: 'client_credentials', client_id: 'gw-service', client_secret: 'service-secret', scopes: [SCOPE] } },
      { name: 'keyed', transport: 'http', url: upstream.url, oauth: { grant: 'client_credentials', client_id: 'gw-jwt', private_key_file: keyFile } },
      { name: 'users', transport: 'http', url: upstream.url, timeout_ms: 20000, oauth: { grant: 'authorization_code', client_id: 'gw-users', client_secret: 'users-secret', scopes: [SCOPE, 'offline_access'] } },
      { name: 'obo', transport: 'http', url: upstream.url, oauth: { grant: 'token_exchange', client_id: 'gw-exchange', client_secret: 'exchange-secret', scopes: [SCOPE] } },
      { name: 'cimd', transport: 'http', url: upstream.url, oauth: { grant: 'authorization_code', client_id_metadata_url: CIMD_URL, scopes: [SCOPE] } },
    ],
  }, { dir });
  await provider.configure({ clients: clients(`${gw.base}/oauth/callback`), cimd: { from: new URL(CIMD_URL).origin, to: gw.base } });
  appTokens = {
    alice: await provider.clientToken('alice-app', 'alice-secret', GATEWAY_AUDIENCE, 'mcp'),
    bob: await provider.clientToken('bob-app', 'bob-secret', GATEWAY_AUDIENCE, 'mcp'),
  };
});

after(async () => {
  await gw?.proc.stop();
});

/** An SDK v1 client (2025-11-25) that declares URL elicitation; its user consents as `login`. */
async function sdkClient(who, { login = who, onElicit } = {}) {
  const client = new Client({ name: `${who}-client`, version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  const seen = { elicitations: [], completed: [], consents: [] };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitations.push(req.params);
    if (onElicit) return onElicit(req.params);
    // The person opens the link (after the client answered) and approves.
    seen.consents.push(consent(req.params.url, login));
    return { action: 'accept' };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
    seen.completed.push(n.params.elicitationId);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: bearer(who) } }));
  return { client, seen };
}

test('client_credentials: the gateway goes upstream as itself, with a secret or with private_key_jwt', withDiagnostics(async () => {
  const c = new HttpClient(gw.url, { headers: bearer('alice') });
  await c.initialize();
  const tools = (await c.listAllTools()).tools.map((t) => t.name);
  assert.ok(tools.includes('svc:whoami') && tools.includes('keyed:whoami'), JSON.stringify(tools));
  const svc = whoami(await c.callTool('svc:whoami'));
  assert.equal(svc.sub, 'gw-service');
  assert.equal(svc.aud, upstream.url, 'the token names the upstream as its audience (RFC 8707 resource)');
  assert.equal(svc.scope, SCOPE);
  assert.equal(whoami(await c.callTool('keyed:whoami')).sub, 'gw-jwt');
  // The upstream refuses the token it holds (401): renewed once, the call
  // goes again, and the client sees only its result.
  const before = (await provider.stats()).client_credentials;
  await fetch(`${upstream.url.replace(/\/mcp$/, '')}/__refuse?sub=gw-service`, { method: 'POST' });
  const renewed = whoami(await c.callTool('svc:whoami'));
  assert.equal(renewed.sub, 'gw-service');
  assert.notEqual(renewed.jti, svc.jti);
  assert.equal((await provider.stats()).client_credentials, before + 1, 'one new token');
  // Another principal's call uses the same identity: it is the gateway's.
  const b = new HttpClient(gw.url, { headers: bearer('bob') });
  await b.initialize();
  assert.equal(whoami(await b.callTool('svc:whoami')).sub, 'gw-service');
}));

test('authorization_code, 2025-11-25 client with URL elicitation: consent asked mid-call, the call completes', withDiagnostics(async () => {
  const { client, seen } = await sdkClient('alice');
  const result = await client.callTool({ name: 'users:whoami', arguments: {} });
  assert.equal(seen.elicitations.length, 1);
  const asked = seen.elicitations[0];
  assert.equal(asked.mode, 'url');
  assert.match(asked.url, new RegExp(`^${gw.base}/oauth/authorize\\?flow=`));
  assert.ok(asked.elicitationId);
  const { page } = await seen.consents[0];
  assert.equal(page.status, 200, page.text);
  const me = whoami(result);
  assert.equal(me.sub, 'alice', 'the upstream sees the person who consented');
  assert.equal(me.aud, upstream.url);
  await pollUntil(() => seen.completed.includes(asked.elicitationId), { what: 'notifications/elicitation/complete' });
  // The next call needs nothing from the person.
  assert.equal(whoami(await client.callTool({ name: 'users:whoami', arguments: {} })).sub, 'alice');
  assert.equal(seen.elicitations.length, 1);
  await client.close();
}));

test('authorization_code: a person who declines on the provider\'s page ends the waiting call with the provider\'s answer', withDiagnostics(async () => {
  // The person declines the first time and approves the second.
  const pages = [];
  const { client, seen } = await sdkClient('grace', {
    onElicit: (params) => {
      pages.push(pages.length === 0 ? decline(params.url) : consent(params.url, 'grace').then((c) => c.page));
      return { action: 'accept' };
    },
  });
  const result = await client.callTool({ name: 'users:whoami', arguments: {} });
  const page = await pages[0];
  assert.equal(page.status, 403, page.text);
  assert.match(page.text, /access_denied/);
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(textOf(result), `mcpgw: upstream 'users': OAuth authorization failed at ${provider.issuer}/auth: refused: access_denied: `
    + 'End-User aborted interaction; call the tool again for a new authorization link');
  assert.deepEqual(seen.completed, [], 'no completion is announced for a refused consent');
  // The next call asks again, with a new link.
  const second = await client.callTool({ name: 'users:whoami', arguments: {} });
  assert.equal(seen.elicitations.length, 2);
  assert.notEqual(seen.elicitations[1].url, seen.elicitations[0].url);
  assert.equal((await pages[1]).status, 200);
  assert.equal(whoami(second).sub, 'grace');
  await client.close();
}));

test('authorization_code, 2026-07-28 client: an input_required URL request; two principals, two identities', withDiagnostics(async () => {
  const consents = [];
  const client = new ClientV2({ name: 'bob-v2', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('elicitation/create', async (req) => {
    assert.equal(req.params.mode, 'url');
    consents.push(await consent(req.params.url, 'bob'));
    return { action: 'accept' };
  });
  const { StreamableHTTPClientTransport: TransportV2 } = await import('@modelcontextprotocol/client');
  await client.connect(new TransportV2(new URL(gw.url), { requestInit: { headers: bearer('bob') } }));
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const me = whoami(await client.callTool({ name: 'users:whoami', arguments: {} }));
  assert.equal(consents.length, 1);
  assert.equal(consents[0].page.status, 200, consents[0].page.text);
  assert.equal(me.sub, 'bob');
  // alice (consented in the previous test) still goes as alice.
  const { client: alice } = await sdkClient('alice');
  assert.equal(whoami(await alice.callTool({ name: 'users:whoami', arguments: {} })).sub, 'alice');
  const subs = new Set(readJsonLines(upstream.log).filter((l) => l.aud === upstream.url).map((l) => l.sub));
  assert.ok(subs.has('alice') && subs.has('bob'), `the upstream saw ${[...subs]}`);
  await client.close();
  await alice.close();
}));

test('authorization_code, a client without URL elicitation: the link in an isError result, the next call works', withDiagnostics(async () => {
  const c = new HttpClient(gw.url, { headers: bearer('carol') });
  await c.initialize({ protocolVersion: '2025-11-25' });
  const first = await c.callTool('users:whoami');
  assert.equal(first.isError, true);
  assert.match(textOf(first), /authorization needed to use users/);
  // Not yet known tools of such a server start the consent too, not -32602.
  const unknown = await c.callTool('users:not_listed_yet');
  assert.equal(unknown.isError, true, JSON.stringify(unknown));
  const { page } = await consent(linkIn(textOf(first)), 'carol');
  assert.equal(page.status, 200, page.text);
  assert.equal(whoami(await c.callTool('users:whoami')).sub, 'carol');
  const after = await c.request('tools/call', { name: 'users:not_listed_yet', arguments: {} });
  assert.equal(after.error?.code, -32602, 'once consented, an unknown tool is unknown');
}));

test('authorization_code, URL elicitation declared but a JSON-only request: error -32042 carrying the link', withDiagnostics(async () => {
  const c = new HttpClient(gw.url, { headers: { ...bearer('dave'), accept: 'application/json' } });
  await c.initialize({ protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } } });
  const m = await c.request('tools/call', { name: 'users:whoami', arguments: {} });
  assert.equal(m.error?.code, -32042, JSON.stringify(m));
  const [e] = m.error.data.elicitations;
  assert.equal(e.mode, 'url');
  assert.ok(e.elicitationId);
  // The session hears of the completion on its own stream.
  const stream = await openGetStream({ url: gw.url, session: c.session, protocolVersion: c.protocolVersion, headers: bearer('dave') });
  assert.equal(stream.status, 200);
  const { page } = await consent(e.url, 'dave');
  assert.equal(page.status, 200, page.text);
  const done = await stream.waitFor((n) => n.method === 'notifications/elicitation/complete');
  assert.equal(done.params.elicitationId, e.elicitationId);
  assert.equal(whoami(await c.callTool('users:whoami')).sub, 'dave');
}));

test('the callback refuses a replayed, forged or foreign state, and a link opened by another browser', withDiagnostics(async () => {
  const c = new HttpClient(gw.url, { headers: bearer('erin') });
  await c.initialize();
  const link = linkIn(textOf(await c.callTool('users:whoami')));
  const { page, browser } = await consent(link, 'erin');
  assert.equal(page.status, 200, page.text);
  const callback = browser.visited.map((v) => v.url).find((u) => u.includes('/oauth/callback'));
  // Replayed: the same callback again, in the same browser.
  const replay = await browser.open(callback);
  assert.equal(replay.status, 400, replay.text);
  assert.match(replay.text, /already used/);
  // Forged: a state that was never sealed by the gateway, or an altered one.
  const state = new URL(callback).searchParams.get('state');
  const altered = `${state.slice(0, 20)}${state[20] === 'A' ? 'B' : 'A'}${state.slice(21)}`;
  for (const bad of ['forged', altered]) {
    const r = await browser.open(`${gw.base}/oauth/callback?code=abc&state=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, `state ${bad}: ${r.text}`);
  }
  // A link opened in one browser cannot be completed in another (no cookie
  // from the start page): that browser is refused, the first one is not.
  const f = new HttpClient(gw.url, { headers: bearer('frank') });
  await f.initialize();
  const mine = new Browser();
  const stopped = await consent(linkIn(textOf(await f.callTool('users:whoami'))), 'frank', mine, { stopAt: (u) => u.includes('/oauth/callback') });
  assert.equal(stopped.page.status, 'stopped');
  const other = await new Browser().open(stopped.page.url);
  assert.equal(other.status, 400, other.text);
  assert.match(other.text, /did not start this authorization/);
  const done = await mine.open(stopped.page.url);
  assert.equal(done.status, 200, done.text);
  assert.equal(whoami(await f.callTool('users:whoami')).sub, 'frank');
}));

test('token_exchange: the client\'s own token becomes one for the upstream, per principal, and never goes upstream itself', withDiagnostics(async () => {
  const before = (await provider.stats())['urn:ietf:params:oauth:grant-type:token-exchange'] ?? 0;
  for (const [who, token] of Object.entries(appTokens)) {
    const c = new HttpClient(gw.url, { headers: { authorization: `Bearer ${token}` } });
    await c.initialize();
    for (let i = 0; i < 2; i++) {
      const me = whoami(await c.callTool('obo:whoami'));
      assert.equal(me.sub, `${who}-app`, 'the upstream sees the subject of the client token');
      assert.equal(me.aud, upstream.url);
    }
  }
  const exchanges = (await provider.stats())['urn:ietf:params:oauth:grant-type:token-exchange'] - before;
  assert.equal(exchanges, 2, 'one exchange per principal, the token kept until it expires');
  const seen = readJsonLines(upstream.log).map((l) => l.token);
  for (const t of Object.values(appTokens)) assert.ok(!seen.includes(t), 'a client token reached the upstream');
  // A client without a token of its own (a static bearer token) has nothing to exchange.
  const s = new HttpClient(gw.url, { headers: bearer('alice') });
  await s.initialize();
  const refused = await s.callTool('obo:whoami');
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /upstream 'obo'.*exchanges the client's own OAuth token/);
}));

test('audit lines name the grant and the identity that went upstream; no token in any output', withDiagnostics(async () => {
  const lines = await pollUntil(() => {
    const calls = readJsonLines(auditFile).filter((l) => l.event === 'call');
    return calls.some((l) => l.server === 'obo') && calls;
  }, { what: 'audit lines of the obo calls' });
  const of = (server, principal) => lines.find((l) => l.server === server && l.principal === principal && l.outcome === 'ok');
  assert.deepEqual([of('svc', 'alice').upstream_grant, of('svc', 'alice').upstream_identity], ['client_credentials', 'client gw-service']);
  assert.deepEqual([of('users', 'bob').upstream_grant, of('users', 'bob').upstream_identity], ['authorization_code', 'bob']);
  assert.deepEqual([of('obo', 'alice-app').upstream_grant, of('obo', 'alice-app').upstream_identity], ['token_exchange', 'alice-app']);
  assert.ok(readJsonLines(auditFile).some((l) => l.event === 'mrtr_round'), 'the 2026-07-28 consent went as an input_required round');
  const metrics = await httpGet(`${gw.base}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /server="users"/);
  const n = assertNoTokens(upstream.log, [gw.proc.stderrText, gw.proc.stdoutText, fileText(auditFile), metrics.text], Object.values(appTokens));
  assert.ok(n >= 8, `only ${n} tokens checked`);
}));

test('the gateway serves its Client ID Metadata Document at the path of client_id_metadata_url', withDiagnostics(async () => {
  const res = await fetch(`${gw.base}/oauth/client-metadata.json`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.deepEqual(await res.json(), {
    client_id: CIMD_URL, client_uri: 'https://mcpgw.test', client_name: 'mcpgw', redirect_uris: [`${gw.base}/oauth/callback`],
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
  });
  assert.equal((await fetch(`${gw.base}/oauth/client-metadata.json`, { method: 'POST' })).status, 405);
  // The provider knows the gateway by that URL alone: it reads the document
  // (from the gateway) when the consent starts, and the tokens are issued to it.
  const c = new HttpClient(gw.url, { headers: bearer('grace') });
  await c.initialize({ protocolVersion: '2025-11-25' });
  const link = linkIn(textOf(await c.callTool('cimd:whoami')));
  const { page } = await consent(link, 'grace');
  assert.equal(page.status, 200, page.text);
  const me = whoami(await c.callTool('cimd:whoami'));
  assert.equal(me.sub, 'grace');
  assert.equal(me.client_id, CIMD_URL);
  assert.equal(me.aud, upstream.url);
}));

test('mcpgw check reports each OAuth upstream\'s discovery and whether the gateway\'s own credentials work', withDiagnostics(async () => {
  const check = (config) => spawnSync(MCPGW, ['check', '--config', config, '--json'], { encoding: 'utf8', timeout: 60000 });
  const good = check(gw.configPath);
  assert.equal(good.status, 0, good.stdout + good.stderr);
  const by = Object.fromEntries(JSON.parse(good.stdout).oauth.map((o) => [o.server, o]));
  assert.deepEqual(Object.keys(by).sort(), ['cimd', 'keyed', 'obo', 'svc', 'users']);
  for (const o of Object.values(by)) {
    assert.ok(o.ok, JSON.stringify(o));
    assert.equal(o.discovery, `issuer ${provider.issuer}, token endpoint ${provider.issuer}/token${o.grant === 'authorization_code' ? `, authorization endpoint ${provider.issuer}/auth` : ''}, resource ${upstream.url}`);
  }
  assert.match(by.svc.credentials, /^client gw-service \(client secret\): accepted, the token endpoint issued a token$/);
  assert.match(by.keyed.credentials, /^client gw-jwt \(private_key_jwt\): accepted/);
  assert.match(by.users.credentials, /^client gw-users \(client secret\): accepted \(the probe was refused with invalid_grant/);
  assert.match(by.obo.credentials, /^client gw-exchange \(client secret\): accepted/);
  assert.equal(by.cimd.credentials, `public client ${CIMD_URL} (Client ID Metadata Document served by the gateway)`);
  // A wrong secret: invalid, naming the provider and the step.
  const text = fileText(gw.configPath).replace('service-secret', 'wrong-secret');
  const badConfig = path.join(dir, 'bad-secret.yaml');
  writeFileSync(badConfig, text);
  const bad = check(badConfig);
  assert.equal(bad.status, 1, bad.stdout + bad.stderr);
  const report = JSON.parse(bad.stdout);
  assert.equal(report.oauth.find((o) => o.server === 'svc').ok, false);
  assert.ok(report.errors.some((e) => e.startsWith(`upstream svc: client gw-service (client secret): OAuth token failed at ${provider.issuer}/token: refused (HTTP 401): invalid_client`)), JSON.stringify(report.errors));
  assertNoTokens(upstream.log, [good.stdout, good.stderr, bad.stdout, bad.stderr]);
}));

test('revocation: a principal forgets its tokens (admin endpoint or mcpgw revoke); its next call asks consent again', withDiagnostics(async () => {
  const revokeUrl = `${gw.base}/oauth/revoke`;
  const post = (url, headers = {}) => fetch(url, { method: 'POST', headers }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
  assert.equal((await post(`${revokeUrl}?server=users`)).status, 401, 'revocation is authenticated');
  assert.equal((await post(`${revokeUrl}?server=nope`, bearer('dave'))).status, 404);
  const done = await post(`${revokeUrl}?server=users`, bearer('dave'));
  assert.deepEqual(done, { status: 200, body: { principal: 'dave', revoked: ['users'] } });
  assert.deepEqual((await post(revokeUrl, bearer('dave'))).body.revoked, [], 'nothing left to revoke');
  const d = new HttpClient(gw.url, { headers: bearer('dave') });
  await d.initialize();
  const again = await d.callTool('users:whoami');
  assert.equal(again.isError, true);
  linkIn(textOf(again));
  // The command line does the same with the caller's credential.
  const cli = spawnSync(MCPGW, ['revoke', '--config', gw.configPath, '--url', revokeUrl, '--server', 'users'],
    { encoding: 'utf8', timeout: 30000, env: { ...process.env, MCPGW_TOKEN: 'carol-token' } });
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
  assert.equal(cli.stdout, 'revoked the tokens of carol at users\n');
  const c = new HttpClient(gw.url, { headers: bearer('carol') });
  await c.initialize();
  assert.equal((await c.callTool('users:whoami')).isError, true);
  const refused = spawnSync(MCPGW, ['revoke', '--config', gw.configPath, '--url', revokeUrl],
    { encoding: 'utf8', timeout: 30000, env: { ...process.env, MCPGW_TOKEN: 'wrong' } });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /answered HTTP 401/);
}));
