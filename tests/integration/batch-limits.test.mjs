// Issue 22, item 7: JSON-RPC batches are bounded. One 4 MiB batch of
// 39,397 tools/call (under max_body_bytes) took the gateway's RSS up by
// 727 MB, kept after the answer. Now a batch of more than
// limits.max_batch_size messages is refused whole with -32000 naming the
// limit (none of it runs), a batch's requests run at most
// limits.batch_concurrency at a time, and the memory comes back.
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, connectHttp, pollUntil, requireBinaries, rpc, startGateway, startGatewayStdio, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/hostile-fixture.mjs');
const hostile = { name: 'hs', transport: 'stdio', command: process.execPath, args: [FIXTURE], timeout_ms: 120000 };
const BATCHING = { protocolVersion: '2025-03-26' }; // the revision with batches

function rssMb(pid) {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)[1]) / 1024;
}

const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
/** A batch of `n` tools/call of hs:hold, `ms` each. */
const holds = (n, ms, first = 1) => Array.from({ length: n }, (_, i) => call(first + i, 'hs:hold', { ms }));

before(() => requireBinaries());

test(
  'a batch over limits.max_batch_size is refused whole, naming the limit, and runs nothing: 101 messages, and 4 MiB of 39,397 calls',
  withDiagnostics(async () => {
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [hostile] });
    const c = await connectHttp(gw.url, BATCHING);
    const rssBefore = rssMb(gw.proc.pid);
    const res = await rpc(gw.url, holds(101, 1), c.opts());
    assert.equal(res.status, 400, res.text);
    const err = res.json;
    assert.equal(err.error.code, -32000, res.text);
    assert.match(err.error.message, /^Batch too large: limits\.max_batch_size \(100\) messages in one batch, this one has 101/);
    assert.deepEqual(err.error.data, { limit: 'max_batch_size', max: 100, size: 101 });
    assert.equal(err.id, null);

    const big = Array.from({ length: 39397 }, (_, i) => call(1000 + i, 'hs:hold', { ms: 1 }));
    const body = JSON.stringify(big);
    assert.ok(body.length > 3.5 * 1024 * 1024 && body.length < 4 * 1024 * 1024, `${body.length} bytes`);
    const huge = await rpc(gw.url, body, c.opts());
    assert.equal(huge.status, 400);
    assert.equal(huge.json.error.data.size, 39397);
    const held = await c.callTool('hs:hold_stats');
    assert.equal(held.structuredContent.ended, 0, 'no call of a refused batch ran');
    const grown = rssMb(gw.proc.pid) - rssBefore;
    assert.ok(grown < 40, `the gateway kept ${grown.toFixed(1)} MB after refusing the batch`);
    // A batch within the limit runs.
    const ok = await rpc(gw.url, holds(100, 1), c.opts());
    assert.equal(ok.status, 200);
    assert.equal(ok.messages.length, 100);
    await c.close();
  }),
);

test(
  "a batch's requests run at most limits.batch_concurrency at a time, every one answered",
  withDiagnostics(async () => {
    const gw = await startGateway({ welcome: { strategy: 'none' }, limits: { batch_concurrency: 4 }, servers: [hostile] });
    const c = await connectHttp(gw.url, BATCHING);
    const res = await rpc(gw.url, holds(24, 150), { ...c.opts(), timeoutMs: 60000 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.messages.map((m) => m.id).sort((a, b) => a - b), Array.from({ length: 24 }, (_, i) => i + 1));
    assert.ok(res.messages.every((m) => m.result?.content?.[0]?.text === 'held'), res.text.slice(0, 500));
    const { structuredContent: held } = await c.callTool('hs:hold_stats');
    assert.ok(held.most <= 4 && held.most >= 2, `${held.most} calls of one batch ran at once`);
    // Calls outside a batch are not held back by it.
    const [alone] = await Promise.all([c.callTool('hs:hold', { ms: 1 }), rpc(gw.url, holds(8, 300, 100), c.opts())]);
    assert.equal(alone.content[0].text, 'held');
    await c.close();
  }),
);

test(
  'over stdio: the same bound and the same refusal',
  withDiagnostics(async () => {
    const { client } = startGatewayStdio({ welcome: { strategy: 'none' }, limits: { max_batch_size: 10, batch_concurrency: 3 }, servers: [hostile] });
    await client.initialize(BATCHING);
    client.write(JSON.stringify(holds(11, 1, 500)));
    const refusal = await pollUntil(() => client.messages.find((m) => m.error?.data?.limit === 'max_batch_size'), { what: 'the refusal' });
    assert.match(refusal.error.message, /limits\.max_batch_size \(10\)/);
    client.write(JSON.stringify(holds(10, 150, 600)));
    await pollUntil(() => client.messages.filter((m) => m.id >= 600 && m.id < 610).length === 10, { timeoutMs: 30000, what: 'the ten answers' });
    const held = await client.callTool('hs:hold_stats');
    assert.ok(held.structuredContent.most <= 3, `${held.structuredContent.most} calls of one batch ran at once`);
    assert.equal(held.structuredContent.ended, 10, 'only the batch within the limit ran');
  }),
);
