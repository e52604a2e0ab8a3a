// Issue 22, item 2: a finished result is never lost to notifications. An
// upstream sends a burst of progress (5,000 notifications, 5 MB) before
// its answer; a client that reads its response stream late, or one that
// reads as fast as it can, still gets the answer, every time: a call's
// progress takes one place in the stream's queue (the latest wins), and
// the final answer always goes out. Over HTTP (SSE) and stdio.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { REPO, SseParser, connectHttp, pollUntil, requireBinaries, startGateway, startGatewayStdio, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/hostile-fixture.mjs');
const COUNT = 5000;
const config = { welcome: { strategy: 'none' }, servers: [{ name: 'hs', transport: 'stdio', command: process.execPath, args: [FIXTURE], timeout_ms: 120000 }] };
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway(config);
});

const burst = (id, token) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hs:progress_burst', arguments: { count: COUNT, size: 1000 }, _meta: { progressToken: token } } });
/** How many calls of the burst tool the gateway has finished (its debug log line per call). */
const finished = (proc) => (proc.stderrText.match(/call hs:progress_burst .* ms \w+/g) || []).length;

/** The messages of one answer: progress (increasing, ending with the last one sent), then the result. */
function checkAnswer(messages, token, id) {
  const result = messages.find((m) => m.id === id);
  assert.ok(result, `no answer among ${messages.length} messages`);
  assert.equal(result.result?.content?.[0]?.text, `burst done after ${COUNT}`, JSON.stringify(result));
  assert.equal(messages.at(-1), result, 'the answer comes last');
  const progress = messages.filter((m) => m.method === 'notifications/progress');
  assert.ok(progress.length >= 1 && progress.length <= COUNT, `${progress.length} progress notifications`);
  for (const p of progress) assert.equal(p.params.progressToken, token);
  const values = progress.map((p) => p.params.progress);
  for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `progress went back: ${values[i - 1]} then ${values[i]}`);
  // The newest progress is never the one dropped.
  assert.equal(values.at(-1), COUNT);
  return progress.length;
}

/**
 * POSTs `body` and reads nothing until `ready()` holds (the client is
 * late: the whole burst and the answer reach the gateway first), then
 * everything. Returns the SSE messages.
 */
function postReadLate(client, body, ready) {
  const u = new URL(gw.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(payload),
          'mcp-session-id': client.session,
          'mcp-protocol-version': client.protocolVersion,
        },
      },
      (res) => {
        res.pause();
        const parser = new SseParser();
        const messages = [];
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          for (const ev of parser.push(chunk)) if (ev.data !== undefined) messages.push(JSON.parse(ev.data));
        });
        res.on('end', () => resolve({ status: res.statusCode, messages }));
        res.on('error', reject);
        pollUntil(ready, { timeoutMs: 60000, what: 'the burst to reach the gateway' }).then(() => res.resume(), reject);
      },
    );
    req.setTimeout(90000, () => req.destroy(new Error('no answer within 90 s')));
    req.on('error', reject);
    req.end(payload);
  });
}

test(
  'a client that reads its stream late gets the answer after a burst of 5,000 progress notifications (5 MB)',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    for (let n = 0; n < 3; n++) {
      const before = finished(gw.proc);
      const res = await postReadLate(c, burst(100 + n, `late-${n}`), () => finished(gw.proc) > before);
      assert.equal(res.status, 200);
      // How many get through depends on the kernel's socket buffers; the
      // answer must, whatever they hold.
      checkAnswer(res.messages, `late-${n}`, 100 + n);
    }
    assert.doesNotMatch(gw.proc.stderrText, /call hs:progress_burst .* cancelled/);
    await c.close();
  }),
);

test(
  'a client that reads as fast as it can gets the answer every time',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    for (let n = 0; n < 10; n++) {
      const res = await c.send('tools/call', burst(undefined, `fast-${n}`).params, { timeoutMs: 90000 });
      assert.equal(res.status, 200);
      checkAnswer(res.messages, `fast-${n}`, res.message?.id ?? -1);
    }
    await c.close();
  }),
);

test(
  'over stdio, a client that reads late gets the answer too',
  withDiagnostics(async () => {
    const { proc, client } = startGatewayStdio(config);
    await client.initialize();
    proc.child.stdout.pause();
    const before = finished(proc);
    const answer = client.request('tools/call', burst(undefined, 'stdio-late').params, 90000);
    await pollUntil(() => finished(proc) > before, { timeoutMs: 60000, what: 'the burst to reach the gateway' });
    proc.child.stdout.resume();
    const result = await answer;
    assert.equal(result.result?.content?.[0]?.text, `burst done after ${COUNT}`);
    const progress = client.messages.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.length >= 1 && progress.length < COUNT, `${progress.length} progress lines for a client that was not reading`);
    assert.equal(progress.at(-1).params.progress, COUNT);
  }),
);
