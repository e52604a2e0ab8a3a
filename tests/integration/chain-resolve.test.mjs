// Server-side nextTool chains (seeds 000 and 003; CONTRACT "nextTool"): a
// tools/call result carrying `_meta.nextTool` is followed by the gateway
// before it answers, and the client gets one merged result with the trace in
// `_meta["mcpgw/chain"]`. Driven by toolbox-server's `chain` fixture
// (`--chain-tool chain`): {text, next, next_arguments, is_error,
// use_name_key, sleep_ms}; nested next_arguments build any chain.
//
// Default chain config here: resolve: true, max_depth: 5, merge: all.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  bankStdio,
  chainArgs,
  chainTrace,
  connectHttp,
  mentionsNextTool,
  pollUntil,
  requireBinaries,
  startGateway,
  textOf,
  textsOf,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';

const LOCKED_REASON = 'Customer attempted to transfer from locked account: Primary Checking (acc_checking_001)';
const hopsOf = chainTrace;
const texts = textsOf;
const toolsOf = (r) => chainTrace(r).map((h) => h.tool);
const assertNoNextTool = (r) => assert.ok(!mentionsNextTool(r), `nextTool left in the result: ${JSON.stringify(r)}`);

const AUTH = { authorization: 'Bearer chain-s3cret' };
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({
    auth: { bearer_tokens: [{ token: 'chain-s3cret', name: 'alice' }] },
    // Kept out of every mode: a hop to it is refused like a direct call.
    filters: { exclude_tools: ['toolbox:add'] },
    modes: {
      // Only the chain fixture: a hop to toolbox:echo is hidden in this mode.
      chainonly: { description: 'only toolbox:chain', include_tools: ['toolbox:chain'] },
    },
    welcome: { strategy: 'none' },
    servers: [
      toolboxStdio({ args: ['--chain-tool', 'chain'] }),
      bankStdio(),
      // prefix: false exposes this toolbox's tools as `echo`, `sleep`, ...: a
      // nextTool "echo" from toolbox:chain must still go to toolbox's own echo.
      { name: 'plain', transport: 'stdio', command: TOOLBOX, args: ['--name', 'plain'], prefix: false },
    ],
  });
});

const connect = (mode) => connectHttp(mode ? `${gw.url}/${mode}` : gw.url, { headers: AUTH });

/** tools/call through the gateway; returns the JSON-RPC response's result (asserting there is no JSON-RPC error). */
async function call(c, name, args) {
  const m = await c.request('tools/call', { name, arguments: args });
  assert.equal(m.error, undefined, `JSON-RPC error for ${name}: ${JSON.stringify(m)}`);
  return m.result;
}

/** The last content item of a refused chain: a text naming the hop's tool and the reason. */
function assertRefused(r, { tool, why }) {
  assert.equal(r.isError, true, JSON.stringify(r));
  const last = r.content.at(-1);
  assert.equal(last.type, 'text', JSON.stringify(r));
  assert.ok(last.text.includes(tool), `refusal text does not name ${tool}: ${last.text}`);
  assert.match(last.text, why, `refusal text: ${last.text}`);
  const trace = hopsOf(r);
  assert.equal(trace.at(-1).isError, true, `refused hop not last in the trace: ${JSON.stringify(trace)}`);
  assert.ok(trace.at(-1).tool.endsWith(tool.replace(/^toolbox:/, '')), `trace's last tool ${trace.at(-1).tool}, want ${tool}`);
  assertNoNextTool(r);
}

test(
  'a 2-hop chain (chain → chain → echo): one result with every content in order, the trace, no nextTool',
  withDiagnostics(async () => {
    const c = await connect();
    const args = chainArgs(['a', 'b'], { tool: 'echo', arguments: { text: 'c' } });
    const r = await call(c, 'toolbox:chain', args);
    assert.deepEqual(r.content, [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'text', text: 'c' },
    ]);
    assert.ok(!r.isError, JSON.stringify(r));
    assertNoNextTool(r);
    const trace = hopsOf(r);
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:chain', 'toolbox:echo']);
    assert.deepEqual(trace[0].arguments, args, 'the client call comes first, with its own arguments');
    assert.deepEqual(trace[1].arguments, args.next_arguments);
    assert.deepEqual(trace[2].arguments, { text: 'c' });
    for (const h of trace) {
      assert.equal(h.isError, false, JSON.stringify(h));
      assert.equal(typeof h.ms, 'number', JSON.stringify(h));
      assert.ok(h.ms >= 0, JSON.stringify(h));
    }
    // toolbox:chain declares no outputSchema: a result showing several calls
    // carries no structuredContent (a client showing only that would hide
    // the other calls); each call's own is in the trace.
    assert.equal(r.structuredContent, undefined, `structuredContent in a merged result: ${JSON.stringify(r.structuredContent)}`);
    assert.deepEqual(trace.map((h) => h.structuredContent), [{ text: 'a' }, { text: 'b' }, undefined]);
    await c.close();
  }),
);

test(
  'no outputSchema: no structuredContent in the merged result, every call\'s in the trace (chain → chain)',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'chain', next_arguments: { text: 'b' } });
    assert.deepEqual(texts(r), ['a', 'b']);
    assert.equal(r.structuredContent, undefined, JSON.stringify(r));
    assert.deepEqual(hopsOf(r).map((h) => h.structuredContent), [{ text: 'a' }, { text: 'b' }]);
    await c.close();
  }),
);

test(
  'a result without nextTool is returned unchanged (no mcpgw/chain trace needed)',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'alone' });
    assert.deepEqual(r.content, [{ type: 'text', text: 'alone' }]);
    assert.deepEqual(r.structuredContent, { text: 'alone' });
    assert.ok(!r.isError);
    await c.close();
  }),
);

test(
  'cross-server hop: toolbox:chain → "bank:list_accounts" (an exposed name) runs on bank',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'to the bank', next: 'bank:list_accounts', next_arguments: {} });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.equal(r.content.length, 2, JSON.stringify(r.content));
    assert.deepEqual(r.content[0], { type: 'text', text: 'to the bank' });
    assert.match(r.content[1].text, /^You have 3 accounts:/);
    assert.equal(r.structuredContent, undefined, 'toolbox:chain declares no outputSchema');
    assert.deepEqual(
      hopsOf(r)[1].structuredContent.accounts.map((a) => a.accountId),
      ['acc_checking_001', 'acc_savings_001', 'acc_credit_001'],
    );
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'bank:list_accounts']);
    assert.deepEqual(hopsOf(r)[1].arguments, {});
    await c.close();
  }),
);

test(
  'the originating server is searched first: "echo" from toolbox:chain is toolbox:echo, not the unprefixed `echo` of server plain',
  withDiagnostics(async () => {
    const c = await connect();
    const { tools } = await c.listAllTools();
    assert.ok(tools.some((t) => t.name === 'echo'), 'plain (prefix: false) should expose `echo`');
    const r = await call(c, 'toolbox:chain', { next: 'echo', next_arguments: { text: 'mine' } });
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:echo']);
    assert.deepEqual(texts(r), ['chain', 'mine']);
    await c.close();
  }),
);

test(
  'the bank example: prepare_money_transfer on the locked account is followed by request_agent_handoff',
  withDiagnostics(async () => {
    const c = await connect();
    const args = { fromAccountId: 'acc_checking_001', toAccountId: 'acc_savings_001', amount: 50 };
    const r = await call(c, 'bank:prepare_money_transfer', args);
    assert.ok(!r.isError, JSON.stringify(r));
    assert.equal(r.content.length, 2, JSON.stringify(r.content));
    assert.match(r.content[0].text, /Primary Checking account \(acc_checking_001\) is currently locked/);
    assert.deepEqual(r.content[0].annotations, { audience: ['user'] }, 'content items pass through unchanged');
    assert.match(r.content[1].text, /^I've requested a handoff to a customer service agent \(ticket HO-\d+\)/);
    // prepare_money_transfer declares no outputSchema: the handoff's
    // structured result is in the trace, its text in the content.
    assert.equal(r.structuredContent, undefined, JSON.stringify(r.structuredContent));
    const handoff = hopsOf(r)[1].structuredContent;
    assert.equal(handoff.status, 'queued');
    assert.equal(handoff.reason, LOCKED_REASON);
    assert.match(handoff.ticketId, /^HO-\d+$/);
    assertNoNextTool(r);
    assert.deepEqual(toolsOf(r), ['bank:prepare_money_transfer', 'bank:request_agent_handoff']);
    assert.deepEqual(hopsOf(r)[0].arguments, args);
    assert.deepEqual(hopsOf(r)[1].arguments, { reason: LOCKED_REASON });
    await c.close();
  }),
);

test(
  'nextTool spelled {name, arguments} (use_name_key) is followed like {tool, arguments}',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', use_name_key: true, next: 'echo', next_arguments: { text: 'by name' } });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.deepEqual(texts(r), ['a', 'by name']);
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:echo']);
    assertNoNextTool(r);
    await c.close();
  }),
);

test(
  'exactly 5 hops (chain ×5 → echo) are followed',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', chainArgs(['h0', 'h1', 'h2', 'h3', 'h4'], { tool: 'echo', arguments: { text: 'h5' } }));
    assert.ok(!r.isError, JSON.stringify(r));
    assert.deepEqual(texts(r), ['h0', 'h1', 'h2', 'h3', 'h4', 'h5']);
    assert.equal(hopsOf(r).length, 6, 'the client call + 5 hops');
    assert.equal(toolsOf(r).at(-1), 'toolbox:echo');
    await c.close();
  }),
);

test(
  'a 6th hop is refused with "depth", keeping the content of the 6 calls before it',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', chainArgs(['h0', 'h1', 'h2', 'h3', 'h4', 'h5'], { tool: 'echo', arguments: { text: 'h6' } }));
    assertRefused(r, { tool: 'echo', why: /depth/i });
    assert.deepEqual(texts(r).slice(0, -1), ['h0', 'h1', 'h2', 'h3', 'h4', 'h5']);
    assert.equal(hopsOf(r).length, 7, 'client call + 5 hops + the refused one');
    assert.ok(!textOf(r).includes('h6'), 'the refused echo ran');
    await c.close();
  }),
);

test(
  'a cycle: chain asking for itself with the same arguments is refused with "cycle" on the repeat',
  withDiagnostics(async () => {
    const c = await connect();
    // Without next_arguments the fixture repeats its own arguments: hop 1 repeats the client's call.
    const r = await call(c, 'toolbox:chain', { text: 'loop', next: 'chain' });
    assertRefused(r, { tool: 'chain', why: /cycle/i });
    assert.deepEqual(texts(r).slice(0, -1), ['loop']);
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:chain']);
    assert.deepEqual(hopsOf(r)[1].arguments, { text: 'loop', next: 'chain' });

    // A later repeat: a → b → b again.
    const r2 = await call(c, 'toolbox:chain', { text: 'a', next: 'chain', next_arguments: { text: 'b', next: 'chain' } });
    assertRefused(r2, { tool: 'chain', why: /cycle/i });
    assert.deepEqual(texts(r2).slice(0, -1), ['a', 'b']);
    assert.equal(hopsOf(r2).length, 3);
    await c.close();
  }),
);

test(
  'invalid arguments for the hop (echo {text: 5}; chain with an unknown property) are refused with the validator message',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'echo', next_arguments: { text: 5 } });
    assertRefused(r, { tool: 'echo', why: /invalid arguments/i });
    assert.deepEqual(texts(r).slice(0, -1), ['a']);
    assert.ok(r.content.at(-1).text.length > 'invalid arguments'.length + 10, `no validator message: ${r.content.at(-1).text}`);
    assert.deepEqual(hopsOf(r).at(-1).arguments, { text: 5 });

    const r2 = await call(c, 'toolbox:chain', { text: 'a', next: 'chain', next_arguments: { text: 'b', bogus: true } });
    assertRefused(r2, { tool: 'chain', why: /invalid arguments/i });
    assert.deepEqual(texts(r2).slice(0, -1), ['a']);

    // A required property missing is invalid too (echo requires text).
    const r3 = await call(c, 'toolbox:chain', { text: 'a', next: 'echo', next_arguments: {} });
    assertRefused(r3, { tool: 'echo', why: /invalid arguments/i });
    await c.close();
  }),
);

test(
  'a target hidden by the client\'s mode (/mcp/chainonly) is refused with "hidden"; the same chain works in mode all',
  withDiagnostics(async () => {
    const c = await connect('chainonly');
    const { tools } = await c.listAllTools();
    assert.deepEqual(tools.map((t) => t.name), ['toolbox:chain']);
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'echo', next_arguments: { text: 'hidden?' } });
    assertRefused(r, { tool: 'echo', why: /hidden/i });
    assert.deepEqual(texts(r).slice(0, -1), ['a']);
    assert.ok(!textOf(r).includes('hidden?'), 'the hidden echo ran');
    // By exposed name too.
    const r2 = await call(c, 'toolbox:chain', { text: 'a', next: 'bank:list_accounts', next_arguments: {} });
    assertRefused(r2, { tool: 'bank:list_accounts', why: /hidden/i });
    await c.close();

    const all = await connect();
    const ok = await call(all, 'toolbox:chain', { text: 'a', next: 'echo', next_arguments: { text: 'visible' } });
    assert.deepEqual(texts(ok), ['a', 'visible']);
    await all.close();
  }),
);

test(
  'a target filtered out for everyone (filters.exclude_tools: toolbox:add), named by exposed name, is refused, not called',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'toolbox:add', next_arguments: { a: 1, b: 2 } });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.content.at(-1).text, /hidden|unknown/i, r.content.at(-1).text);
    assert.ok(r.content.at(-1).text.includes('add'), r.content.at(-1).text);
    assert.deepEqual(texts(r).slice(0, -1), ['a']);
    assert.equal(r.structuredContent?.sum, undefined, 'add ran');
    assertNoNextTool(r);
    await c.close();
  }),
);

test(
  'the originating server\'s own tool "add", filtered out, is refused as hidden — not routed to server plain\'s unprefixed `add`',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'add', next_arguments: { a: 1, b: 2 } });
    assert.equal(r.isError, true, `toolbox's own add is filtered out, yet the hop ran: ${JSON.stringify(r)}`);
    assert.match(r.content.at(-1).text, /hidden/i, r.content.at(-1).text);
    assert.equal(r.structuredContent?.sum, undefined, 'plain:add ran in place of toolbox:add');
    await c.close();
  }),
);

test(
  'an unknown target is refused with "unknown"',
  withDiagnostics(async () => {
    const c = await connect();
    for (const next of ['no_such_tool', 'bank:no_such_tool', 'nobody:echo']) {
      const r = await call(c, 'toolbox:chain', { text: 'a', next, next_arguments: {} });
      assertRefused(r, { tool: next, why: /unknown/i });
      assert.deepEqual(texts(r).slice(0, -1), ['a']);
      assert.equal(hopsOf(r).length, 2);
    }
    await c.close();
  }),
);

test(
  'a failing hop (fail) makes isError true and keeps the content of both calls',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'before failure', next: 'fail', next_arguments: { message: 'boom' } });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.deepEqual(texts(r), ['before failure', 'boom']);
    const trace = hopsOf(r);
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:fail']);
    assert.equal(trace[0].isError, false);
    assert.equal(trace[1].isError, true);
    assertNoNextTool(r);
    await c.close();
  }),
);

test(
  'a hop answered with a JSON-RPC error (rpc_error) makes isError true; the answer is still one result',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'a', next: 'rpc_error', next_arguments: {} });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.content[0].text, 'a');
    assert.ok(r.content.length >= 2, JSON.stringify(r));
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:rpc_error']);
    assert.equal(hopsOf(r)[1].isError, true);
    await c.close();
  }),
);

test(
  'a failed result that carries its own nextTool is followed; isError stays true',
  withDiagnostics(async () => {
    const c = await connect();
    // The client's own call fails and asks for echo.
    const r = await call(c, 'toolbox:chain', { text: 'failed', is_error: true, next: 'echo', next_arguments: { text: 'recovered' } });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.deepEqual(texts(r), ['failed', 'recovered']);
    assert.deepEqual(hopsOf(r).map((h) => h.isError), [true, false]);
    // A failing hop in the middle.
    const r2 = await call(c, 'toolbox:chain', chainArgs(['a', 'b'], { tool: 'echo', arguments: { text: 'c' } }, { failAt: 1 }));
    assert.equal(r2.isError, true, JSON.stringify(r2));
    assert.deepEqual(texts(r2), ['a', 'b', 'c']);
    assert.deepEqual(hopsOf(r2).map((h) => h.isError), [false, true, false]);
    await c.close();
  }),
);

test(
  'progress: a call with a progressToken gets notifications/progress per hop (same token, increasing, naming the tool) on its SSE stream',
  withDiagnostics(async () => {
    const c = await connect();
    const args = chainArgs(['a', 'b'], { tool: 'bank:get_account_balance', arguments: { accountId: 'acc_savings_001' } });
    const res = await c.send('tools/call', { name: 'toolbox:chain', arguments: args, _meta: { progressToken: 'chain-tok' } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.contentType, /^text\/event-stream/, `progress needs an SSE answer, got ${res.contentType}: ${res.text}`);
    const last = res.messages.at(-1);
    assert.equal(last, res.message, `the response is not the last message: ${res.text}`);
    assert.deepEqual(texts(last.result).slice(0, 2), ['a', 'b']);
    assert.match(texts(last.result)[2], /High Yield Savings/);
    const progress = res.messages.filter((m) => m.method === 'notifications/progress');
    assert.equal(progress.length, res.messages.length - 1, `unexpected messages: ${res.text}`);
    assert.ok(progress.length >= 2, `one progress per hop (2 hops), got ${progress.length}: ${res.text}`);
    for (const m of progress) assert.equal(m.params.progressToken, 'chain-tok', JSON.stringify(m));
    const values = progress.map((m) => m.params.progress);
    for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `progress not increasing: ${values}`);
    const messages = progress.map((m) => m.params.message || '');
    assert.ok(messages.some((t) => /chain/.test(t)), `no progress message names the chain hop: ${JSON.stringify(messages)}`);
    assert.ok(messages.some((t) => /get_account_balance/.test(t)), `no progress message names the bank hop: ${JSON.stringify(messages)}`);
    await c.close();
  }),
);

test(
  'every hop is logged at info with "chain hop", the principal, the tool, the duration and the outcome',
  withDiagnostics(async () => {
    const c = await connect();
    const r = await call(c, 'toolbox:chain', { text: 'log me', next: 'chain', next_arguments: { text: 'log-hop', is_error: true, next: 'bank:list_accounts', next_arguments: {} } });
    assert.equal(r.isError, true);
    assert.deepEqual(toolsOf(r), ['toolbox:chain', 'toolbox:chain', 'bank:list_accounts']);
    const lines = () => gw.proc.stderrText.split('\n').filter((l) => /chain hop/.test(l));
    // Both hop lines are written before the answer; no waiting needed, but allow for the pipe.
    await pollUntil(() => lines().some((l) => l.includes('bank:list_accounts')), { timeoutMs: 5000, what: 'the chain hop log line for bank:list_accounts' });
    const bankLine = lines().findLast((l) => l.includes('bank:list_accounts'));
    const chainLine = lines().findLast((l) => l.includes('toolbox:chain') && !l.includes('bank:list_accounts'));
    for (const l of [bankLine, chainLine]) {
      assert.ok(l, `hop lines: ${lines().join('\n')}`);
      assert.match(l, /info/i, l);
      assert.ok(l.includes('alice'), `principal missing: ${l}`);
      assert.match(l, /\d+(\.\d+)?\s*ms/, `duration missing: ${l}`);
    }
    assert.match(chainLine, /\berror\b/i, `the failed hop's outcome: ${chainLine}`);
    assert.match(bankLine, /\bok\b/i, `the successful hop's outcome: ${bankLine}`);
    await c.close();
  }),
);
