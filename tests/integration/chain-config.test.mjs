// The `chain` configuration keys: max_depth (hops after the client's own
// call), merge (all | last) and resolve (false = nextTool passed through).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chainArgs, chainTrace, connectHttp, requireBinaries, startGateway, textsOf, toolboxStdio, withDiagnostics } from './harness.mjs';

async function gatewayWith(chain) {
  requireBinaries();
  return startGateway({ chain, welcome: { strategy: 'none' }, servers: [toolboxStdio({ args: ['--chain-tool', 'chain'] })] });
}

async function call(c, name, args) {
  const m = await c.request('tools/call', { name, arguments: args });
  assert.equal(m.error, undefined, `JSON-RPC error for ${name}: ${JSON.stringify(m)}`);
  return m.result;
}

test(
  'chain.max_depth: 2 — two hops are followed, a third is refused with "depth"',
  withDiagnostics(async () => {
    const gw = await gatewayWith({ max_depth: 2 });
    const c = await connectHttp(gw.url);
    const ok = await call(c, 'toolbox:chain', chainArgs(['a', 'b'], { tool: 'echo', arguments: { text: 'c' } }));
    assert.ok(!ok.isError, JSON.stringify(ok));
    assert.deepEqual(textsOf(ok), ['a', 'b', 'c']);
    assert.equal(chainTrace(ok).length, 3);

    const r = await call(c, 'toolbox:chain', chainArgs(['a', 'b', 'c'], { tool: 'echo', arguments: { text: 'd' } }));
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.deepEqual(textsOf(r).slice(0, -1), ['a', 'b', 'c']);
    const refusal = r.content.at(-1).text;
    assert.match(refusal, /depth/i, refusal);
    assert.ok(refusal.includes('echo'), `refusal does not name the hop's tool: ${refusal}`);
    const trace = chainTrace(r);
    assert.equal(trace.length, 4, JSON.stringify(trace));
    assert.equal(trace.at(-1).isError, true);
    assert.ok(!JSON.stringify(r).includes('"nextTool"'));
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'chain.merge: last — only the last call\'s content; its structuredContent; the whole trace',
  withDiagnostics(async () => {
    const gw = await gatewayWith({ merge: 'last' });
    const c = await connectHttp(gw.url);
    const r = await call(c, 'toolbox:chain', chainArgs(['a', 'b', 'c']));
    assert.ok(!r.isError, JSON.stringify(r));
    assert.deepEqual(r.content, [{ type: 'text', text: 'c' }]);
    assert.deepEqual(r.structuredContent, { text: 'c' });
    assert.deepEqual(chainTrace(r).map((h) => h.tool), ['toolbox:chain', 'toolbox:chain', 'toolbox:chain']);
    assert.ok(!JSON.stringify(r).includes('"nextTool"'));

    // A failure earlier in the chain still makes the merged result an error.
    const f = await call(c, 'toolbox:chain', chainArgs(['a', 'b'], undefined, { failAt: 0 }));
    assert.equal(f.isError, true, JSON.stringify(f));
    assert.deepEqual(f.content, [{ type: 'text', text: 'b' }]);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'chain.resolve: false — the result comes back untouched, nextTool included, no mcpgw/chain',
  withDiagnostics(async () => {
    const gw = await gatewayWith({ resolve: false });
    const c = await connectHttp(gw.url);
    const args = { text: 'a', next: 'echo', next_arguments: { text: 'b' } };
    const r = await call(c, 'toolbox:chain', args);
    assert.deepEqual(r, {
      content: [{ type: 'text', text: 'a' }],
      structuredContent: { text: 'a' },
      _meta: { nextTool: { tool: 'echo', arguments: { text: 'b' } } },
    });
    const byName = await call(c, 'toolbox:chain', { ...args, use_name_key: true });
    assert.deepEqual(byName._meta, { nextTool: { name: 'echo', arguments: { text: 'b' } } });
    await c.close();
    await gw.proc.stop();
  }),
);
