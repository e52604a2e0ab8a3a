// Upstream resilience through the real binary:
//   - an HTTP upstream restarted on its port answers the gateway's stale
//     session with 400 (the SDK README's way) or 404 (the spec's): the
//     gateway initializes anew, retries the call once and logs a warning;
//   - the circuit breaker (servers[].circuit) opens after consecutive
//     server failures (JSON-RPC internal errors, a crash, a timeout), fails
//     calls fast with an isError naming the server, lets one probe through
//     after open_ms and closes on its success; visible in /readyz, /metrics
//     and the log; what is about a call, not the server (isError results,
//     -32602, -32601), never opens it, whoever sends it;
//   - max_concurrency: 2 holds ten concurrent calls to two at a time.
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  REPO,
  TOOLBOX,
  Proc,
  connectHttp,
  httpGet,
  httpServer,
  pollUntil,
  requireBinaries,
  startGateway,
  startUpstreamHttp,
  textOf,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';

const FIXTURE = path.join(REPO, 'tests', 'integration', 'stale-session-fixture.mjs');

before(() => requireBinaries(TOOLBOX));

/** Starts the stale-session fixture (answering unknown sessions with `stale`) on `port` (0 = free). */
async function startFixture(stale, port = 0) {
  const proc = new Proc(`stale-${stale}`, process.execPath, [FIXTURE, '--stale', stale, '--port', String(port)]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/);
  return { proc, url: m[1], port: Number(m[2]) };
}

for (const [stale, status] of [
  ['400', 400],
  ['uninitialized', 400],
  ['404', 404],
]) {
  test(
    `an HTTP upstream restarted on its port answering the stale session with ${status} (${stale}): one re-initialize, the call retried, a warning`,
    withDiagnostics(async () => {
      let up = await startFixture(stale);
      const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('crm', up.url)] }, { label: `mcpgw-${stale}` });
      const c = await connectHttp(gw.url);
      assert.equal(textOf(await c.callTool('crm:whoami')), `pid ${up.proc.pid}`);
      await up.proc.stop({ signal: 'SIGKILL' });
      up = await startFixture(stale, up.port);
      // The first call after the restart already succeeds, on the new server.
      const r = await c.callTool('crm:whoami');
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(textOf(r), `pid ${up.proc.pid}`);
      assert.match(
        gw.proc.stderrText,
        new RegExp(`upstream crm: the server does not know session [0-9a-f-]{8} \\(HTTP ${status}: [^)]+\\); initializing a new session and retrying tools/call`),
      );
      // And so do the next ones, without another warning.
      assert.equal(textOf(await c.callTool('crm:whoami')), `pid ${up.proc.pid}`);
      assert.equal(gw.proc.stderrText.match(/initializing a new session and retrying/g).length, 1);
      await c.close();
      await gw.proc.stop();
      await up.proc.stop();
    }),
  );
}

test(
  'the circuit breaker opens after server failures (-32603 twice, a crash), fails fast naming the server, probes once after open_ms and closes',
  withDiagnostics(async () => {
    const gw = await startGateway(
      { welcome: { strategy: 'none' }, servers: [toolboxStdio({ circuit: { failures: 3, open_ms: 3000 } })] },
      { label: 'mcpgw-breaker' },
    );
    const c = await connectHttp(gw.url);
    const metric = async () => sample(parseMetrics((await httpGet(`${gw.base}/metrics`)).text), 'mcpgw_upstream_circuit_state', { server: 'toolbox' });
    const circuits = async () => JSON.parse((await httpGet(`${gw.base}/readyz`)).text).circuits;
    assert.deepEqual(await circuits(), []);
    assert.equal(await metric(), 0);
    // Two internal errors and a crash: three consecutive server failures.
    for (let i = 0; i < 2; i++) assert.equal((await c.request('tools/call', { name: 'toolbox:rpc_error', arguments: { code: -32603 } })).error.code, -32603);
    const crashed = await c.callTool('toolbox:crash');
    assert.equal(crashed.isError, true, JSON.stringify(crashed));
    await gw.proc.waitForLine('stderr', /upstream toolbox: circuit open: 3 consecutive calls failed; calls fail fast for 3000 ms/);
    // Open: calls fail at once, without reaching the server, naming it.
    const fast = await c.callTool('toolbox:echo', { text: 'x' });
    assert.equal(fast.isError, true);
    assert.match(textOf(fast), /^mcpgw: upstream 'toolbox' is failing: circuit open after 3 consecutive failures; next try in \d+ ms$/);
    assert.deepEqual(await circuits(), [{ server: 'toolbox', state: 'open' }]);
    assert.equal(await metric(), 1);
    const ready = await httpGet(`${gw.base}/readyz`);
    assert.equal(JSON.parse(ready.text).ready, ready.status === 200);
    // After open_ms one probe goes through; it succeeds (the toolbox was
    // restarted meanwhile) and closes the breaker.
    await pollUntil(async () => (await circuits())[0].state === 'half_open', { timeoutMs: 15000, what: 'the breaker to half-open' });
    assert.equal(await metric(), 2);
    await pollUntil(async () => JSON.parse((await httpGet(`${gw.base}/readyz`)).text).ready, { timeoutMs: 15000, what: 'the toolbox back' });
    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'probe' })), 'probe');
    await gw.proc.waitForLine('stderr', /upstream toolbox: circuit closed: the probe call succeeded/);
    assert.match(gw.proc.stderrText, /upstream toolbox: circuit half-open: probing with a call of echo/);
    assert.deepEqual(await circuits(), []);
    assert.equal(await metric(), 0);
    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'again' })), 'again');
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'a failed probe opens the breaker again; a call past timeout_ms counts as a failure',
  withDiagnostics(async () => {
    const gw = await startGateway(
      { welcome: { strategy: 'none' }, servers: [toolboxStdio({ timeout_ms: 300, circuit: { failures: 1, open_ms: 500 } })] },
      { label: 'mcpgw-breaker-probe' },
    );
    const c = await connectHttp(gw.url);
    const slow = await c.callTool('toolbox:sleep', { ms: 3000 });
    assert.match(textOf(slow), /^mcpgw: upstream 'toolbox' timed out after 300 ms$/);
    await gw.proc.waitForLine('stderr', /circuit open: 1 consecutive calls failed/);
    const probe = await pollUntil(
      async () => {
        const r = await c.request('tools/call', { name: 'toolbox:rpc_error', arguments: { code: -32603 } });
        return r.error?.message === 'deliberate failure' && r;
      },
      { timeoutMs: 15000, what: 'the probe call to reach the server' },
    );
    assert.equal(probe.error.code, -32603);
    const fast = await c.callTool('toolbox:echo', { text: 'x' });
    assert.match(textOf(fast), /^mcpgw: upstream 'toolbox' is failing: circuit open after 2 consecutive failures/);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'tool errors and refused arguments from one client never open the breaker: another client keeps calling',
  withDiagnostics(async () => {
    const gw = await startGateway(
      { welcome: { strategy: 'none' }, servers: [toolboxStdio({ circuit: { failures: 3, open_ms: 60000 } })] },
      { label: 'mcpgw-breaker-call-errors' },
    );
    const a = await connectHttp(gw.url);
    const b = await connectHttp(gw.url);
    for (let i = 0; i < 5; i++) {
      const r = await a.callTool('toolbox:fail', { message: `bad input ${i}` });
      assert.equal(r.isError, true);
      assert.equal(textOf(r), `bad input ${i}`);
      assert.equal((await a.request('tools/call', { name: 'toolbox:rpc_error', arguments: { code: -32602 } })).error.code, -32602);
      assert.equal((await a.request('tools/call', { name: 'toolbox:rpc_error', arguments: { code: -32601 } })).error.code, -32601);
      assert.equal((await a.request('tools/call', { name: 'toolbox:rpc_error', arguments: {} })).error.code, -32000);
    }
    assert.equal(textOf(await b.callTool('toolbox:echo', { text: 'still open to me' })), 'still open to me');
    assert.deepEqual(JSON.parse((await httpGet(`${gw.base}/readyz`)).text).circuits, []);
    assert.doesNotMatch(gw.proc.stderrText, /circuit open/);
    await a.close();
    await b.close();
    await gw.proc.stop();
  }),
);

test(
  'max_concurrency: 2 lets ten concurrent calls through two at a time, each within its timeout',
  withDiagnostics(async () => {
    const hbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
    const gw = await startGateway(
      { welcome: { strategy: 'none' }, servers: [httpServer('lim', hbox.url, { max_concurrency: 2, timeout_ms: 60000 })] },
      { label: 'mcpgw-limit' },
    );
    const clients = await Promise.all(Array.from({ length: 10 }, () => connectHttp(gw.url)));
    const running = Promise.all(clients.map((c) => c.callTool('lim:sleep', { ms: 400 })));
    // Meanwhile the calls beyond the limit are queued, visibly.
    await pollUntil(async () => sample(parseMetrics((await httpGet(`${gw.base}/metrics`)).text), 'mcpgw_tool_calls_queued', { server: 'lim' }) >= 1, {
      what: 'queued calls in /metrics',
    });
    const results = await running;
    const spans = results.map((r) => {
      assert.equal(r.isError, undefined, JSON.stringify(r));
      return r.structuredContent;
    });
    // At no moment did more than two calls run at the server.
    const events = spans.flatMap((s) => [
      [s.started_ms, 1],
      [s.ended_ms, -1],
    ]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let most = 0;
    for (const [, d] of events) {
      now += d;
      most = Math.max(most, now);
    }
    assert.equal(most, 2, JSON.stringify(spans));
    const m = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    assert.equal(sample(m, 'mcpgw_tool_calls_total', { server: 'lim', tool: 'sleep', outcome: 'ok' }), 10);
    assert.equal(sample(m, 'mcpgw_tool_calls_in_flight', { server: 'lim' }), 0);
    assert.equal(sample(m, 'mcpgw_tool_calls_queued', { server: 'lim' }), 0);
    await Promise.all(clients.map((c) => c.close()));
    await gw.proc.stop();
    await hbox.proc.stop();
  }),
);
