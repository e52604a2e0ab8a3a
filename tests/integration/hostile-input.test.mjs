// Hostile input never takes the gateway down: deeply nested JSON (which a
// recursive parser would overflow the stack on) is a parse error over HTTP
// and stdio, and the gateway keeps serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bankStdio, connectHttp, pollUntil, rawHttp, requireBinaries, startGateway, startGatewayStdio, withDiagnostics } from './harness.mjs';

let gw;
before(async () => {
  requireBinaries();
  gw = await startGateway({ listen: { max_body_bytes: 4000000 }, servers: [bankStdio()] });
});
after(async () => {
  await gw?.proc.stop();
});

test(
  'a body nested 200,000 levels deep is -32700 and the gateway keeps serving',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await rawHttp(gw.url, {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': c.session },
      body: '['.repeat(200000),
    });
    assert.equal(res.status, 400, res.body);
    assert.equal(JSON.parse(res.body).error.code, -32700);
    assert.match(JSON.parse(res.body).error.message, /nested deeper/);
    const r = await c.callTool('bank:list_accounts');
    assert.ok(r.structuredContent.accounts.length > 0);
  }),
);

test(
  'over stdio, a deeply nested line is -32700 and the next request is answered',
  withDiagnostics(async () => {
    const s = startGatewayStdio({ servers: [bankStdio()] });
    try {
      await s.client.initialize();
      s.client.write('{"a":' + '['.repeat(100000));
      await pollUntil(() => s.client.messages.some((m) => m.error && m.error.code === -32700), {
        timeoutMs: 10000,
        intervalMs: 10,
        what: 'the -32700 answer',
      });
      const err = s.client.messages.find((m) => m.error && m.error.code === -32700);
      assert.match(err.error.message, /nested deeper/);
      const ping = await s.client.request('ping', {});
      assert.deepEqual(ping.result, {});
    } finally {
      s.client.closeStdin();
      assert.deepEqual(await s.proc.waitExit(10000), { code: 0, signal: null });
    }
  }),
);
