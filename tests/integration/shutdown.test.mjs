// Shutdown: SIGTERM lets an in-flight call finish, then the gateway exits 0
// and its upstream children are gone. SIGINT behaves the same when idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  bankStdio,
  connectHttp,
  descendants,
  httpServer,
  pidFromResult,
  requireBinaries,
  startGateway,
  startTap,
  startUpstreamHttp,
  textOf,
  toolboxStdio,
  waitGone,
  withDiagnostics,
} from './harness.mjs';

test(
  'SIGTERM while toolbox:sleep {ms: 500} is in flight: the call completes, exit 0, children gone',
  withDiagnostics(async () => {
    requireBinaries();
    // The HTTP toolbox sits behind a tap so the test knows when the call has
    // reached the upstream (instead of guessing with a sleep).
    const upstream = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
    const tap = await startTap(upstream.url);
    const gw = await startGateway({
      shutdown_grace_ms: 10000,
      servers: [bankStdio(), toolboxStdio({ name: 'kid' }), httpServer('toolbox', tap.url)],
    });
    const c = await connectHttp(gw.url);
    const kidPid = pidFromResult(await c.callTool('kid:pid'));
    assert.equal(textOf(await c.callTool('bank:list_accounts')).split('\n')[0], 'You have 3 accounts:');
    const children = descendants(gw.proc.pid);
    assert.ok(children.some((s) => s.pid === kidPid), `kid pid ${kidPid} not among ${JSON.stringify(children)}`);
    assert.ok(children.some((s) => s.comm.startsWith('bank-server')), JSON.stringify(children));

    const t0 = Date.now();
    const inflight = c.callTool('toolbox:sleep', { ms: 500 });
    await tap.waitFor((b) => b && b.method === 'tools/call' && b.params?.name === 'sleep');
    gw.proc.child.kill('SIGTERM');

    const r = await inflight;
    assert.deepEqual(r.content, [{ type: 'text', text: 'slept 500 ms' }]);
    assert.equal(r.structuredContent.ms, 500);
    assert.ok(Date.now() - t0 >= 450);

    const exit = await gw.proc.waitExit(12000);
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.deepEqual(await waitGone(children, 5000), [], 'upstream children outlived the gateway');
    // The HTTP upstream is not the gateway's child and is still serving.
    assert.ok(upstream.proc.alive);
  }),
);

test(
  'SIGINT on an idle gateway: exit 0 promptly, children gone',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ servers: [bankStdio(), toolboxStdio()] }, { label: 'mcpgw-sigint' });
    const c = await connectHttp(gw.url);
    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'hi' })), 'hi');
    const children = descendants(gw.proc.pid);
    assert.ok(children.length >= 2, JSON.stringify(children));
    gw.proc.child.kill('SIGINT');
    // The deadline outlasts the default 10 s grace, so a wait for it shows below.
    const exit = await gw.proc.waitExit(20000);
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.match(gw.proc.stderrText, /received SIGINT, shutting down/);
    // Idle: nothing to wait for, so the grace period was not waited out.
    assert.doesNotMatch(gw.proc.stderrText, /calls still running after the grace period/);
    assert.deepEqual(await waitGone(children, 5000), []);
  }),
);
