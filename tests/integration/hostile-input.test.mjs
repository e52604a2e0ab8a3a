// Hostile input never takes the gateway down: deeply nested JSON (which a
// recursive parser would overflow the stack on) is a parse error over HTTP
// and stdio, and the gateway keeps serving.
import net from 'node:net';
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

test(
  'a POST refused before its body is read (415) leaves the keep-alive connection usable',
  withDiagnostics(async () => {
    const sock = net.connect(gw.port, '127.0.0.1');
    await new Promise((res, rej) => sock.once('connect', res).once('error', rej));
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      got += d;
    });
    const body = 'x'.repeat(5000);
    // One request at a time: the second only once the first is answered.
    sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const answers = () => (got.match(/HTTP\/1\.1 \d+/g) || []).length;
    await pollUntil(() => answers() >= 1, { timeoutMs: 10000, intervalMs: 10, what: 'the 415 answer' });
    sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\n\r\n`);
    await pollUntil(() => answers() >= 2, { timeoutMs: 10000, intervalMs: 10, what: 'the /healthz answer on the same connection' });
    sock.destroy();
    const statuses = got.match(/HTTP\/1\.1 (\d+)/g).map((x) => Number(x.split(' ')[1]));
    assert.deepEqual(statuses, [415, 200], got);
  }),
);
