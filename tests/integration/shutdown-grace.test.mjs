// SIGTERM bounded by shutdown_grace_ms: a call running past the grace is
// ended with an isError result, and an idle keep-alive client connection
// does not hold up the exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  bankStdio,
  connectHttp,
  descendants,
  pidFromResult,
  pollUntil,
  requireBinaries,
  startGateway,
  textOf,
  toolboxStdio,
  waitGone,
  waitSleeping,
  withDiagnostics,
} from './harness.mjs';

test(
  'SIGTERM with a call longer than shutdown_grace_ms: the call ends with isError naming the server, exit 0, children gone',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ shutdown_grace_ms: 500, servers: [toolboxStdio()] }, { label: 'mcpgw-grace' });
    const c = await connectHttp(gw.url);
    const pid = pidFromResult(await c.callTool('toolbox:pid'));
    const children = descendants(gw.proc.pid);
    const inflight = c.callTool('toolbox:sleep', { ms: 10000 });
    await waitSleeping(pid);
    const t0 = Date.now();
    gw.proc.child.kill('SIGTERM');
    const r = await inflight;
    const answered = Date.now() - t0;
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /toolbox/);
    assert.ok(answered >= 400 && answered < 3000, `answered ${answered} ms after SIGTERM (grace 500 ms)`);
    const exit = await gw.proc.waitExit(10000);
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.deepEqual(await waitGone(children), []);
  }),
);

test(
  'SIGTERM on an idle gateway with an idle keep-alive connection open exits within shutdown_grace_ms',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ shutdown_grace_ms: 500, servers: [bankStdio()] }, { label: 'mcpgw-keepalive' });
    // One HTTP/1.1 keep-alive exchange, then the connection stays open, idle.
    const sock = net.connect(gw.port, '127.0.0.1');
    await new Promise((res, rej) => sock.once('connect', res).once('error', rej));
    sock.on('error', () => {});
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      got += d;
    });
    sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nConnection: keep-alive\r\n\r\n`);
    await pollUntil(() => /\r\n\r\n/.test(got), { timeoutMs: 5000, intervalMs: 10, what: 'the /healthz answer' });
    assert.match(got, /^HTTP\/1\.1 200/);
    try {
      const t0 = Date.now();
      gw.proc.child.kill('SIGTERM');
      const exit = await gw.proc.waitExit(10000);
      const took = Date.now() - t0;
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(took < 2000, `exit took ${took} ms with an idle keep-alive connection open (shutdown_grace_ms 500, nothing in flight)`);
    } finally {
      sock.destroy();
    }
  }),
);
