// An upstream that stops reading its stdin costs the gateway a bounded
// queue, not unbounded memory: calls beyond the bound (16 MiB waiting for
// its stdin) fail at once naming the server, the calls already queued wait
// for their timeout, and the other upstreams are served meanwhile.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bankStdio, connectHttp, pollUntil, requireBinaries, startGateway, textOf, withDiagnostics } from './harness.mjs';

const STUCK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stuck-stdin-fixture.mjs');

let gw;
before(async () => {
  requireBinaries();
  gw = await startGateway({
    listen: { max_body_bytes: 4000000 },
    servers: [{ name: 'stuck', transport: 'stdio', command: process.execPath, args: [STUCK], timeout_ms: 60000, circuit: { failures: 0 } }, bankStdio()],
  });
});
after(async () => {
  await gw?.proc.stop();
});

test(
  'calls to an upstream that stopped reading its stdin: past 16 MiB queued they fail at once naming it; the queue stays within its bound; other servers answer',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const megabyte = 'x'.repeat(1 << 20);
    // 24 calls of 1 MiB each: the pipe takes 64 KiB, the queue 16 MiB; the
    // rest cannot be queued.
    const calls = Array.from({ length: 24 }, () => c.callTool('stuck:swallow', { blob: megabyte }));
    const refused = [];
    for (const p of calls) p.then((r) => refused.push(r), () => {});
    await pollUntil(() => refused.length >= 5, { timeoutMs: 30000, what: 'calls refused for the full stdin queue' });
    for (const r of refused) {
      assert.equal(r.isError, true);
      assert.match(textOf(r), /upstream 'stuck'.*not reading its stdin \(write queue full\)/);
    }
    // What waits for the stuck stdin never exceeds the bound.
    const queued = [...gw.proc.stderrText.matchAll(/upstream stuck: \d+ messages \((\d+) bytes\) wait for its stdin/g)].map((m) => Number(m[1]));
    assert.ok(queued.length > 0, 'the full queue is logged');
    assert.ok(Math.max(...queued) <= 16 * 1024 * 1024, `queued ${Math.max(...queued)} bytes`);
    const bank = await c.callTool('bank:list_accounts');
    assert.ok(bank.structuredContent.accounts.length > 0);
    assert.ok(refused.length < 24, 'the calls that fit in the queue wait for the upstream');
  }),
);
