// The gateway serves from the first moment, whatever its upstreams do:
// one answers initialize but never tools/list (stalled), one accepts and
// never answers (silent), one lists its tools only when the test says so
// (late), and a stdio toolbox is quick. While they connect: /healthz 200,
// /readyz 503 naming the ones still connecting, the toolbox's calls
// answered at once; initialize waits for the servers in their first
// attempt up to startup_wait_ms and then answers without the ones still
// trying, which are listed, with list_changed, once they connect; a call to
// a server that never comes up fails naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFault } from './fault.mjs';
import { connectHttp, httpGet, httpServer, openGetStream, requireBinaries, startGateway, textOf, toolboxStdio, withDiagnostics } from './harness.mjs';
import { srpc } from './stateless.mjs';

test(
  'one hung upstream stalls nothing: health at once, readiness naming what is connecting, calls served, initialize bounded by startup_wait_ms, a late server listed with list_changed',
  withDiagnostics(async () => {
    requireBinaries();
    const stalled = await startFault(['--stall', 'tools/list'], 'stalled');
    const silent = await startFault(['--silent'], 'silent');
    const late = await startFault(['--hold', 'tools/list'], 'late');
    const gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        startup_wait_ms: 3000,
        servers: [
          httpServer('stalled', stalled.url, { timeout_ms: 4000 }),
          httpServer('silent', silent.url, { timeout_ms: 4000 }),
          httpServer('late', late.url, { timeout_ms: 60000 }),
          toolboxStdio(),
        ],
      },
      { label: 'mcpgw-startup' },
    );
    assert.equal((await httpGet(`${gw.base}/healthz`)).status, 200);
    const readyz = await httpGet(`${gw.base}/readyz`);
    assert.equal(readyz.status, 503, readyz.text);
    const down = Object.fromEntries(JSON.parse(readyz.text).down.map((d) => [d.server, d.status]));
    // Nothing has told the late server to list its tools: it is connecting, surely.
    assert.equal(down.late, 'connecting', readyz.text);
    // A call of the toolbox is answered (waiting, if at all, for the toolbox alone).
    const early = await srpc(gw.url, 'tools/call', { name: 'toolbox:echo', arguments: { text: 'early' } });
    assert.equal(textOf(early.message.result), 'early');

    // initialize waits for the servers starting, up to startup_wait_ms: the
    // late one is still held then, and left out until it connects.
    const c = await connectHttp(gw.url);
    assert.match(gw.proc.stderrText, /initialize waits for the upstreams in their first connection attempt \(.*late/);
    const stream = await openGetStream(c);
    const names = async () => (await c.listAllTools()).tools.map((t) => t.name);
    assert.ok((await names()).includes('toolbox:echo'));
    assert.ok(!(await names()).some((n) => n.startsWith('late:')));
    const notYet = await c.callTool('late:echo', { text: 'too early' });
    assert.equal(notYet.isError, true, JSON.stringify(notYet));
    assert.match(textOf(notYet), /^mcpgw: upstream 'late' is still connecting/);

    late.proc.child.stdin.write('release\n');
    await stream.waitFor((m) => m.method === 'notifications/tools/list_changed', 20000);
    assert.ok((await names()).includes('late:echo'));
    assert.equal(textOf(await c.callTool('late:echo', { text: 'worth the wait' })), 'worth the wait');

    // Servers that never come up: the calls fail naming them.
    for (const name of ['stalled', 'silent']) {
      const r = await c.callTool(`${name}:echo`, { text: 'x' });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), new RegExp(`^mcpgw: upstream '${name}' (is not connected \\(.+\\)|is still connecting; tools/call ${name}:echo waited for it as long as startup_wait_ms and the call's deadline allow)$`));
    }
    await gw.proc.waitForLine('stderr', /start-up: every upstream tried once \(2 of 4 connected\)/, 60000);
    const after = JSON.parse((await httpGet(`${gw.base}/readyz`)).text);
    assert.deepEqual(after.down.map((d) => d.server).sort(), ['silent', 'stalled']);
    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'still' })), 'still');
    stream.close();
    await c.close();
    await gw.proc.stop();
  }),
);
