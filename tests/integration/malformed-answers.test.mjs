// Issue 22, item 3: an upstream's answer that carries the call's id but is
// malformed (a lone surrogate, 1e400, an error that is a string, both
// result and error, no "jsonrpc") fails that call at once, over stdio as
// over HTTP (a JSON body, or an event on an SSE stream that stays open),
// with an error naming the upstream and what was wrong. The servers'
// timeout_ms is ten minutes: a call that waited it out would outlast the
// test's own deadline (rpc's 20 s), which only stops a hung test.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Proc, REPO, connectHttp, requireBinaries, startGateway, textOf, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/hostile-fixture.mjs');
const LONG = 600000;
const SHAPES = {
  surrogate: /not JSON \(.*surrogate/i,
  huge_number: /not JSON \(.*(too big|number)/i,
  string_error: /"error" must be an object/,
  both: /both "result" and "error"/,
  no_jsonrpc: /"jsonrpc" must be "2\.0"/,
};
let gw;
let httpUpstream;

before(async () => {
  requireBinaries();
  httpUpstream = new Proc('hostile-http', process.execPath, [FIXTURE, '--http']);
  const m = await httpUpstream.waitForLine('stdout', /^listening (http:\S+)/);
  gw = await startGateway({
    servers: [
      { name: 'hs', transport: 'stdio', command: process.execPath, args: [FIXTURE], timeout_ms: LONG, circuit: { failures: 0 } },
      { name: 'hh', transport: 'http', url: m[1], timeout_ms: LONG, circuit: { failures: 0 } },
    ],
  });
});

for (const [shape, why] of Object.entries(SHAPES)) {
  for (const [server, extra] of [['hs', {}], ['hh', {}], ['hh', { sse: true }]]) {
    const over = server === 'hs' ? 'stdio' : extra.sse ? 'an HTTP SSE stream' : 'an HTTP JSON body';
    test(
      `a ${shape} answer over ${over} fails the call at once, naming the upstream and the fault`,
      withDiagnostics(async () => {
        const c = await connectHttp(gw.url);
        const res = await c.send('tools/call', { name: `${server}:malformed`, arguments: { shape, ...extra } });
        const msg = res.message;
        assert.ok(msg, `no answer: ${res.text}`);
        assert.equal(msg.error, undefined, JSON.stringify(msg));
        assert.equal(msg.result.isError, true, JSON.stringify(msg));
        const text = textOf(msg.result);
        assert.match(text, new RegExp(`upstream '${server}'.*malformed answer`), text);
        assert.match(text, why, text);
        // The connection goes on: the next call is answered.
        const next = await c.callTool(`${server}:malformed`, { shape: 'nonexistent' });
        assert.match(textOf(next), /no shape nonexistent/);
        await c.close();
      }),
    );
  }
}
