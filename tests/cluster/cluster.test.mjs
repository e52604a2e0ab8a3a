// Scale-out (docs/operations.md, "Scale-out"): a real redis-server, three real mcpgw
// replicas and a real nginx in round robin (the shape of deploy/nginx.conf),
// driven by both official SDK generations and raw HTTP:
//   - a 2025 session (SDK v1, and SDK v2 in its legacy era) whose requests
//     land on every replica, with no affinity;
//   - the replica holding a session (the one that served its initialize)
//     SIGKILLed mid-run: the session goes on, with no new initialize;
//   - a saga started on one replica, resumed on another, its token refused
//     on a third;
//   - a DELETE honoured by every replica; forged and tampered ids are 404;
//   - a resource subscribed on one replica, its update reaching the GET
//     stream held by another; a log level set on one replica holding on
//     another;
//   - Redis stopped and restarted under load: no call hangs or fails, what
//     needs Redis (DELETE, saga resume, subscribe) fails with an error
//     naming it, /readyz says so (503 on a replica started meanwhile, which
//     cannot tell ended sessions), and what was acknowledged before (a
//     DELETE) still holds after.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import {
  BUILD,
  MCPGW,
  Proc,
  TOOLBOX,
  HttpClient,
  writeConfig,
  httpGet,
  openGetStream,
  pollUntil,
  requireBinaries,
  rpc,
  startUpstreamHttp,
  tempDir,
  withDiagnostics,
  withTimeout,
} from '../integration/harness.mjs';
import { messagesOf, requireClusterTools, startNginx, startRedis, startReplica } from './cluster-harness.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const DEPLOY_FLOW = path.join(BUILD, 'plugins', 'libdeploy_flow.so');
const SECRET = 'cluster-test-secret-0123456789';
const WATCHED = 'test://watched-resource';

let dir;
let redis;
let replicas = []; // A, B, C
let lb; // nginx over A, B, C
let toolbox;
let conf;
const clients = [];

function replicaConfig() {
  return {
    welcome: { strategy: 'none' },
    listen: { heartbeat_ms: 500 },
    cluster: { redis: redis.url, secret: SECRET },
    sagas: { secret: 'cluster-test-saga-secret' },
    servers: [
      { name: 'toolbox', transport: 'http', url: toolbox.url, timeout_ms: 30000 },
      { name: 'conf', transport: 'http', url: conf.url, timeout_ms: 30000 },
    ],
    plugins: [{ path: DEPLOY_FLOW, config: { server: 'toolbox' } }],
  };
}

before(async () => {
  requireBinaries(TOOLBOX, CONFORMANCE);
  requireClusterTools();
  if (!existsSync(DEPLOY_FLOW)) throw new Error(`missing ${DEPLOY_FLOW}`);
  dir = tempDir('mcpgw-cluster-');
  [redis, toolbox, conf] = await Promise.all([
    startRedis(dir),
    startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' }),
    startUpstreamHttp(CONFORMANCE, ['--watch-interval-ms', '200'], { label: 'conformance-http' }),
  ]);
  replicas = await Promise.all(['A', 'B', 'C'].map((n) => startReplica(dir, replicaConfig(), { label: `mcpgw-${n}` })));
  lb = await startNginx(dir, replicas.map((r) => r.hostPort));
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
});

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const callsOn = (list) => Promise.all(list.map((r) => messagesOf(r, 'tools/call')));
const initsOn = (list) => Promise.all(list.map((r) => messagesOf(r, 'initialize')));

/** A raw client of session `session` sending to `url` (one replica, or nginx). */
function on(url, from) {
  const c = new HttpClient(url);
  c.session = from.session;
  c.protocolVersion = from.protocolVersion;
  return c;
}

async function v1Client(url, name) {
  const client = new ClientV1({ name, version: '1.0.0' }, { capabilities: {} });
  const transport = new TransportV1(new URL(url));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

async function v2Client(url, name) {
  const client = new ClientV2({ name, version: '2.0.0' }, { capabilities: {} });
  const transport = new TransportV2(new URL(url));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** Calls toolbox echo `n` times in `client`; each answer checked. */
async function echoes(client, n, tag) {
  for (let i = 0; i < n; i++) {
    const r = await withTimeout(client.callTool({ name: 'toolbox:echo', arguments: { text: `${tag} ${i}` } }), 20000, `${tag} call ${i}`);
    assert.equal(r.isError, undefined, JSON.stringify(r));
    assert.equal(text(r), `${tag} ${i}`);
  }
}

test(
  'SDK v1 and v2 (legacy era) sessions through nginx: requests land on every replica, one session id, no affinity',
  withDiagnostics(async () => {
    for (const [make, name] of [
      [v1Client, 'sdk-v1'],
      [v2Client, 'sdk-v2'],
    ]) {
      const before = await callsOn(replicas);
      const { client, transport } = await make(lb.url, name);
      const sid = transport.sessionId;
      assert.match(sid, /^m1[A-Za-z0-9_-]{100,}$/, 'a sealed session id');
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'toolbox:echo'));
      await echoes(client, 12, name);
      assert.equal(transport.sessionId, sid);
      const afterCalls = await callsOn(replicas);
      const served = afterCalls.map((n, i) => n - before[i]);
      assert.equal(served.reduce((a, b) => a + b, 0), 12);
      for (const [i, n] of served.entries()) assert.ok(n > 0, `replica ${'ABC'[i]} served none of ${name}'s calls: ${served}`);
    }
  }),
);

test(
  'a session begun on A is served by B and C directly; its capabilities and mode travel in the id',
  withDiagnostics(async () => {
    const a = new HttpClient(replicas[0].url);
    await a.initialize({ capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } });
    for (const r of replicas) {
      const c = on(r.url, a);
      const res = await c.callTool('toolbox:echo', { text: `on ${r.hostPort}` });
      assert.equal(res.content[0].text, `on ${r.hostPort}`);
    }
    // The id is bound to the endpoint's mode like any session.
    const other = await rpc(`${replicas[1].url}/nope`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: a.session, protocolVersion: a.protocolVersion });
    assert.equal(other.status, 404, other.text);
  }),
);

test(
  'forged, tampered and foreign ids are 404 on every replica, as an unknown session',
  withDiagnostics(async () => {
    const a = new HttpClient(lb.url);
    await a.initialize();
    const sid = a.session;
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const bad = [
      flip(sid, 10),
      flip(sid, sid.length - 3),
      sid.slice(0, -4),
      `${sid}AAAA`,
      'm1' + 'A'.repeat(200),
      '0123456789abcdef0123456789abcdef',
      'x'.repeat(5000),
    ];
    for (const r of replicas)
      for (const id of bad) {
        const res = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: id, protocolVersion: a.protocolVersion });
        assert.equal(res.status, 404, `${id.slice(0, 40)}… on ${r.hostPort}: ${res.status} ${res.text}`);
        assert.equal(res.message?.error?.message ?? JSON.parse(res.text).error.message, 'Session not found');
      }
    // A client whose capabilities do not fit a header-sized id is told so.
    const big = await rpc(lb.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { experimental: { pad: 'x'.repeat(5000) } }, clientInfo: { name: 'big', version: '1' } } });
    assert.equal(big.status, 400, big.text);
    assert.match(JSON.parse(big.text).error.message, /^Invalid Request: the client's capabilities and clientInfo take \d+ bytes; a session id holds at most 3072$/);
    assert.equal(big.headers.get('mcp-session-id'), null);
    // The genuine id still works everywhere.
    for (const r of replicas) assert.ok((await on(r.url, a).result('tools/list', {})).tools.length > 0);
  }),
);

test(
  'a sealed id is bound to its principal: with bearer auth, another token gets 404 on every replica, its own token 200',
  withDiagnostics(async () => {
    const auth = { bearer_tokens: [{ token: 'token-alice', name: 'alice' }, { token: 'token-bob', name: 'bob' }] };
    const [P, Q] = await Promise.all(['P', 'Q'].map((n) => startReplica(dir, { ...replicaConfig(), auth }, { label: `mcpgw-auth-${n}` })));
    const alice = new HttpClient(P.url, { headers: { authorization: 'Bearer token-alice' } });
    await alice.initialize();
    for (const r of [P, Q]) {
      const asBob = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: alice.session, protocolVersion: alice.protocolVersion, headers: { authorization: 'Bearer token-bob' } });
      assert.equal(asBob.status, 404, asBob.text);
      const asAlice = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: alice.session, protocolVersion: alice.protocolVersion, headers: { authorization: 'Bearer token-alice' } });
      assert.equal(asAlice.status, 200, asAlice.text);
    }
    await Promise.all([P.proc.stop(), Q.proc.stop()]);
  }),
);

test(
  'a saga started on A, resumed on B, its token refused on C; the next token completes it on C',
  withDiagnostics(async () => {
    const [A, B, C] = replicas;
    const a = new HttpClient(A.url);
    await a.initialize();
    const s1 = await on(A.url, a).result('tools/callSaga', { name: 'deploy', arguments: { service: 'web', version: '9' } });
    assert.equal(s1.state, 'suspended');
    assert.equal(s1.steps[0].stepId, 'target');
    const s2 = await on(B.url, a).result('tools/resumeSaga', {
      sagaToken: s1.sagaToken,
      completedSteps: [{ stepId: 'target', result: { action: 'accept', content: { target: 'staging' } } }],
    });
    assert.equal(s2.state, 'suspended', JSON.stringify(s2));
    assert.equal(s2.steps[0].stepId, 'safety');
    const replay = await on(C.url, a).request('tools/resumeSaga', {
      sagaToken: s1.sagaToken,
      completedSteps: [{ stepId: 'target', result: { action: 'accept', content: { target: 'production' } } }],
    });
    assert.deepEqual(replay.error, { code: -32602, message: 'Invalid sagaToken: it was already resumed' });
    const done = await on(C.url, a).result('tools/resumeSaga', {
      sagaToken: s2.sagaToken,
      completedSteps: [
        { stepId: 'target', result: { action: 'accept', content: { target: 'staging' } } },
        { stepId: 'safety', result: { role: 'assistant', content: { type: 'text', text: 'SAFE' }, model: 'm' } },
      ],
    });
    assert.equal(done.content[0].text, 'Deployed web 9 to staging.', JSON.stringify(done));
    // And the second token is spent everywhere too.
    const again = await on(A.url, a).request('tools/resumeSaga', { sagaToken: s2.sagaToken, completedSteps: [] });
    assert.ok(again.error, JSON.stringify(again));
  }),
);

test(
  'logging/setLevel on one replica holds on the others: the log messages of a call on C follow the level set on A',
  withDiagnostics(async () => {
    const [A, B, C] = replicas;
    const s = new HttpClient(B.url);
    await s.initialize();
    const logsOfCallOn = async (r) => {
      const res = await on(r.url, s).send('tools/call', { name: 'conf:test_tool_with_logging', arguments: {} });
      assert.equal(res.message?.result?.content?.[0]?.text, 'Tool with logging executed successfully', res.text);
      return res.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.level);
    };
    assert.deepEqual(await logsOfCallOn(C), ['info', 'info', 'info'], 'the default level, info');
    assert.deepEqual(await on(A.url, s).result('logging/setLevel', { level: 'error' }), {});
    // The level reaches C through Redis' pub/sub, a moment after A answered.
    await pollUntil(async () => (await logsOfCallOn(C)).length === 0, { what: 'C to take the level set on A' });
    assert.deepEqual(await on(A.url, s).result('logging/setLevel', { level: 'debug' }), {});
    await pollUntil(async () => (await logsOfCallOn(C)).length === 3, { what: 'C to take the next level' });
  }),
);

let deleted; // a session ended by DELETE (checked again after Redis restarts)

test(
  'DELETE on one replica is honoured by every replica (POST, GET and DELETE are 404), through nginx too',
  withDiagnostics(async () => {
    const [A, B, C] = replicas;
    const s = new HttpClient(lb.url);
    await s.initialize();
    // Every replica holds a copy of the session first.
    for (const r of replicas) await on(r.url, s).result('tools/list', {});
    const res = await fetch(B.url, { method: 'DELETE', headers: { 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
    assert.equal(res.status, 200, await res.text());
    for (const r of [A, B, C, lb]) {
      const post = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: s.session, protocolVersion: s.protocolVersion });
      assert.equal(post.status, 404, `POST after DELETE on ${r.url}: ${post.text}`);
      const get = await fetch(r.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
      assert.equal(get.status, 404);
      await get.text();
      const del = await fetch(r.url, { method: 'DELETE', headers: { 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
      assert.equal(del.status, 404);
      await del.text();
    }
    deleted = s;
  }),
);

test(
  'a resource subscribed through one replica: its updates reach the GET stream held by another (raw, and SDK v1 through nginx)',
  withDiagnostics(async () => {
    const [A, B, C] = replicas;
    const s = new HttpClient(A.url);
    await s.initialize();
    const { resources } = await s.result('resources/list', {});
    const uri = resources.find((r) => r.uri.endsWith(WATCHED))?.uri;
    assert.ok(uri, JSON.stringify(resources));
    const stream = await openGetStream(on(B.url, s));
    assert.equal(stream.status, 200);
    assert.deepEqual(await on(C.url, s).result('resources/subscribe', { uri }), {});
    const note = await stream.waitFor((m) => m.method === 'notifications/resources/updated', 15000);
    assert.equal(note.params.uri, uri);
    assert.deepEqual(await on(A.url, s).result('resources/unsubscribe', { uri }), {});
    stream.close();

    const { client } = await v1Client(lb.url, 'sdk-v1-subscriber');
    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await client.subscribeResource({ uri });
    await pollUntil(() => updates.includes(uri), { timeoutMs: 15000, what: `an update of ${uri} through nginx` });
  }),
);

test(
  'the replica holding a session is SIGKILLed mid-run: the session goes on at the others, with no new initialize',
  withDiagnostics(async () => {
    const D = await startReplica(dir, replicaConfig(), { label: 'mcpgw-D' });
    const group = [replicas[0], replicas[1], D];
    const lb2 = await startNginx(dir, group.map((r) => r.hostPort), { label: 'nginx-kill' });
    // Sessions until one is begun on D. A connect is three requests
    // (initialize, initialized, GET): a /healthz in between moves the round
    // robin on by one.
    let found;
    for (let i = 0; i < 6 && !found; i++) {
      const before = await messagesOf(D, 'initialize');
      const { client, transport } = await v1Client(lb2.url, `sdk-v1-kill-${i}`);
      if ((await messagesOf(D, 'initialize')) > before) found = { client, transport };
      else await httpGet(`${lb2.base}/healthz`);
    }
    assert.ok(found, 'no session began on D');
    const { client, transport } = found;
    const sid = transport.sessionId;
    await echoes(client, 4, 'before');
    const inits = await initsOn(group.slice(0, 2));
    await D.proc.stop({ signal: 'SIGKILL' });
    await echoes(client, 8, 'after');
    assert.equal(transport.sessionId, sid);
    assert.deepEqual(await initsOn(group.slice(0, 2)), inits, 'no new initialize');
    await lb2.proc.stop();
  }),
);

test(
  'Redis stopped and restarted under load: every call answered, DELETE and saga resume fail naming Redis, /readyz reports it, then all recovers',
  withDiagnostics(async () => {
    const [A, B, C] = replicas;
    const workers = [];
    let answered = 0;
    let running = true;
    for (let w = 0; w < 4; w++) {
      const { client } = await v1Client(lb.url, `load-${w}`);
      workers.push(
        (async () => {
          for (let i = 0; running; i++) {
            const r = await withTimeout(client.callTool({ name: 'toolbox:echo', arguments: { text: `w${w} ${i}` } }), 20000, `load call w${w} ${i}`);
            assert.equal(text(r), `w${w} ${i}`);
            answered++;
          }
        })(),
      );
    }
    await pollUntil(() => answered >= 20, { what: 'load running' });
    const s = new HttpClient(lb.url);
    await s.initialize();
    const saga = await on(A.url, s).result('tools/callSaga', { name: 'deploy', arguments: { service: 'api', version: '1' } });

    await redis.proc.stop();
    for (const r of replicas)
      await pollUntil(async () => JSON.parse((await httpGet(`${r.base}/readyz`)).text).redis !== 'up', { what: `${r.hostPort} to see Redis down` });
    const ready = await httpGet(`${B.base}/readyz`);
    assert.equal(ready.status, 200, 'calls go on: still ready');
    assert.match(JSON.parse(ready.text).redis, /^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable: /);
    const mark = answered;
    await pollUntil(() => answered >= mark + 20, { what: 'calls while Redis is down' });

    const del = await fetch(C.url, { method: 'DELETE', headers: { 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
    assert.equal(del.status, 503);
    assert.match((await del.json()).error.message, /^Service Unavailable: the session was not ended: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable/);
    const resume = await on(B.url, s).request('tools/resumeSaga', {
      sagaToken: saga.sagaToken,
      completedSteps: [{ stepId: 'target', result: { action: 'accept', content: { target: 'staging' } } }],
    });
    assert.equal(resume.error?.code, -32603, JSON.stringify(resume));
    assert.match(resume.error.message, /^mcpgw: cannot resume the saga: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 (is unreachable|did not answer)/);
    const { resources } = await on(A.url, s).result('resources/list', {});
    const sub = await on(A.url, s).request('resources/subscribe', { uri: resources.find((r) => r.uri.endsWith(WATCHED)).uri });
    assert.equal(sub.error?.code, -32603, JSON.stringify(sub));
    assert.match(sub.error.message, /^mcpgw: cannot subscribe across the cluster: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 (is unreachable|did not answer)/);
    // The session was not ended: it goes on.
    assert.ok((await on(C.url, s).result('tools/list', {})).tools.length > 0);
    // A replica started now cannot tell ended sessions from live ones: not
    // ready, and another's session gets 503 naming Redis, not a 404.
    const E = new Proc('mcpgw-E', MCPGW, ['--config', writeConfig(dir, { ...replicaConfig(), listen: { host: '127.0.0.1', port: 0 } }, 'mcpgw-E.yaml')]);
    const eUrl = (await E.waitForLine('stderr', /listening on (http:\/\/[^\s]+)/))[1];
    const eBase = new URL(eUrl).origin;
    // Until its first attempt at Redis has failed, it says "not connected yet".
    let notReady;
    let redisDown;
    await pollUntil(async () => {
      notReady = await httpGet(`${eBase}/readyz`);
      redisDown = JSON.parse(notReady.text).down?.find((d) => d.redis !== undefined);
      return redisDown?.redis !== 'not connected yet';
    }, { what: 'E to have tried Redis once' });
    assert.equal(notReady.status, 503, notReady.text);
    const body = JSON.parse(notReady.text);
    assert.equal(body.ready, false);
    // Its upstreams may still be connecting too (it serves at once): they
    // are listed beside Redis.
    assert.ok(redisDown, notReady.text);
    assert.match(redisDown.redis, /^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable/);
    const early = await rpc(eUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: s.session, protocolVersion: s.protocolVersion });
    assert.equal(early.status, 503, early.text);
    assert.match(JSON.parse(early.text).error.message, /^Service Unavailable: Redis at .* is unreachable: .*; this replica cannot yet tell whether the session was ended \(DELETE\)$/);

    redis = await startRedis(dir, { port: redis.port, label: 'redis-restarted' });
    for (const r of replicas)
      await pollUntil(async () => JSON.parse((await httpGet(`${r.base}/readyz`)).text).redis === 'up', { timeoutMs: 15000, what: `${r.hostPort} to reconnect` });
    await pollUntil(async () => (await httpGet(`${eBase}/readyz`)).status === 200, { timeoutMs: 15000, what: 'E ready once Redis is back' });
    assert.ok((await on(eUrl, s).result('tools/list', {})).tools.length > 0);
    await E.stop();
    const mark2 = answered;
    await pollUntil(() => answered >= mark2 + 20, { what: 'calls after Redis is back' });
    running = false;
    await Promise.all(workers);

    // Acknowledged before the outage, still honoured everywhere.
    for (const r of replicas) {
      const post = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: deleted.session, protocolVersion: deleted.protocolVersion });
      assert.equal(post.status, 404);
    }
    // What failed while Redis was down works now.
    const resumed = await on(B.url, s).result('tools/resumeSaga', {
      sagaToken: saga.sagaToken,
      completedSteps: [{ stepId: 'target', result: { action: 'accept', content: { target: 'staging' } } }],
    });
    assert.equal(resumed.state, 'suspended');
    const del2 = await fetch(C.url, { method: 'DELETE', headers: { 'mcp-session-id': s.session, 'mcp-protocol-version': s.protocolVersion } });
    assert.equal(del2.status, 200);
    for (const r of replicas) {
      const post = await rpc(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { session: s.session, protocolVersion: s.protocolVersion });
      assert.equal(post.status, 404);
    }
  }),
);
