// `limits`: a token bucket per principal over tools/call (two principals at
// once: one is slowed, the other is not, and the upstream never sees the
// refused calls), max_in_flight_per_session, and max_sessions (the
// longest-idle session is ended first; with none idle, initialize gets 503).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bankStdio, connectHttp, newId, openGetStream, pollUntil, requireBinaries, rpc, startGateway, toolboxStdio, withDiagnostics,
} from './harness.mjs';
import { srpc } from './stateless.mjs';

const A = { headers: { authorization: 'Bearer token-a' } };
const B = { headers: { authorization: 'Bearer token-b' } };
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({
    auth: { bearer_tokens: [{ token: 'token-a', name: 'alpha' }, { token: 'token-b', name: 'beta' }, { token: 'token-c', name: 'gamma' }, { token: 'token-d', name: 'delta' }] },
    limits: { calls_per_s: 1, burst: 3, max_in_flight_per_session: 1, max_sessions: 3 },
    servers: [bankStdio(), toolboxStdio()],
  });
});

const callsLogged = (principal) =>
  gw.proc.stderrText.split('\n').filter((l) => l.includes('call bank:list_accounts') && l.includes(`principal=${principal} `)).length;

test(
  'calls_per_s + burst per principal: alpha is refused past its burst with -32000 and retryAfterMs, beta is not; refused calls never reach the upstream',
  withDiagnostics(async () => {
    const a = await connectHttp(gw.url, A);
    const b = await connectHttp(gw.url, B);
    const call = (c) => c.request('tools/call', { name: 'bank:list_accounts', arguments: {} });
    const before = callsLogged('alpha');
    // Each principal calls one after the other (max_in_flight_per_session
    // is 1), both principals at once.
    const series = async (c, n) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await call(c));
      return out;
    };
    const results = (await Promise.all([series(a, 4), series(b, 3)])).flat();
    const refusedA = results.slice(0, 4).filter((r) => r.error);
    assert.equal(refusedA.length, 1, JSON.stringify(results.slice(0, 4)));
    const e = refusedA[0].error;
    assert.equal(e.code, -32000);
    assert.equal(e.message, 'Rate limit exceeded: limits.calls_per_s (1/s, burst 3) for principal "alpha"');
    assert.equal(e.data.limit, 'calls_per_s');
    assert.ok(Number.isInteger(e.data.retryAfterMs) && e.data.retryAfterMs > 0 && e.data.retryAfterMs <= 1000, JSON.stringify(e.data));
    assert.ok(results.slice(4).every((r) => r.result && !r.result.isError), 'beta is unaffected');
    await pollUntil(() => callsLogged('alpha') === before + 3, { what: 'three calls of alpha logged' });
    assert.equal(callsLogged('alpha'), before + 3, 'the refused call did not reach the upstream');
    // Other methods are not rate limited.
    assert.deepEqual(await a.result('ping'), {});
    // After retryAfterMs, alpha may call again.
    const t0 = Date.now();
    await pollUntil(() => Date.now() - t0 >= e.data.retryAfterMs, { what: 'retryAfterMs passed', intervalMs: 20 });
    const again = await call(a);
    assert.ok(again.result, JSON.stringify(again));
    await Promise.all([a.close(), b.close()]);
  }),
);

test(
  'max_in_flight_per_session: a second request while one runs is refused; another session is not',
  withDiagnostics(async () => {
    // A principal of its own: its rate bucket is full whatever ran before.
    const D = { headers: { authorization: 'Bearer token-d' } };
    const a = await connectHttp(gw.url, D);
    const b = await connectHttp(gw.url, D);
    // A call that runs until this test cancels it, so no stall of a loaded
    // machine can end it before the pings below see it.
    let slowId, slow, ended;
    const startSlow = () => {
      slowId = newId();
      ended = undefined;
      const call = rpc(gw.url, { jsonrpc: '2.0', id: slowId, method: 'tools/call', params: { name: 'toolbox:sleep', arguments: { ms: 60000 } } }, a.opts());
      call.then((r) => { if (slow === call) ended = r.message ?? r.text; }, (e) => { if (slow === call) ended = { thrown: String(e) }; });
      slow = call;
    };
    startSlow();
    // A ping passes until the slow call is in flight, then is refused.
    let second;
    await pollUntil(async () => {
      if (ended) {
        // The first ping (another connection) overtook the call and was in
        // flight when the call came, so the call was the one refused: again.
        if (ended.error?.data?.limit === 'max_in_flight_per_session') {
          startSlow();
          return false;
        }
        throw new Error(`the slow call ended before a ping saw it in flight: ${JSON.stringify(ended)}`);
      }
      return (second = await a.request('ping')).error !== undefined;
    }, { what: 'a ping refused while the call runs' });
    assert.equal(second.error?.code, -32000, JSON.stringify(second));
    assert.equal(second.error.message, 'Too many requests in flight: limits.max_in_flight_per_session (1) reached for this session');
    assert.equal(second.error.data.retryAfterMs, 100);
    assert.deepEqual(await b.result('ping'), {}, 'another session is not limited');
    // A notification is not a request: the cancellation passes the limit.
    const n = await a.notify('notifications/cancelled', { requestId: slowId });
    assert.equal(n.status, 202, n.text);
    const done = await slow;
    assert.equal(done.message?.id, slowId, done.text);
    assert.match(JSON.stringify(done.message), /cancel/i, 'the slow call ends as cancelled');
    assert.deepEqual(await a.result('ping'), {}, 'free again once the call ended');
    await Promise.all([a.close(), b.close()]);
  }),
);

test(
  'max_sessions: the longest-idle session is ended for a new one; with every session busy, initialize gets 503',
  withDiagnostics(async () => {
    const s1 = await connectHttp(gw.url, A);
    const s2 = await connectHttp(gw.url, A);
    const s3 = await connectHttp(gw.url, A);
    assert.deepEqual(await s2.result('ping'), {});
    assert.deepEqual(await s3.result('ping'), {});
    const s4 = await connectHttp(gw.url, A);  // s1 is the longest idle
    const gone = await rpc(gw.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { session: s1.session, protocolVersion: s1.protocolVersion, ...A });
    assert.equal(gone.status, 404);
    assert.deepEqual(await s2.result('ping'), {});
    // Busy sessions (a GET stream open) are never ended.
    const streams = await Promise.all([s2, s3, s4].map((c) => openGetStream(c)));
    const refused = await rpc(gw.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, A);
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.error.message, 'Service Unavailable: limits.max_sessions (3) reached and no session is idle');
    for (const s of streams) await s.close?.();
    await Promise.all([s2.close(), s3.close(), s4.close()]);
  }),
);

test(
  'a stateless (2026-07-28) client is rate limited by its principal too, with the same error',
  withDiagnostics(async () => {
    const call = () => srpc(gw.url, 'tools/call', { name: 'bank:list_accounts', arguments: {} }, { headers: { authorization: 'Bearer token-c' } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call());
    assert.ok(answers.slice(0, 3).every((r) => r.status === 200 && r.message?.result), JSON.stringify(answers.map((r) => r.message)));
    const last = answers[3];
    assert.equal(last.status, 200);
    assert.equal(last.message.error.code, -32000);
    assert.equal(last.message.error.message, 'Rate limit exceeded: limits.calls_per_s (1/s, burst 3) for principal "gamma"');
    assert.equal(last.message.id, answers[3].request.id);
  }),
);
