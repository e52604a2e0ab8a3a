// Reloads under load lose no call: ten SIGHUPs, each changing a setting of
// every server (a stdio toolbox, a per_client stdio toolbox, an HTTP
// toolbox), while clients call all three without pause. A changed server
// gets a new connection beside the old one; calls in flight finish on the
// old one, new ones go to the new one once it is up: not one call fails,
// and the replaced children are reaped.
import { writeFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  connectHttp,
  descendants,
  httpServer,
  pidFromResult,
  pollUntil,
  requireBinaries,
  startGateway,
  startUpstreamHttp,
  textOf,
  threadsSleeping,
  toYaml,
  toolboxStdio,
  waitGone,
  waitSleeping,
  withDiagnostics,
  withTimeout,
} from './harness.mjs';
import { startFault } from './fault.mjs';

const RELOADS = 10;
const CLIENTS = 6;

test(
  `${RELOADS} reloads changing every server under continuous calls from ${CLIENTS} clients: zero failed calls, old children reaped`,
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    const th = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
    const config = (i) => ({
      welcome: { strategy: 'none' },
      servers: [
        toolboxStdio({ name: 'tb', timeout_ms: 20000 + i }),
        toolboxStdio({ name: 'pc', session: 'per_client', timeout_ms: 20000 + i }),
        httpServer('th', th.url, { timeout_ms: 20000 + i }),
      ],
    });
    const gw = await startGateway(config(0), { label: 'mcpgw-reload-load' });
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connectHttp(gw.url)));
    const toolboxes = () => descendants(gw.proc.pid).filter((s) => s.comm.startsWith('toolbox'));

    const failures = [];
    let calls = 0;
    let running = true;
    const loop = async (c, n) => {
      for (let i = 0; running; i++) {
        const [tool, args, want] = [
          ['tb:sleep', { ms: 20 }, 'slept 20 ms'],
          ['pc:echo', { text: `c${n}-${i}` }, `c${n}-${i}`],
          ['th:sleep', { ms: 20 }, 'slept 20 ms'],
        ][i % 3];
        const r = await c.callTool(tool, args);
        calls++;
        if (r.isError || textOf(r) !== want) failures.push({ tool, r });
      }
    };
    const load = clients.map((c, n) => loop(c, n));
    await pollUntil(() => calls >= 3 * CLIENTS, { what: 'the load to get going' });
    const before = toolboxes();
    assert.equal(before.length, 2 + CLIENTS, JSON.stringify(before));

    const reloaded = () => (gw.proc.stderrText.match(/reloaded .*: 0 upstreams kept, 3 started, 3 stopped/g) || []).length;
    let replaced = before;
    for (let i = 1; i <= RELOADS; i++) {
      const seen = calls;
      if (i === RELOADS) replaced = toolboxes();
      writeFileSync(gw.configPath, toYaml({ ...config(i), listen: { host: '127.0.0.1', path: '/mcp', port: 0 } }));
      gw.proc.child.kill('SIGHUP');
      await pollUntil(() => reloaded() === i, { timeoutMs: 60000, what: `reload ${i}` });
      // Calls went on across it.
      await pollUntil(() => calls >= seen + 3 * CLIENTS, { timeoutMs: 30000, what: `calls after reload ${i}` });
    }
    running = false;
    await Promise.all(load);
    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed`);
    assert.ok(calls > RELOADS * 3 * CLIENTS, `only ${calls} calls`);

    // Every replaced child is reaped; what runs is at most one tb, the pc listing one and one pc per client.
    assert.deepEqual(await waitGone(before, 30000), [], 'children of the first configuration are still there');
    assert.deepEqual(await waitGone(replaced, 30000), [], 'children replaced by the last reload are still there');
    assert.ok(toolboxes().length <= 2 + CLIENTS, JSON.stringify(toolboxes()));
    // A child that exits is reaped when its pidfd is seen, a moment later
    // on an I/O thread: the check is that no zombie stays, not that none
    // exists at one instant.
    const zombies = () => descendants(gw.proc.pid).filter((s) => s.state === 'Z');
    await pollUntil(() => zombies().length === 0, { timeoutMs: 30000, what: 'no zombie child' }).catch(() => {
      assert.fail(`zombie children stay unreaped: ${JSON.stringify(zombies())}`);
    });
    assert.doesNotMatch(gw.proc.stderrText, /is not connected|connection closed/);
    await Promise.all(clients.map((c) => c.close()));
    await gw.proc.stop();
    await th.proc.stop();
  }),
);

test(
  'a call in flight on a replaced server finishes on the old child while new calls go to the new one; past shutdown_grace_ms the old one is stopped',
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    const config = (timeout, grace) => ({ welcome: { strategy: 'none' }, shutdown_grace_ms: grace, servers: [toolboxStdio({ timeout_ms: timeout })] });
    const gw = await startGateway(config(60000, 60000), { label: 'mcpgw-reload-inflight' });
    const reload = async (cfg, n) => {
      writeFileSync(gw.configPath, toYaml({ ...cfg, listen: { host: '127.0.0.1', path: '/mcp', port: 0 } }));
      gw.proc.child.kill('SIGHUP');
      await pollUntil(() => (gw.proc.stderrText.match(/reloaded .*: 0 upstreams kept, 1 started, 1 stopped/g) || []).length === n, { timeoutMs: 60000, what: `reload ${n}` });
    };
    const c = await connectHttp(gw.url);
    const first = pidFromResult(await c.callTool('toolbox:pid'));
    const old = descendants(gw.proc.pid).find((s) => s.pid === first);

    // Within the grace period: the call finishes on the old child.
    const slow = c.callTool('toolbox:sleep', { ms: 3000 });
    await waitSleeping(first);
    await reload(config(50000, 60000), 1);
    const second = pidFromResult(await c.callTool('toolbox:pid'));
    assert.notEqual(second, first, 'new calls still go to the old child');
    const done = await slow;
    assert.equal(done.isError, undefined, JSON.stringify(done));
    assert.equal(textOf(done), 'slept 3000 ms');
    assert.deepEqual(await waitGone([old], 10000), [], 'the replaced child was not reaped');

    // Past the grace period (1 s): the old child is stopped and its call fails
    // naming the server and the reload's drain, not as a closed connection.
    const next = descendants(gw.proc.pid).find((s) => s.pid === second);
    const stuck = c.callTool('toolbox:sleep', { ms: 60000 });
    await waitSleeping(second);
    await reload(config(40000, 1000), 2);
    const cut = await stuck;
    assert.equal(cut.isError, true, JSON.stringify(cut));
    assert.equal(
      textOf(cut),
      "mcpgw: upstream 'toolbox' was replaced by a configuration reload, and this call was still running after shutdown_grace_ms (1000 ms); the call may have run there and was not sent again",
    );
    assert.deepEqual(await waitGone([next], 10000), [], 'the replaced child was not reaped');
    assert.notEqual(pidFromResult(await c.callTool('toolbox:pid')), second);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'past shutdown_grace_ms, every call in flight on a replaced HTTP server ends, on whichever worker it runs',
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    // Each worker files the exchanges it runs on its own: closing the
    // replaced connection must fire those of both. Six clients, each on a
    // connection of its own, are spread over the two workers.
    const CALLS = 6;
    const th = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http-cut' });
    const config = (timeout, grace) => ({
      welcome: { strategy: 'none' },
      shutdown_grace_ms: grace,
      servers: [httpServer('th', th.url, { timeout_ms: timeout })],
    });
    const gw = await startGateway(config(120000, 60000), { label: 'mcpgw-reload-cut-http', extraArgs: ['--threads', '2'] });
    const clients = await Promise.all(Array.from({ length: CALLS }, () => connectHttp(gw.url)));
    const calls = clients.map((c) => c.callTool('th:sleep', { ms: 120000 }));
    await pollUntil(() => threadsSleeping(th.proc.pid) === CALLS, { timeoutMs: 30000, what: `${CALLS} calls sleeping in the upstream` });

    writeFileSync(gw.configPath, toYaml({ ...config(110000, 1000), listen: { host: '127.0.0.1', path: '/mcp', port: 0 } }));
    gw.proc.child.kill('SIGHUP');
    await gw.proc.waitForLine('stderr', /reloaded .*: 0 upstreams kept, 1 started, 1 stopped/, 60000);
    // The calls would otherwise run for two minutes: this only stops a hung test.
    const cut = await withTimeout(Promise.all(calls), 60000, 'the calls in flight to end after the grace period');
    for (const r of cut) {
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), /^mcpgw: upstream 'th' was replaced by a configuration reload, and this call was still running after shutdown_grace_ms \(1000 ms\); the call may have run there/);
    }
    // The new connection serves.
    assert.match(textOf(await clients[0].callTool('th:sleep', { ms: 1 })), /slept 1 ms/);
    await Promise.all(clients.map((c) => c.close()));
    await gw.proc.stop();
    await th.proc.stop();
  }),
);

test(
  'a reload that changes a server while it is down: its tools stay listed, calls fail naming it (not as unknown tools), and work once it is back',
  withDiagnostics(async () => {
    let fx = await startFault(['--get', '405'], 'fx-1');
    const port = new URL(fx.url).port;
    const config = (timeout) => ({ welcome: { strategy: 'none' }, servers: [httpServer('fx', fx.url, { timeout_ms: timeout })] });
    const gw = await startGateway(config(20000), { label: 'mcpgw-reload-down' });
    const c = await connectHttp(gw.url);
    assert.equal(textOf(await c.callTool('fx:echo', { text: 'up' })), 'up');
    await fx.proc.stop({ signal: 'SIGKILL' });
    writeFileSync(gw.configPath, toYaml({ ...config(20001), listen: { host: '127.0.0.1', path: '/mcp', port: 0 } }));
    gw.proc.child.kill('SIGHUP');
    await gw.proc.waitForLine('stderr', /reloaded .*: 0 upstreams kept, 1 started, 1 stopped/, 60000);
    assert.ok((await c.listAllTools()).tools.some((t) => t.name === 'fx:echo'), 'the tools of the server went away');
    const down = await c.callTool('fx:echo', { text: 'down' });
    assert.equal(down.isError, true, JSON.stringify(down));
    assert.match(textOf(down), /^mcpgw: upstream 'fx' /);
    fx = await startFault(['--get', '405', '--port', port], 'fx-2');
    await pollUntil(async () => textOf(await c.callTool('fx:echo', { text: 'back' })) === 'back', { timeoutMs: 60000, what: 'fx back' });
    await c.close();
    await gw.proc.stop();
    await fx.proc.stop();
  }),
);
