// Cancellation: notifications/cancelled from the client ends its in-flight
// tools/call promptly with a result saying so, the upstream is told
// (notifications/cancelled with the gateway's own request id), and the
// session keeps working. Deleting the session cancels its calls too.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  connectHttp,
  httpServer,
  newId,
  pidFromResult,
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
let tap; // in front of the HTTP toolbox ("hbox")
let hbox; // the HTTP toolbox upstream

before(async () => {
  requireBinaries();
  hbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  tap = await startTap(hbox.url);
  gw = await startGateway({ servers: [toolboxStdio(), httpServer('hbox', tap.url)] });
});

/**
 * Starts tools/call `name` {ms} with a known request id; returns {id,
 * pending}. Each test sleeps a distinct `ms` so that the tap can tell
 * its upstream request from another test's.
 */
function startSleep(c, name, ms = 10000) {
  const id = newId();
  const pending = rpc(c.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { ms } } }, c.opts());
  return { id, pending };
}

/** The request the gateway sent the HTTP toolbox for `sleep {ms}`. */
function upstreamSleep(ms) {
  return tap.waitFor((b) => b && b.method === 'tools/call' && b.params?.name === 'sleep' && b.params?.arguments?.ms === ms);
}

/** The answer to a cancelled call: an isError result or a JSON-RPC error, saying "cancel". */
function assertCancelled(res, id) {
  assert.equal(res.status, 200, res.text);
  const m = res.message;
  assert.ok(m, `no response: ${res.text}`);
  assert.equal(m.id, id);
  if (m.error) {
    assert.match(m.error.message, /cancel/i, JSON.stringify(m));
  } else {
    assert.equal(m.result.isError, true, JSON.stringify(m));
    assert.match(textOf(m.result), /cancel/i, JSON.stringify(m));
  }
}

test(
  'notifications/cancelled for an in-flight stdio toolbox:sleep {ms: 10000}: prompt cancelled answer, session still works',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const pid = pidFromResult(await c.callTool('toolbox:pid'));
    const call = startSleep(c, 'toolbox:sleep');
    await waitSleeping(pid);
    const n = await c.notify('notifications/cancelled', { requestId: call.id, reason: 'user pressed stop' });
    assert.equal(n.status, 202, n.text);
    const res = await call.pending;
    // toolbox ignores cancellation: its sleep still runs, so the answer did not wait for it.
    assert.ok(threadSleeping(pid), 'the cancelled call was answered only after the upstream sleep ended');
    assertCancelled(res, call.id);

    assert.deepEqual(await c.callTool('toolbox:echo', { text: 'still here' }), { content: [{ type: 'text', text: 'still here' }] });
    assert.deepEqual(await c.result('ping'), {});
    // The upstream was not restarted to get rid of the call.
    assert.equal(pidFromResult(await c.callTool('toolbox:pid')), pid);
    await c.close();
  }),
);

test(
  'the HTTP upstream receives notifications/cancelled naming the request the gateway sent it',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const call = startSleep(c, 'hbox:sleep', 6001);
    const upstreamCall = await upstreamSleep(6001);
    await waitSleeping(hbox.proc.pid);
    const n = await c.notify('notifications/cancelled', { requestId: call.id });
    assert.equal(n.status, 202, n.text);
    const res = await call.pending;
    // hbox's only sleep is this call's: it still runs, so the answer did not wait for it.
    assert.ok(threadSleeping(hbox.proc.pid), 'the cancelled call was answered only after the upstream sleep (6001 ms) ended');
    assertCancelled(res, call.id);
    const cancel = await tap.waitFor((b) => b && b.method === 'notifications/cancelled' && b.params?.requestId === upstreamCall.id, 3000);
    assert.equal(cancel.id, undefined);

    assert.deepEqual(await c.callTool('hbox:echo', { text: 'after cancel' }), { content: [{ type: 'text', text: 'after cancel' }] });
    await c.close();
  }),
);

test(
  'cancelling an unknown request id is ignored; a call on another session is not affected',
  withDiagnostics(async () => {
    const a = await connectHttp(gw.url);
    const b = await connectHttp(gw.url);
    // Same numeric id space: b's call id, cancelled from session a, must not
    // cancel it. The cancel is sent once the call has reached the upstream
    // (seen by the tap), so a cross-session cancel would find it in flight.
    const call = startSleep(b, 'hbox:sleep', 1500);
    const upstreamCall = await upstreamSleep(1500);
    assert.equal((await a.notify('notifications/cancelled', { requestId: call.id })).status, 202);
    assert.equal((await a.notify('notifications/cancelled', { requestId: 'no-such-request' })).status, 202);
    const res = await call.pending;
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.message.result.content, [{ type: 'text', text: 'slept 1500 ms' }]);
    assert.equal(res.message.result.structuredContent.ms, 1500);
    assert.ok(!tap.seen.some((m) => m?.method === 'notifications/cancelled' && m.params?.requestId === upstreamCall.id));
    await Promise.all([a.close(), b.close()]);
  }),
);

test(
  'DELETE of the session cancels its in-flight call upstream',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const call = startSleep(c, 'hbox:sleep', 6002);
    const upstreamCall = await upstreamSleep(6002);
    assert.equal(await c.close(), 200);
    await tap.waitFor((b) => b && b.method === 'notifications/cancelled' && b.params?.requestId === upstreamCall.id, 3000);
    // The deleted session's POST is answered by the cancellation, not by
    // the upstream's result ("slept 6002 ms") once its sleep ends.
    assertCancelled(await call.pending, call.id);
    // hbox's handler threads keep sleeping; don't let them hold up the file's cleanup.
    await hbox.proc.stop({ signal: 'SIGKILL' });
  }),
);
