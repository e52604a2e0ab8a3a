// Progress through the gateway: server-everything (stdio upstream) emits
// notifications/progress for a call that carries _meta.progressToken; the
// client gets them on the POST's SSE stream with its own token, before the
// result. Without a token the answer is plain JSON.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EVERYTHING, connectHttp, requireBinaries, startGateway, textOf, withDiagnostics } from './harness.mjs';

const everything = { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 20000 };
const TOOL = 'everything:trigger-long-running-operation';
const done = (duration) => `Long running operation completed. Duration: ${duration} seconds, Steps: 3.`;
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({ servers: [everything] });
});

/** Checks an SSE answer: only progress notifications for `token`, increasing, then the result. */
function checkProgressStream(res, token, duration) {
  assert.equal(res.status, 200, res.text);
  assert.match(res.contentType, /^text\/event-stream/, `content-type ${res.contentType}`);
  const last = res.messages.at(-1);
  assert.equal(last, res.message, `the response is not the last message: ${res.text}`);
  assert.equal(last.error, undefined, JSON.stringify(last));
  assert.deepEqual(last.result.content, [{ type: 'text', text: done(duration) }]);
  const progress = res.messages.slice(0, -1);
  assert.ok(progress.length >= 1, `no progress before the result: ${res.text}`);
  for (const m of progress) {
    assert.equal(m.method, 'notifications/progress', JSON.stringify(m));
    assert.equal(m.params.progressToken, token, `token ${JSON.stringify(m.params.progressToken)} (gateway-internal?) in ${JSON.stringify(m)}`);
    assert.equal(m.params.total, 3);
  }
  const values = progress.map((m) => m.params.progress);
  for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `progress not increasing: ${values}`);
  assert.deepEqual(values, [1, 2, 3]);
}

test(
  'tools/call with _meta.progressToken "tok-1": SSE stream with progress for "tok-1", then the result',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await c.send('tools/call', { name: TOOL, arguments: { duration: 1, steps: 3 }, _meta: { progressToken: 'tok-1' } });
    checkProgressStream(res, 'tok-1', 1);
    await c.close();
  }),
);

test(
  'a numeric progressToken comes back as the same number',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await c.send('tools/call', { name: TOOL, arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 4242 } });
    checkProgressStream(res, 4242, 0.3);
    await c.close();
  }),
);

test(
  'two sessions using the same token concurrently each get only their own progress',
  withDiagnostics(async () => {
    const [a, b] = await Promise.all([connectHttp(gw.url), connectHttp(gw.url)]);
    const params = { name: TOOL, arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 'tok-1' } };
    const [ra, rb] = await Promise.all([a.send('tools/call', params), b.send('tools/call', params)]);
    checkProgressStream(ra, 'tok-1', 0.3);
    checkProgressStream(rb, 'tok-1', 0.3);
    await Promise.all([a.close(), b.close()]);
  }),
);

test(
  'without a progressToken the same call answers as plain JSON',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await c.send('tools/call', { name: TOOL, arguments: { duration: 1, steps: 3 } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.contentType, /^application\/json/, `content-type ${res.contentType}: ${res.text}`);
    assert.equal(res.messages.length, 1, res.text);
    assert.equal(textOf(res.message.result), done(1));
    await c.close();
  }),
);
