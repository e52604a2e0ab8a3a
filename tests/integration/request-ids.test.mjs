// Issue 22, item 13: a request id comes back exactly as the client wrote
// it. An integer beyond a double's precision, a fraction, an exponent or a
// negative zero was read as a double and written back as another number,
// so a client got its answer under an id it never sent (found by
// fuzz_jsonrpc). The answers are checked as raw text: JSON.parse itself
// would round those ids.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectHttp, pollUntil, requireBinaries, rpc, startGateway, startGatewayStdio, toolboxStdio, withDiagnostics } from './harness.mjs';

const BIG = '22222222222222222222222222222222222222222222222222222221';
const IDS = [BIG, '1.50', '1e2', '-0', '18446744073709551616', '0.1000000000000000055511151231257827'];
const config = { welcome: { strategy: 'none' }, servers: [toolboxStdio()] };
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway(config);
});

/** The raw answer's id text, as the gateway wrote it. */
function idText(raw) {
  const m = raw.match(/"id":(-?[0-9][0-9.eE+-]*|"[^"]*"|null)/);
  return m ? m[1] : undefined;
}

test(
  'over HTTP, every id comes back digit for digit: a ping, a tool call, an error, a JSON answer and an SSE one',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    for (const id of IDS) {
      const bodies = [
        `{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"toolbox:echo","arguments":{"text":"x"}}}`,
        `{"jsonrpc":"2.0","id":${id},"method":"no/such/method"}`,
        `{"jsonrpc":"2.0","id":${id},"method":7}`,
      ];
      for (const body of bodies) {
        for (const accept of ['application/json', 'text/event-stream']) {
          const res = await rpc(gw.url, body, { ...c.opts(), headers: { accept } });
          assert.equal(idText(res.text), id, `${accept} answer to ${body}: ${res.text}`);
        }
      }
    }
    await c.close();
  }),
);

test(
  'in a batch, each member keeps its own id',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { protocolVersion: '2025-03-26' });
    const body = `[${IDS.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`).join(',')}]`;
    const res = await rpc(gw.url, body, { ...c.opts(), headers: { accept: 'application/json' } });
    const seen = [...res.text.matchAll(/"id":([^,}]+)/g)].map((m) => m[1]);
    assert.deepEqual(seen.sort(), [...IDS].sort(), res.text);
    await c.close();
  }),
);

test(
  'two ids a double cannot tell apart are two calls, each answered under its own id',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const a = `${BIG.slice(0, -1)}1`;
    const b = `${BIG.slice(0, -1)}2`;
    const call = (id) =>
      rpc(gw.url, `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"toolbox:sleep","arguments":{"ms":300}}}`, { ...c.opts(), headers: { accept: 'application/json' } });
    const [ra, rb] = await Promise.all([call(a), call(b)]);
    assert.equal(idText(ra.text), a, ra.text);
    assert.equal(idText(rb.text), b, rb.text);
    await c.close();
  }),
);

test(
  'over stdio, every id comes back digit for digit',
  withDiagnostics(async () => {
    const { client } = startGatewayStdio(config);
    await client.initialize();
    for (const id of IDS) {
      const lines = client.lines.length;
      client.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"toolbox:echo","arguments":{"text":"${id}"}}}`);
      const line = await pollUntil(() => client.lines.slice(lines).find((l) => l.includes(`"text":"${id}"`) || l.includes('"error"')), { what: `the answer to id ${id}` });
      assert.equal(idText(line), id, line);
    }
  }),
);
