// Issue 22, item 4: ill-formed UTF-8 never crosses the gateway. An
// upstream's stray bytes reached the client unchanged (a strict decoder
// rejects the whole answer), and a client's went upstream the same way.
// Every ill-formed sequence becomes U+FFFD, in both directions, over HTTP
// (JSON and SSE answers) and stdio; the bytes are checked raw, with a
// strict decoder.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, connectHttp, pollUntil, requireBinaries, startGateway, startGatewayStdio, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/hostile-fixture.mjs');
const strict = new TextDecoder('utf-8', { fatal: true });
const config = { welcome: { strategy: 'none' }, servers: [{ name: 'hs', transport: 'stdio', command: process.execPath, args: [FIXTURE] }] };
// "a", 0xFF (no such byte), "b", 0xC3 (cut short), "c", 0xED 0xA0 0xBD (a surrogate as CESU-8)
const BAD = Buffer.concat([Buffer.from('a'), Buffer.from([0xff]), Buffer.from('b'), Buffer.from([0xc3]), Buffer.from('c'), Buffer.from([0xed, 0xa0, 0xbd])]);
const BAD_REPAIRED = 'a\ufffdb\ufffdc\ufffd\ufffd\ufffd';
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway(config);
});

/** A tools/call body with `text` as raw bytes in its arguments. */
function callWithBytes(id, name, bytes) {
  return Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"text":"`), bytes, Buffer.from('"}}}')]);
}

/** POSTs raw bytes; returns the answer's raw bytes and status. */
async function postBytes(client, bytes, accept) {
  const headers = { 'content-type': 'application/json', accept, 'mcp-session-id': client.session, 'mcp-protocol-version': client.protocolVersion };
  const res = await fetch(gw.url, { method: 'POST', headers, body: bytes, signal: AbortSignal.timeout(20000) });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The JSON-RPC answer in a raw body (JSON, or the last SSE event), decoded strictly. */
function answerOf(bytes) {
  const text = strict.decode(bytes); // throws on ill-formed UTF-8
  const data = text.startsWith('{') ? [text] : [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]);
  return JSON.parse(data.at(-1));
}

test(
  "an upstream's ill-formed bytes reach an HTTP client as U+FFFD, in a JSON and an SSE answer",
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    for (const accept of ['application/json', 'text/event-stream']) {
      const res = await postBytes(c, Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hs:bad_utf8","arguments":{}}}'), accept);
      assert.equal(res.status, 200);
      const answer = answerOf(res.bytes);
      assert.equal(answer.result.content[0].text, 'caf\ufffd \ufffd end', JSON.stringify(answer));
    }
    await c.close();
  }),
);

test(
  "a client's ill-formed bytes reach the upstream as U+FFFD, and its error messages quoting them are well formed",
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const res = await postBytes(c, callWithBytes(2, 'hs:inspect', BAD), 'application/json');
    const answer = answerOf(res.bytes);
    assert.deepEqual(answer.result.structuredContent, { wellFormed: true, hex: Buffer.from(BAD_REPAIRED).toString('hex') }, JSON.stringify(answer));
    // An unknown tool whose name carries the bytes: the error quotes it, repaired.
    const unknown = await postBytes(c, Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hs:'), BAD, Buffer.from('"}}')]), 'application/json');
    assert.equal(answerOf(unknown.bytes).error.message, `Unknown tool: hs:${BAD_REPAIRED}`);
    await c.close();
  }),
);

test(
  'over stdio, both directions too',
  withDiagnostics(async () => {
    const { proc, client } = startGatewayStdio(config, { rawStdout: true });
    await client.initialize();
    proc.child.stdin.write(Buffer.concat([callWithBytes(7001, 'hs:inspect', BAD), Buffer.from('\n')]));
    proc.child.stdin.write('{"jsonrpc":"2.0","id":7002,"method":"tools/call","params":{"name":"hs:bad_utf8","arguments":{}}}\n');
    const answers = await pollUntil(
      () => {
        const all = Buffer.concat(proc.stdoutBytes);
        const whole = all.subarray(0, all.lastIndexOf(0x0a) + 1); // complete lines only
        const lines = strict.decode(whole).split('\n').filter(Boolean).map((l) => JSON.parse(l));
        const a = lines.find((m) => m.id === 7001);
        const b = lines.find((m) => m.id === 7002);
        return a && b ? [a, b] : false;
      },
      { what: 'both answers' },
    );
    assert.deepEqual(answers[0].result.structuredContent, { wellFormed: true, hex: Buffer.from(BAD_REPAIRED).toString('hex') });
    assert.equal(answers[1].result.content[0].text, 'caf\ufffd \ufffd end');
  }),
);
