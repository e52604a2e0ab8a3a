// An upstream killed from outside (SIGKILL) while a call to it is in flight:
// the client gets an isError result naming the server promptly instead of a
// hung request; a stdio upstream is restarted (new pid), and other upstreams
// are not affected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  bankStdio,
  connectHttp,
  descendants,
  httpServer,
  pidFromResult,
  pollUntil,
  requireBinaries,
  startGateway,
  startUpstreamHttp,
  textOf,
  toolboxStdio,
  waitSleeping,
  withDiagnostics,
} from './harness.mjs';

test(
  'stdio toolbox SIGKILLed during toolbox:sleep {ms: 10000}: prompt isError naming it, then restarted with a new pid',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ servers: [bankStdio(), toolboxStdio()] }, { label: 'mcpgw-kill-stdio' });
    const c = await connectHttp(gw.url);
    const pid = pidFromResult(await c.callTool('toolbox:pid'));
    const child = descendants(gw.proc.pid).find((s) => s.pid === pid);
    assert.ok(child, `toolbox pid ${pid} is not a child of the gateway: ${JSON.stringify(descendants(gw.proc.pid))}`);

    const inflight = c.callTool('toolbox:sleep', { ms: 10000 });
    // The call has reached the upstream once one of its threads sleeps.
    await waitSleeping(pid);
    process.kill(pid, 'SIGKILL');

    const r = await inflight;
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /toolbox/, JSON.stringify(r));
    // Answered because the gateway saw the child die, not by the call's timeout.
    assert.match(textOf(r), /process closed its stdout/, JSON.stringify(r));

    // The other upstream is unaffected.
    const bal = await c.callTool('bank:get_account_balance', { accountId: 'acc_savings_001' });
    assert.deepEqual(bal.structuredContent, { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' });

    const echo = await pollUntil(
      async () => {
        const e = await c.callTool('toolbox:echo', { text: 'after kill' });
        return e.isError ? false : e;
      },
      { timeoutMs: 15000, intervalMs: 100, what: 'toolbox:echo to work after SIGKILL' },
    );
    assert.deepEqual(echo, { content: [{ type: 'text', text: 'after kill' }] });
    const pidAfter = pidFromResult(await c.callTool('toolbox:pid'));
    assert.notEqual(pidAfter, pid);
    assert.ok(descendants(gw.proc.pid).some((s) => s.pid === pidAfter), 'the restarted toolbox is not a child of the gateway');
    await c.close();
    assert.ok(gw.proc.alive, 'the gateway died');
  }),
);

test(
  'HTTP toolbox process SIGKILLed during toolbox:sleep: prompt isError naming it; the other upstream still works',
  withDiagnostics(async () => {
    requireBinaries();
    const upstream = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http-victim' });
    const gw = await startGateway({ servers: [bankStdio(), httpServer('toolbox', upstream.url)] }, { label: 'mcpgw-kill-http' });
    const c = await connectHttp(gw.url);
    assert.equal(pidFromResult(await c.callTool('toolbox:pid')), upstream.proc.pid);

    const inflight = c.callTool('toolbox:sleep', { ms: 10000 });
    await waitSleeping(upstream.proc.pid);
    upstream.proc.child.kill('SIGKILL');

    const r = await inflight;
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /toolbox/, JSON.stringify(r));
    // Answered because the connection died with the process, not by the call's timeout.
    assert.match(textOf(r), /connection closed while reading the response/, JSON.stringify(r));
    await upstream.proc.waitExit();

    const accounts = await c.callTool('bank:list_accounts');
    assert.deepEqual(
      accounts.structuredContent.accounts.map((a) => a.accountId),
      ['acc_checking_001', 'acc_savings_001', 'acc_credit_001'],
    );
    // A later call to the dead upstream is an isError naming it, not a hang.
    const again = await c.callTool('toolbox:echo', { text: 'anyone?' });
    assert.equal(again.isError, true, JSON.stringify(again));
    assert.match(textOf(again), /toolbox/);
    // Refused at once by the dead port, not left to time out.
    assert.match(textOf(again), /Connection refused/, JSON.stringify(again));
    await c.close();
    assert.ok(gw.proc.alive, 'the gateway died');
  }),
);
