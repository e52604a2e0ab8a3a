// The life of upstream OAuth tokens, through the real gateway against
// oidc-provider and an SDK upstream: short-lived access tokens refreshed
// without the client noticing, a refresh token revoked at the provider
// (the principal is asked to consent again), tokens kept encrypted in a file
// across a gateway restart, dynamic client registration, and providers that
// are down, hang or answer garbage (a precise isError naming the server, the
// provider and the step, within the server's timeout; other upstreams go on).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  HttpClient, bankStdio, closedPort, pollUntil, readJsonLines, requireBinaries, startGateway, startGatewayStdio, tempDir, textOf,
  withDiagnostics,
} from './harness.mjs';
import { consent } from './oauth-browser.mjs';
import { SCOPE, assertNoTokens, fileText, linkIn, startOAuthUpstream, startProvider, whoami } from './oauth-common.mjs';

let provider, upstream, dir;
/** Access tokens live this long: renewed after half of it. */
const TTL_S = 4;

function clients(callbacks = []) {
  return [
    {
      client_id: 'gw-users', client_secret: 'users-secret', grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: callbacks, response_types: ['code'], scope: `${SCOPE} offline_access`,
    },
  ];
}

const usersServer = (extra = {}) => ({
  name: 'users', transport: 'http', url: upstream.url, timeout_ms: 15000,
  oauth: { grant: 'authorization_code', client_id: 'gw-users', client_secret: 'users-secret', scopes: [SCOPE, 'offline_access'] },
  ...extra,
});

/** A gateway with the users server, its callback registered at the provider. */
async function gatewayWith(config, label) {
  const gw = await startGateway({ auth: { bearer_tokens: ['alice', 'bob', 'carol'].map((n) => ({ token: `${n}-token`, name: n })) }, ...config }, { dir, label });
  await provider.configure({ clients: clients([`${gw.base}/oauth/callback`]) });
  return gw;
}

async function clientOf(gw, who) {
  const c = new HttpClient(gw.url, { headers: { authorization: `Bearer ${who}-token` } });
  await c.initialize();
  return c;
}

/** `who` calls users:whoami, consents through the link it gets, and is let through. */
async function consented(gw, who) {
  const c = await clientOf(gw, who);
  const first = await c.callTool('users:whoami');
  assert.equal(first.isError, true, textOf(first));
  const { page } = await consent(linkIn(textOf(first)), who);
  assert.equal(page.status, 200, page.text);
  assert.equal(whoami(await c.callTool('users:whoami')).sub, who);
  return c;
}

before(async () => {
  requireBinaries();
  dir = tempDir();
  provider = await startProvider(dir, { clients: clients(), resources: {}, registration: true });
  upstream = await startOAuthUpstream(provider.issuer, path.join(dir, 'upstream.jsonl'));
  await provider.configure({ resources: { [upstream.url]: { scope: SCOPE, ttl: TTL_S } } });
});

test('expiry: access tokens are refreshed before they expire, the client notices nothing; a revoked refresh token means consent again', withDiagnostics(async () => {
  const gw = await gatewayWith({ servers: [usersServer()] }, 'gw-refresh');
  const c = await consented(gw, 'alice');
  const first = whoami(await c.callTool('users:whoami'));
  const refreshesBefore = (await provider.stats()).refresh_token ?? 0;
  // Calls go on as the token ages; each gets a result, and a new token
  // (another jti) appears without a word to the client.
  const renewed = await pollUntil(async () => {
    const me = whoami(await c.callTool('users:whoami'));
    assert.equal(me.sub, 'alice');
    return me.jti !== first.jti && me;
  }, { timeoutMs: 20000, intervalMs: 250, what: 'a refreshed token' });
  assert.equal(renewed.aud, upstream.url);
  assert.ok(((await provider.stats()).refresh_token ?? 0) > refreshesBefore, 'the provider issued the new token on a refresh');

  // The provider revokes alice's grant: her next refresh is refused, and
  // she is asked to consent again (the link, as her client has no URL elicitation).
  assert.ok(await provider.revokeSubject('alice') >= 1);
  const asked = await pollUntil(async () => {
    const r = await c.callTool('users:whoami');
    return r.isError && r;
  }, { timeoutMs: 20000, intervalMs: 250, what: 'the consent link after the refresh token was revoked' });
  assert.match(textOf(asked), /authorization needed to use users/);
  const { page } = await consent(linkIn(textOf(asked)), 'alice');
  assert.equal(page.status, 200, page.text);
  assert.equal(whoami(await c.callTool('users:whoami')).sub, 'alice');
  assertNoTokens(upstream.log, [gw.proc.stderrText]);
  await gw.proc.stop();
}));

test('restart: tokens kept encrypted in upstream_oauth.store survive a new gateway process', withDiagnostics(async () => {
  const store = path.join(dir, 'tokens.json');
  const config = { upstream_oauth: { store, key: 'a key of the test' }, servers: [usersServer()] };
  const first = await gatewayWith(config, 'gw-before');
  await consented(first, 'bob');
  const stopped = await first.proc.stop();
  assert.equal(stopped.code, 0);
  assert.equal(statSync(store).mode & 0o777, 0o600);
  const second = await gatewayWith(config, 'gw-after');
  const c = await clientOf(second, 'bob');
  // The tokens outlive the access token's life too: a refresh, then the call.
  const me = whoami(await c.callTool('users:whoami'));
  assert.equal(me.sub, 'bob');
  // A gateway with another key cannot read them: bob is asked again.
  await second.proc.stop();
  const other = await gatewayWith({ ...config, upstream_oauth: { store, key: 'another key' } }, 'gw-other-key');
  const again = await (await clientOf(other, 'bob')).callTool('users:whoami');
  assert.equal(again.isError, true);
  linkIn(textOf(again));
  assertNoTokens(upstream.log, [fileText(store), first.proc.stderrText, second.proc.stderrText, other.proc.stderrText]);
  await other.proc.stop();
}));

test('dynamic client registration (RFC 7591) when oauth gives no client_id', withDiagnostics(async () => {
  const gw = await gatewayWith({
    servers: [{ name: 'users', transport: 'http', url: upstream.url, oauth: { grant: 'authorization_code', scopes: [SCOPE] } }],
  }, 'gw-dcr');
  await consented(gw, 'carol');
  const registered = readJsonLines(upstream.log).filter((l) => l.sub === 'carol');
  assert.ok(registered.length > 0);
  await gw.proc.stop();
}));

test('--stdio: the consent pages are served on listen.host:listen.port, and the stdio client is let through', withDiagnostics(async () => {
  const { proc, client } = startGatewayStdio({ listen: { host: '127.0.0.1', port: 0 }, servers: [usersServer()] }, { dir, label: 'gw-stdio' });
  const [, port] = await proc.waitForLine('stderr', /upstream OAuth consent pages on 127\.0\.0\.1:(\d+)/);
  await provider.configure({ clients: clients([`http://127.0.0.1:${port}/oauth/callback`]) });
  await client.initialize();
  const first = await client.callTool('users:whoami');
  assert.equal(first.isError, true);
  const link = linkIn(textOf(first));
  assert.ok(link.startsWith(`http://127.0.0.1:${port}/oauth/authorize?flow=`), link);
  const { page } = await consent(link, 'anyone');
  assert.equal(page.status, 200, page.text);
  assert.equal(whoami(await client.callTool('users:whoami')).sub, 'anyone', 'the stdio client is the anonymous principal');
  client.closeStdin();
  assert.equal((await proc.waitExit()).code, 0);
}));

/** A provider that answers garbage (`kind`: metadata or token). */
async function garbageProvider(kind) {
  const server = http.createServer((req, res) => {
    const issuer = `http://127.0.0.1:${server.address().port}`;
    if (req.url.startsWith('/.well-known/oauth-authorization-server') && kind === 'token') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, token_endpoint: `${issuer}/token` }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not what you asked for</html>');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, issuer: `http://127.0.0.1:${server.address().port}` };
}

test('a provider that is down, hangs or answers garbage: a precise isError naming server, provider and step; others go on', withDiagnostics(async () => {
  const down = `http://127.0.0.1:${await closedPort()}`;
  const hang = net.createServer(() => {});  // accepts, never answers
  await new Promise((r) => hang.listen(0, '127.0.0.1', r));
  const hung = `http://127.0.0.1:${hang.address().port}`;
  const meta = await garbageProvider('metadata');
  const token = await garbageProvider('token');
  const cc = (name, issuer, extra = {}) => ({
    name, transport: 'http', url: upstream.url, timeout_ms: 3000, required: false,
    oauth: { grant: 'client_credentials', client_id: 'x', client_secret: 'y', issuer, ...extra },
  });
  const gw = await gatewayWith({
    servers: [
      cc('down', down), cc('hung', hung), cc('garbled', meta.issuer), cc('badtoken', token.issuer),
      { ...usersServer({ name: 'downusers' }), timeout_ms: 3000, oauth: { ...usersServer().oauth, issuer: down } },
      bankStdio(),
    ],
  }, 'gw-providers');
  try {
    const c = await clientOf(gw, 'alice');
    const expect = {
      'down:whoami': new RegExp(`upstream 'down' is not connected \\(initialize: OAuth metadata failed at ${down}/\\.well-known/oauth-authorization-server: cannot connect`),
      'hung:whoami': new RegExp(`upstream 'hung' is not connected \\(initialize: OAuth metadata failed at ${hung}/\\.well-known/oauth-authorization-server: no answer in time`),
      'garbled:whoami': new RegExp(`upstream 'garbled' is not connected \\(initialize: OAuth metadata failed at ${meta.issuer}/\\.well-known/oauth-authorization-server: not authorization server metadata: the answer is not JSON`),
      'badtoken:whoami': new RegExp(`upstream 'badtoken' is not connected \\(initialize: OAuth token failed at ${token.issuer}/token: not a token response: the answer is not JSON`),
      'downusers:whoami': new RegExp(`upstream 'downusers': OAuth metadata failed at ${down}/\\.well-known/oauth-authorization-server: cannot connect`),
    };
    for (const [tool, re] of Object.entries(expect)) {
      const r = await c.request('tools/call', { name: tool, arguments: {} });
      assert.equal(r.result?.isError, true, `${tool}: ${JSON.stringify(r)}`);
      assert.match(textOf(r.result), re, tool);
    }
    const bank = await c.callTool('bank:list_accounts');
    assert.ok(!bank.isError, textOf(bank));
  } finally {
    // Whatever failed, the servers go, or this file never ends.
    await gw.proc.stop();
    hang.close();
    meta.server.close();
    token.server.close();
  }
}));
