// A chain's result when the called tool declares an outputSchema (docs/protocol.md,
// "nextTool chains", the structuredContent rule): the structuredContent is
// the first that conforms to the called tool's schema (a validating client
// never rejects it, and one that requires it gets it), and where the schema
// admits one more key it carries every shown call's text under "mcpgw/hops"
// (a client that shows only structuredContent still sees every hop). A
// single call is returned unchanged. Driven by toolbox-server's typed chain
// fixtures: `--typed-chain-tool` (outputSchema {text: string}, open) and
// `--closed-chain-tool` (the same with additionalProperties: false).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bankStdio, chainTrace, connectHttp, requireBinaries, startGateway, textsOf, toolboxStdio, withDiagnostics } from './harness.mjs';

const TOOLBOX_ARGS = ['--chain-tool', 'chain', '--typed-chain-tool', 'typed', '--closed-chain-tool', 'closed'];
const TEXT_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
// What the gateway declares in a listed outputSchema, so that any schema
// plain enough (a closed one too) admits the hops of a chain.
const HOPS = {
  type: 'array',
  description: 'Added by mcpgw to the result of a nextTool chain: the text of every call the result\'s content shows, in order.',
  items: { type: 'object', properties: { tool: { type: 'string' }, text: { type: 'string' } } },
};
const listed = (schema) => ({ ...schema, properties: { ...schema.properties, 'mcpgw/hops': HOPS } });
let all;
let last;

before(async () => {
  requireBinaries();
  const config = (merge) => ({ chain: { merge }, welcome: { strategy: 'none' }, servers: [toolboxStdio({ args: TOOLBOX_ARGS }), bankStdio()] });
  [all, last] = await Promise.all([startGateway(config('all'), { label: 'mcpgw-merge-all' }), startGateway(config('last'), { label: 'mcpgw-merge-last' })]);
});

async function call(gw, name, args) {
  const c = await connectHttp(gw.url);
  try {
    const m = await c.request('tools/call', { name, arguments: args });
    assert.equal(m.error, undefined, `JSON-RPC error for ${name}: ${JSON.stringify(m)}`);
    return m.result;
  } finally {
    await c.close();
  }
}

test(
  'the fixtures declare their outputSchemas through the gateway, each with mcpgw/hops as an optional property and nothing else changed',
  withDiagnostics(async () => {
    const c = await connectHttp(all.url);
    const { tools } = await c.listAllTools();
    const schema = (n) => tools.find((t) => t.name === n)?.outputSchema;
    assert.deepEqual(schema('toolbox:typed'), listed(TEXT_SCHEMA));
    assert.deepEqual(schema('toolbox:closed'), listed({ ...TEXT_SCHEMA, additionalProperties: false }));
    assert.equal(schema('toolbox:chain'), undefined);
    await c.close();
  }),
);

test(
  'a single call of a typed tool (no nextTool) is returned unchanged',
  withDiagnostics(async () => {
    const r = await call(all, 'toolbox:typed', { text: 'alone' });
    assert.deepEqual(r, { content: [{ type: 'text', text: 'alone' }], structuredContent: { text: 'alone' } });
  }),
);

test(
  'a typed tool\'s chain across servers (typed → chain → bank:get_account_balance) and over 3 hops (typed → chain → typed → echo): its own structuredContent with every call\'s text inside, and in content',
  withDiagnostics(async () => {
    const args = {
      text: 'a',
      next: 'chain',
      next_arguments: {
        text: 'b',
        next: 'bank:get_account_balance',
        next_arguments: { accountId: 'acc_savings_001' },
      },
    };
    const r = await call(all, 'toolbox:typed', args);
    assert.ok(!r.isError, JSON.stringify(r));
    const balance = 'The balance of High Yield Savings (acc_savings_001) is 15020.50 USD.';
    assert.deepEqual(textsOf(r), ['a', 'b', balance]);
    assert.deepEqual(r.structuredContent, {
      text: 'a',
      'mcpgw/hops': [
        { tool: 'toolbox:typed', text: 'a' },
        { tool: 'toolbox:chain', text: 'b' },
        { tool: 'bank:get_account_balance', text: balance },
      ],
    });
    assert.deepEqual(
      chainTrace(r).map((h) => [h.tool, h.structuredContent]),
      [
        ['toolbox:typed', { text: 'a' }],
        ['toolbox:chain', { text: 'b' }],
        ['bank:get_account_balance', { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' }],
      ],
    );

    const three = await call(all, 'toolbox:typed', {
      text: 'h0',
      next: 'chain',
      next_arguments: { text: 'h1', next: 'typed', next_arguments: { text: 'h2', next: 'echo', next_arguments: { text: 'h3' } } },
    });
    assert.ok(!three.isError, JSON.stringify(three));
    assert.equal(chainTrace(three).length, 4, 'the client call + 3 hops');
    assert.deepEqual(textsOf(three), ['h0', 'h1', 'h2', 'h3']);
    assert.equal(three.structuredContent.text, 'h0', 'the called tool\'s own structured result');
    assert.deepEqual(three.structuredContent['mcpgw/hops'].map((h) => h.text), ['h0', 'h1', 'h2', 'h3']);
  }),
);

test(
  'a closed outputSchema (additionalProperties: false), as listed, admits the hops: every hop in structuredContent and content',
  withDiagnostics(async () => {
    const r = await call(all, 'toolbox:closed', { text: 'a', next: 'chain', next_arguments: { text: 'b', next: 'echo', next_arguments: { text: 'c' } } });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.deepEqual(r.structuredContent, {
      text: 'a',
      'mcpgw/hops': [
        { tool: 'toolbox:closed', text: 'a' },
        { tool: 'toolbox:chain', text: 'b' },
        { tool: 'toolbox:echo', text: 'c' },
      ],
    });
    assert.deepEqual(textsOf(r), ['a', 'b', 'c']);
    assert.equal(chainTrace(r).length, 3);
  }),
);

test(
  'a refused hop after a typed tool: isError, and the refusal is inside the structuredContent too',
  withDiagnostics(async () => {
    const r = await call(all, 'toolbox:typed', { text: 'a', next: 'no_such_tool', next_arguments: {} });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent.text, 'a');
    const hops = r.structuredContent['mcpgw/hops'];
    assert.equal(hops.length, 2, JSON.stringify(hops));
    assert.match(hops[1].text, /^mcpgw: chain stopped at hop 1 \(no_such_tool\): unknown tool/);
    assert.equal(hops[1].text, r.content.at(-1).text);
  }),
);

test(
  'merge: last — the last call when it conforms (alone); else the called tool\'s own, carrying the last call\'s text',
  withDiagnostics(async () => {
    const same = await call(last, 'toolbox:typed', { text: 'a', next: 'typed', next_arguments: { text: 'b' } });
    assert.deepEqual(same.content, [{ type: 'text', text: 'b' }]);
    assert.deepEqual(same.structuredContent, { text: 'b' });

    const other = await call(last, 'toolbox:typed', { text: 'a', next: 'echo', next_arguments: { text: 'b' } });
    assert.deepEqual(other.content, [{ type: 'text', text: 'b' }]);
    assert.deepEqual(other.structuredContent, { text: 'a', 'mcpgw/hops': [{ tool: 'toolbox:echo', text: 'b' }] });

    // Without an outputSchema, merge: last keeps the last call's own.
    const untyped = await call(last, 'toolbox:chain', { text: 'a', next: 'typed', next_arguments: { text: 'b' } });
    assert.deepEqual(untyped.structuredContent, { text: 'b' });
  }),
);
