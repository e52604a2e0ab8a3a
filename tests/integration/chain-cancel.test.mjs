// Cancelling a chained call: notifications/cancelled for the client's
// request stops the chain. The hop in flight is cancelled upstream, no
// further hop runs, and the answer comes promptly.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  chainTrace,
  connectHttp,
  httpServer,
  newId,
  pidFromResult,
  pollUntil,
  requireBinaries,
  rpc,
  startGateway,
  startTap,
  startUpstreamHttp,
  textOf,
  threadSleeping,
  toolboxStdio,
  waitSleeping,
  withDiagnostics,
} from './harness.mjs';

let gw;
let tap; // in front of the HTTP toolbox "hbox"
let hbox;

before(async () => {
  requireBinaries();
  hbox = await startUpstreamHttp(TOOLBOX, ['--chain-tool', 'chain'], { label: 'toolbox-http' });
  tap = await startTap(hbox.url);
  gw = await startGateway({
    // `counted` (a welcome-flagged tool) is used here only as a hop whose
    // calls toolbox counts (welcome_calls); no welcome call at session start.
    welcome: { strategy: 'none' },
    servers: [toolboxStdio({ args: ['--chain-tool', 'chain', '--welcome-tool', 'counted'] }), httpServer('hbox', tap.url)],
  });
});

function startCall(c, name, args, meta) {
  const id = newId();
  const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
  const pending = rpc(c.url, { jsonrpc: '2.0', id, method: 'tools/call', params }, c.opts({ timeoutMs: 30000 }));
  return { id, pending };
}

/** A cancelled call's answer: an isError result or a JSON-RPC error, saying "cancel". */
function assertCancelled(res, id) {
  assert.equal(res.status, 200, res.text);
  const m = res.message;
  assert.ok(m, `no response: ${res.text}`);
  assert.equal(m.id, id);
  if (m.error) assert.match(m.error.message, /cancel/i, JSON.stringify(m));
  else {
    assert.equal(m.result.isError, true, JSON.stringify(m));
    assert.match(textOf(m.result), /cancel/i, JSON.stringify(m));
  }
}

const count = async (c) => Number(textOf(await c.callTool('toolbox:welcome_calls')));

for (const withToken of [false, true]) {
  test(
    `cancel during a slow hop (chain → chain{sleep_ms: 4000} → counted)${withToken ? ', call with a progressToken (SSE answer)' : ''}: prompt answer, the next hop never runs`,
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const pid = pidFromResult(await c.callTool('toolbox:pid'));
      const base = await count(c);
      const call = startCall(
        c,
        'toolbox:chain',
        { text: 'first', next: 'chain', next_arguments: { text: 'slow', sleep_ms: 4000, next: 'counted', next_arguments: {} } },
        withToken ? { progressToken: 'cancel-tok' } : undefined,
      );
      // The client's own call does not sleep: a sleeping thread is hop 1 running.
      await waitSleeping(pid);
      const n = await c.notify('notifications/cancelled', { requestId: call.id, reason: 'stop the chain' });
      assert.equal(n.status, 202, n.text);
      const res = await call.pending;
      // Answered while the slow hop still sleeps upstream, not after it.
      assert.ok(threadSleeping(pid), 'the cancelled chain was answered only after the slow hop ended');
      assertCancelled(res, call.id);
      if (res.message.result?._meta?.['mcpgw/chain']) {
        const tools = chainTrace(res.message.result).map((h) => h.tool);
        assert.ok(!tools.includes('toolbox:counted'), `trace shows the hop after the cancelled one: ${tools}`);
      }
      if (withToken) {
        for (const m of res.messages.filter((x) => x.method === 'notifications/progress')) {
          assert.equal(m.params.progressToken, 'cancel-tok', JSON.stringify(m));
          assert.ok(!/counted/.test(m.params.message || ''), `progress for the hop after the cancelled one: ${JSON.stringify(m)}`);
        }
      }

      // The slow hop finishes upstream (toolbox ignores cancellation); whatever it
      // answers, the gateway must not go on to `counted`. Proving an absence
      // needs a window: 1.5 s after the hop's answer is far longer than a hop takes.
      await pollUntil(() => !threadSleeping(pid), { timeoutMs: 10000, what: 'the slow hop to finish upstream' });
      await assert.rejects(
        pollUntil(async () => (await count(c)) > base, { timeoutMs: 1500, intervalMs: 100, what: 'a call of `counted`' }),
        /timed out/,
        'the hop after the cancelled one ran',
      );
      assert.ok(!/chain hop.*toolbox:counted/.test(gw.proc.stderrText), 'a hop to toolbox:counted was logged');
      // The session still works, chains included.
      const ok = await c.callTool('toolbox:chain', { text: 'x', next: 'echo', next_arguments: { text: 'y' } });
      assert.equal(textOf(ok), 'x\ny');
      await c.close();
    }),
  );
}

test(
  'cancel during a hop on an HTTP upstream: that upstream gets notifications/cancelled for the hop\'s request',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    // The hop sleeps far longer than the test may run: while the test runs,
    // a sleeping thread in hbox means the hop has not ended.
    const call = startCall(c, 'hbox:chain', { text: 'first', next: 'sleep', next_arguments: { ms: 600003 } });
    const hop = await tap.waitFor((b) => b && b.method === 'tools/call' && b.params?.name === 'sleep' && b.params?.arguments?.ms === 600003);
    await waitSleeping(hbox.proc.pid);
    assert.equal((await c.notify('notifications/cancelled', { requestId: call.id })).status, 202);
    const res = await call.pending;
    // hbox's only sleep is this hop's: it still runs, so the answer did not wait for it.
    assert.ok(threadSleeping(hbox.proc.pid), 'answered only after the hop ended');
    assertCancelled(res, call.id);
    const cancel = await tap.waitFor((b) => b && b.method === 'notifications/cancelled' && b.params?.requestId === hop.id, 3000);
    assert.equal(cancel.id, undefined);
    const ok = await c.callTool('hbox:echo', { text: 'after cancel' });
    assert.equal(textOf(ok), 'after cancel');
    await c.close();
    // hbox's handler thread keeps sleeping; don't let it hold up the file's cleanup.
    await hbox.proc.stop({ signal: 'SIGKILL' });
  }),
);
