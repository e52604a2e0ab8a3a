// /metrics tells the truth through an upstream crash (real binary, the
// toolbox over Streamable HTTP): before, calls are counted per server, tool
// and outcome and mcpgw_upstream_up is 1; the `crash` tool kills the
// server: mcpgw_upstream_up drops to 0 at once (no call needed) and stays
// 0 while it is down, calls meanwhile count as errors; restarted on its
// port, the upstream comes back by itself and mcpgw_upstream_up is 1 again.
// Also: in-flight calls, open streams and suspended calls are gauges.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
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
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';

before(() => requireBinaries(TOOLBOX));

test(
  'metrics before, during and after an upstream crash',
  withDiagnostics(async () => {
    // With a GET stream: the gateway holds one open, so it sees the server go.
    let box = await startUpstreamHttp(TOOLBOX, ['--get-stream', '1'], { label: 'toolbox-http' });
    const port = Number(new URL(box.url).port);
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('box', box.url)] });
    const metrics = async () => parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    const calls = (m, labels) => sample(m, 'mcpgw_tool_calls_total', { server: 'box', ...labels });

    // Before.
    const c = await connectHttp(gw.url);
    const stream = await fetch(gw.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': c.session, 'mcp-protocol-version': c.protocolVersion } });
    assert.equal(stream.status, 200);
    for (let i = 0; i < 2; i++) await c.callTool('box:echo', { text: `b${i}` });
    let m = await metrics();
    assert.equal(sample(m, 'mcpgw_upstream_up', { server: 'box' }), 1);
    assert.equal(calls(m, { tool: 'echo', via: 'call', outcome: 'ok' }), 2);
    assert.equal(sample(m, 'mcpgw_tool_calls_in_flight', { server: 'box' }), 0);
    assert.equal(sample(m, 'mcpgw_open_streams'), 1);
    assert.equal(sample(m, 'mcpgw_suspended_calls'), 0);

    // During: a call in flight is a gauge (a sleep long enough for a starved
    // test to see it); then the crash.
    const slow = c.callTool('box:sleep', { ms: 4000 });
    await pollUntil(async () => sample(await metrics(), 'mcpgw_tool_calls_in_flight', { server: 'box' }) === 1, { what: 'one call in flight' });
    await slow;
    const crashed = await c.callTool('box:crash');
    assert.equal(crashed.isError, true, JSON.stringify(crashed));
    await box.proc.waitExit();
    // Down at once, without another call to notice it.
    await pollUntil(async () => sample(await metrics(), 'mcpgw_upstream_up', { server: 'box' }) === 0, { what: 'mcpgw_upstream_up 0' });
    const down = await c.callTool('box:echo', { text: 'while down' });
    assert.equal(down.isError, true);
    assert.match(textOf(down), /^mcpgw: upstream 'box' /);
    m = await metrics();
    assert.equal(sample(m, 'mcpgw_upstream_up', { server: 'box' }), 0);
    assert.equal(calls(m, { tool: 'crash', outcome: 'error' }), 1);
    assert.equal(calls(m, { tool: 'echo', outcome: 'error' }), 1);
    assert.equal(calls(m, { tool: 'sleep', outcome: 'ok' }), 1);
    assert.equal((await httpGet(`${gw.base}/readyz`)).status, 503);

    // After: the server comes back on its port; the gateway reconnects by itself.
    box = { proc: new Proc('toolbox-http-2', TOOLBOX, ['--http', String(port), '--get-stream', '1']) };
    await box.proc.waitForLine('stdout', /^listening http/);
    await pollUntil(async () => sample(await metrics(), 'mcpgw_upstream_up', { server: 'box' }) === 1, { timeoutMs: 40000, what: 'mcpgw_upstream_up back to 1' });
    assert.equal(textOf(await c.callTool('box:echo', { text: 'after' })), 'after');
    m = await metrics();
    assert.equal(calls(m, { tool: 'echo', outcome: 'ok' }), 3);
    assert.equal(sample(m, 'mcpgw_tool_calls_in_flight', { server: 'box' }), 0);
    assert.equal((await httpGet(`${gw.base}/readyz`)).status, 200);
    await stream.body?.cancel();
    await c.close();
    await gw.proc.stop();
    await box.proc.stop();
  }),
);
