// Issue 22, item 6: server-to-client requests are bounded. An upstream that
// sends 20,000 elicitations to a client that never answers grew the gateway
// by 149 MB, kept after the call ended, and never withdrew them from the
// client. Now at most limits.max_client_requests_per_call (and _per_session)
// await the client at once; one more is answered to the upstream at once
// with -32000 naming the limit; when the call ends, the ones still waiting
// are withdrawn (notifications/cancelled to the client, before the answer)
// and answered to the upstream; the memory comes back.
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, connectHttp, pollUntil, requireBinaries, startGateway, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/hostile-fixture.mjs');
const hostile = { name: 'hs', transport: 'stdio', command: process.execPath, args: [FIXTURE], timeout_ms: 120000 };
const ELICITS = { capabilities: { elicitation: {} } };

/** Resident memory of `pid`, in MB. */
function rssMb(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(m[1]) / 1024;
}

/** The fixture's account of its elicitations, once `done(stats)` holds. */
async function statsWhen(c, done, what) {
  return pollUntil(
    async () => {
      const r = await c.callTool('hs:elicit_stats');
      return done(r.structuredContent) ? r.structuredContent : false;
    },
    { timeoutMs: 60000, what },
  );
}

before(() => requireBinaries());

test(
  '20,000 elicitations to a client that never answers: 64 reach it, the rest are refused at once, the 64 are withdrawn when the call ends, and the memory comes back',
  withDiagnostics(async () => {
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [hostile] });
    const c = await connectHttp(gw.url, ELICITS);
    const rssBefore = rssMb(gw.proc.pid);
    const COUNT = 20000;
    const LIMIT = 64; // limits.max_client_requests_per_call's default
    // The upstream answers its call once every request over the limit was
    // refused: then 64 still wait for the client.
    const res = await c.send('tools/call', { name: 'hs:elicit_flood', arguments: { count: COUNT, answer_after: COUNT - LIMIT } }, { timeoutMs: 90000 });
    assert.equal(res.message?.result?.content?.[0]?.text, `flooded ${COUNT}`, res.text.slice(-2000));
    const asked = res.messages.filter((m) => m.method === 'elicitation/create');
    assert.equal(asked.length, LIMIT, 'requests that reached the client');
    const withdrawn = res.messages.filter((m) => m.method === 'notifications/cancelled');
    assert.deepEqual(withdrawn.map((m) => m.params.requestId).sort(), asked.map((m) => m.id).sort(), 'each request withdrawn');
    assert.ok(withdrawn.every((m) => m.params.reason === 'the call ended'), JSON.stringify(withdrawn[0]));
    assert.ok(res.messages.indexOf(res.message) > res.messages.indexOf(withdrawn.at(-1)), 'withdrawn before the answer');

    const stats = await statsWhen(c, (s) => s.unanswered === 0, 'every request answered to the upstream');
    assert.equal(stats.refused, COUNT);
    assert.equal(stats.answered, 0);
    assert.match(stats.firstRefusal.message, /limits\.max_client_requests_per_call \(64\) reached/);
    assert.equal(stats.firstRefusal.code, -32000);
    assert.match(stats.lastRefusal.message, /call ended before it answered elicitation\/create/);
    const grown = rssMb(gw.proc.pid) - rssBefore;
    assert.ok(grown < 40, `the gateway kept ${grown.toFixed(1)} MB after the call`);
    await c.close();
  }),
);

test(
  'limits.max_client_requests_per_session bounds the requests of all calls of a session together',
  withDiagnostics(async () => {
    const gw = await startGateway({ welcome: { strategy: 'none' }, limits: { max_client_requests_per_session: 5 }, servers: [hostile] });
    const c = await connectHttp(gw.url, ELICITS);
    const res = await c.send('tools/call', { name: 'hs:elicit_flood', arguments: { count: 50, answer_after: 45 } }, { timeoutMs: 60000 });
    assert.equal(res.message?.result?.content?.[0]?.text, 'flooded 50');
    assert.equal(res.messages.filter((m) => m.method === 'elicitation/create').length, 5);
    const stats = await statsWhen(c, (s) => s.unanswered === 0, 'every request answered to the upstream');
    assert.match(stats.firstRefusal.message, /limits\.max_client_requests_per_session \(5\) reached/);
    await c.close();
  }),
);
