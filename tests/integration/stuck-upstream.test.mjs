// An upstream that stops reading its stdin costs the gateway a bounded
// queue, not unbounded memory: calls beyond the bound (16 MiB waiting for
// its stdin) fail at once naming the server, the calls already queued wait
// for their timeout, and the other upstreams are served meanwhile.
import fs from 'node:fs';
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

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

test(
  'calls to an upstream that stopped reading its stdin: past 16 MiB queued they fail at once naming it; memory stays bounded; other servers answer',
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
    // The gateway holds the queue and the calls' own copies, not more.
    assert.ok(rssMb(gw.proc.pid) < 400, `RSS ${rssMb(gw.proc.pid)} MB`);
    const bank = await c.callTool('bank:list_accounts');
    assert.ok(bank.structuredContent.accounts.length > 0);
    assert.ok(refused.length < 24, 'the calls that fit in the queue wait for the upstream');
  }),
);
