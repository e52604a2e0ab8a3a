// The live catalog with a Streamable HTTP upstream: server-everything served
// over Streamable HTTP sends its notifications that belong to no request
// (resources/list_changed, resources/updated) on the session's GET stream, as
// the transport prescribes. The gateway must receive them like it does from
// a stdio upstream, and pass them on to its clients.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EVERYTHING, Proc, closedPort, connectHttp, openGetStream, requireBinaries, startGateway, withDiagnostics } from '../integration/harness.mjs';

let gw;

before(async () => {
  requireBinaries();
  const port = await closedPort();
  const ev = new Proc('everything-http', process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) } });
  await ev.waitForLine('stderr', /listening on port \d+/);
  gw = await startGateway({ servers: [{ name: 'evh', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, timeout_ms: 20000 }] });
});

test(
  'HTTP upstream (official SDK server, SSE answers): tools, resources and prompts are proxied like from a stdio upstream',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    // The official SDK server answers initialize on an SSE stream, with its
    // Mcp-Session-Id in the response headers; every later request must carry it.
    const { tools } = await c.listAllTools();
    assert.ok(tools.some((t) => t.name === 'evh:echo'), `no tools from the HTTP upstream: ${JSON.stringify(tools.map((t) => t.name))}`);
    const echo = await c.callTool('evh:echo', { message: 'over http' });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: over http' }]);
    const { resources } = await c.result('resources/list', {});
    assert.ok(resources.some((r) => r.uri === 'evh+demo://resource/static/document/architecture.md'), JSON.stringify(resources.map((r) => r.uri)));
    const read = await c.result('resources/read', { uri: 'evh+demo://resource/dynamic/text/3' });
    assert.equal(read.contents[0].uri, 'evh+demo://resource/dynamic/text/3');
    const got = await c.result('prompts/get', { name: 'evh:args-prompt', arguments: { city: 'Oslo' } });
    assert.match(JSON.stringify(got.messages), /Oslo/);
    await c.close();
  }),
);

test(
  'HTTP upstream: its resources/list_changed (sent on its GET stream) reaches the gateway clients and the list changes',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    assert.equal(stream.status, 200);
    const data = `data:text/plain;base64,${Buffer.from('over http\n').toString('base64')}`;
    const r = await c.callTool('evh:gzip-file-as-resource', { name: 'http-upstream.gz', data });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    const exposed = 'evh+demo://resource/session/http-upstream.gz';
    // The resource exists upstream right away (reading it by URI works) ...
    const read = await c.request('resources/read', { uri: exposed });
    assert.equal(read.result?.contents?.[0]?.uri, exposed, JSON.stringify(read));
    // ... and the upstream announced the change: the gateway must pass it on and relist.
    await stream.waitFor((m) => m.method === 'notifications/resources/list_changed', 3000);
    const { resources } = await c.result('resources/list', {});
    assert.ok(resources.some((x) => x.uri === exposed), `${exposed} not listed`);
    stream.close();
    await c.close();
  }),
);

test(
  'HTTP upstream: resources/updated for a subscribed resource (sent on its GET stream) reaches the subscriber',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    const uri = 'evh+demo://resource/static/document/features.md';
    assert.deepEqual(await c.result('resources/subscribe', { uri }), {});
    // server-everything sends one update per subscribed URI at once when this is switched on.
    await c.callTool('evh:toggle-subscriber-updates');
    try {
      await stream.waitFor((m) => m.method === 'notifications/resources/updated' && m.params?.uri === uri, 3000);
    } finally {
      await c.callTool('evh:toggle-subscriber-updates');
      stream.close();
      await c.close();
    }
  }),
);
