// Upstream OAuth tokens shared by replicas through Redis (cluster.redis):
// a real redis-server, two mcpgw replicas, oidc-provider and an SDK
// upstream that checks every token. A principal who consented through one
// replica is served as itself by the other; a call waiting for consent on
// one replica completes when the browser lands on the other (the tokens
// arrive through Redis, the waiting call hears it on the cluster channel);
// a revocation on one holds on the other; the records in Redis are sealed.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawnSync } from 'node:child_process';
import { HttpClient, requireBinaries, tempDir, textOf, withDiagnostics } from '../integration/harness.mjs';
import { consent } from '../integration/oauth-browser.mjs';
import { SCOPE, assertNoTokens, linkIn, startOAuthUpstream, startProvider, whoami } from '../integration/oauth-common.mjs';
import { REDIS_SERVER, requireClusterTools, startRedis, startReplica } from './cluster-harness.mjs';

let dir, redis, provider, upstream, a, b;

const client = (callbacks = []) => [{
  client_id: 'gw-users', client_secret: 'users-secret', grant_types: ['authorization_code', 'refresh_token'],
  redirect_uris: callbacks, response_types: ['code'], scope: `${SCOPE} offline_access`,
}];

before(async () => {
  requireBinaries();
  requireClusterTools();
  dir = tempDir('mcpgw-cluster-oauth-');
  redis = await startRedis(dir);
  provider = await startProvider(dir, { clients: client(), resources: {} });
  upstream = await startOAuthUpstream(provider.issuer, path.join(dir, 'upstream.jsonl'));
  await provider.configure({ resources: { [upstream.url]: { scope: SCOPE, ttl: 600 } } });
  const config = {
    auth: { bearer_tokens: ['alice', 'bob'].map((n) => ({ token: `${n}-token`, name: n })) },
    cluster: { redis: redis.url, secret: 'cluster-oauth-test-secret' },
    servers: [{
      name: 'users', transport: 'http', url: upstream.url, timeout_ms: 30000,
      oauth: { grant: 'authorization_code', client_id: 'gw-users', client_secret: 'users-secret', scopes: [SCOPE, 'offline_access'] },
    }],
  };
  a = await startReplica(dir, config, { label: 'replica-a' });
  b = await startReplica(dir, config, { label: 'replica-b' });
  await provider.configure({ clients: client([`${a.base}/oauth/callback`, `${b.base}/oauth/callback`]) });
});

async function clientOn(replica, who) {
  const c = new HttpClient(replica.url, { headers: { authorization: `Bearer ${who}-token` } });
  await c.initialize();
  return c;
}

test('consent through one replica, served as itself by the other; revocation holds on both', withDiagnostics(async () => {
  const onA = await clientOn(a, 'alice');
  const first = await onA.callTool('users:whoami');
  assert.equal(first.isError, true);
  const { page } = await consent(linkIn(textOf(first)), 'alice');
  assert.equal(page.status, 200, page.text);
  const onB = await clientOn(b, 'alice');
  assert.equal(whoami(await onB.callTool('users:whoami')).sub, 'alice', 'replica B uses the tokens replica A stored');
  assert.equal(whoami(await onA.callTool('users:whoami')).sub, 'alice');
  // Revoked through B: A asks again too.
  const r = await fetch(`${b.base}/oauth/revoke?server=users`, { method: 'POST', headers: { authorization: 'Bearer alice-token' } });
  assert.deepEqual(await r.json(), { principal: 'alice', revoked: ['users'] });
  const again = await onA.callTool('users:whoami');
  assert.equal(again.isError, true, textOf(again));
  linkIn(textOf(again));
}));

test('a call waiting for consent on one replica completes when the browser lands on the other', withDiagnostics(async () => {
  const c = new Client({ name: 'bob-client', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  const consents = [];
  c.setRequestHandler(ElicitRequestSchema, async (req) => {
    // The load balancer sends the browser to the other replica.
    const url = new URL(req.params.url);
    assert.equal(url.origin, b.base);
    consents.push(consent(`${a.base}${url.pathname}${url.search}`, 'bob'));
    return { action: 'accept' };
  });
  await c.connect(new StreamableHTTPClientTransport(new URL(b.url), { requestInit: { headers: { authorization: 'Bearer bob-token' } } }));
  const me = whoami(await c.callTool({ name: 'users:whoami', arguments: {} }));
  assert.equal(me.sub, 'bob');
  const { page, browser } = await consents[0];
  assert.equal(page.status, 200, page.text);
  assert.ok(browser.visited.some((v) => v.url.startsWith(`${a.base}/oauth/callback`)), 'the callback landed on replica A');
  await c.close();
  // What rests in Redis is sealed: no token in it.
  const dump = spawnSync(REDIS_SERVER.replace(/redis-server$/, 'redis-cli'), ['-p', String(redis.port), '--no-raw', 'MGET',
    ...spawnSync(REDIS_SERVER.replace(/redis-server$/, 'redis-cli'), ['-p', String(redis.port), 'KEYS', 'mcpgw:oauth:*'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)],
  { encoding: 'utf8' });
  assert.ok(dump.stdout.length > 100, dump.stdout + dump.stderr);
  assertNoTokens(upstream.log, [dump.stdout, a.proc.stderrText, b.proc.stderrText]);
}));
