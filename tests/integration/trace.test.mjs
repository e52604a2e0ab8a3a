// W3C trace context through the real binary: a client's traceparent (HTTP
// header, or `_meta.traceparent`) is continued on every upstream request of
// the call, as a `traceparent` header to an HTTP upstream and as
// `_meta.traceparent` to a stdio one, each a child span (same trace id, new
// span id); a call without one (or with an invalid one) starts a fresh trace.
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  REPO,
  TOOLBOX,
  connectHttp,
  httpServer,
  pollUntil,
  readJsonLines,
  requireBinaries,
  startGateway,
  startTap,
  startUpstreamHttp,
  tempDir,
  withDiagnostics,
} from './harness.mjs';

const STDIO_TAP = path.join(REPO, 'tests', 'interop', 'stdio-tap.mjs');
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const TP = `00-${TRACE}-${SPAN}-01`;
const TP_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

let gw;
let tap; // in front of the HTTP toolbox
let stdioLog; // what the gateway wrote to the stdio toolbox

before(async () => {
  requireBinaries(TOOLBOX);
  const dir = tempDir('mcpgw-trace-');
  stdioLog = path.join(dir, 'stdio.jsonl');
  const hbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  tap = await startTap(hbox.url);
  gw = await startGateway({
    welcome: { strategy: 'none' },
    servers: [
      { name: 'sbox', transport: 'stdio', command: process.execPath, args: [STDIO_TAP, stdioLog, '--', TOOLBOX, '--chain-tool', 'chain'] },
      httpServer('hbox', tap.url),
    ],
  });
});

/** The tools/call requests the stdio toolbox got whose arguments.text is `text`. */
function stdioCalls(text) {
  return readJsonLines(stdioLog).filter((m) => m.method === 'tools/call' && m.params?.arguments?.text === text);
}

test(
  'an HTTP upstream gets a child traceparent header of the client header, and no _meta.traceparent',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    await c.callTool('hbox:echo', { text: 'traced-http' }, { headers: { traceparent: TP } });
    const body = await tap.waitFor((b) => b.method === 'tools/call' && b.params?.arguments?.text === 'traced-http');
    const m = tap.headersOf(body).traceparent?.match(TP_RE);
    assert.ok(m, JSON.stringify(tap.headersOf(body)));
    assert.equal(m[1], TRACE);
    assert.notEqual(m[2], SPAN, 'a child span, not the client span');
    assert.equal(body.params._meta?.traceparent, undefined, JSON.stringify(body.params));
    await c.close();
  }),
);

test(
  'a stdio upstream gets the child as _meta.traceparent; _meta.traceparent from the client works like the header',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    await c.callTool('sbox:echo', { text: 'traced-stdio' }, { headers: { traceparent: TP } });
    await c.result('tools/call', { name: 'sbox:echo', arguments: { text: 'traced-meta' }, _meta: { traceparent: TP } });
    const [viaHeader] = await pollUntil(() => stdioCalls('traced-stdio').length && stdioCalls('traced-stdio'), { what: 'the stdio call' });
    const [viaMeta] = await pollUntil(() => stdioCalls('traced-meta').length && stdioCalls('traced-meta'), { what: 'the stdio call' });
    for (const call of [viaHeader, viaMeta]) {
      const m = call.params._meta?.traceparent?.match(TP_RE);
      assert.ok(m, JSON.stringify(call.params));
      assert.equal(m[1], TRACE);
      assert.notEqual(m[2], SPAN);
    }
    await c.close();
  }),
);

test(
  'every hop of a chain carries a child span of the same trace',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    await c.callTool('sbox:chain', { text: 'hop-0', next: 'echo', next_arguments: { text: 'hop-1' } }, { headers: { traceparent: TP } });
    const [first] = await pollUntil(() => stdioCalls('hop-0').length && stdioCalls('hop-0'), { what: 'the first hop' });
    const [second] = await pollUntil(() => stdioCalls('hop-1').length && stdioCalls('hop-1'), { what: 'the second hop' });
    const a = first.params._meta.traceparent.match(TP_RE);
    const b = second.params._meta.traceparent.match(TP_RE);
    assert.equal(a[1], TRACE);
    assert.equal(b[1], TRACE);
    assert.notEqual(a[2], b[2]);
    await c.close();
  }),
);

test(
  'without a traceparent, or with an invalid one, each call starts a fresh trace',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    await c.callTool('hbox:echo', { text: 'fresh-1' });
    await c.callTool('hbox:echo', { text: 'fresh-2' }, { headers: { traceparent: '00-zz-not-a-traceparent' } });
    await c.callTool('sbox:echo', { text: 'fresh-3' }, { headers: { traceparent: `00-${'0'.repeat(32)}-${SPAN}-01` } });
    const ids = [];
    for (const text of ['fresh-1', 'fresh-2']) {
      const body = await tap.waitFor((b) => b.method === 'tools/call' && b.params?.arguments?.text === text);
      const m = tap.headersOf(body).traceparent?.match(TP_RE);
      assert.ok(m, `${text}: ${JSON.stringify(tap.headersOf(body))}`);
      ids.push(m[1]);
    }
    const [s] = await pollUntil(() => stdioCalls('fresh-3').length && stdioCalls('fresh-3'), { what: 'the stdio call' });
    const m = s.params._meta.traceparent.match(TP_RE);
    assert.ok(m, JSON.stringify(s.params));
    ids.push(m[1]);
    assert.equal(new Set([...ids, TRACE, '0'.repeat(32)]).size, 5, ids.join(' '));
    await c.close();
  }),
);
