// Composite plugins through the real binary: the example plugin
// (banking_composites) against the real bank, rates and toolbox upstreams,
// and the test plugins (C++ and plain C) for every host function:
//   - plugin tools are listed under their own names next to proxied ones,
//     and obey slices, filters and modes;
//   - get_chained_info, account_overview and safe_transfer behave as
//     documented, including partial answers and handoffs (nextTool resolved
//     by the gateway);
//   - parallel calls overlap, as the upstreams' own start/end times show;
//   - upstream failures reach the plugin as isError results naming the
//     server; the plugin's principal and mode are the client's;
//   - cancelling the client's call cancels the plugin's upstream call;
//   - a plugin's bad result (NULL, not JSON) is an error for that call only.
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILD,
  TOOLBOX,
  bankStdio,
  connectHttp,
  httpServer,
  newId,
  requireBinaries,
  rpc,
  startGateway,
  startTap,
  startUpstreamHttp,
  textOf,
  textsOf,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';

const RATES = path.join(BUILD, 'examples', 'rates-server');
const plugin = (name) => path.join(BUILD, 'plugins', `lib${name}.so`);
const ratesStdio = () => ({ name: 'rates', transport: 'stdio', command: RATES, args: [] });

// The bank's fixed accounts: 2543.17 + 15020.50 - 432.10 USD.
const TOTAL_USD = 17131.57;
const LOCKED = 'acc_checking_001';
const SAVINGS = 'acc_savings_001';

let gw; // every example and test plugin, bank + rates + toolbox + an HTTP toolbox behind a tap
let tap;

/** Both intervals [started_ms, ended_ms] reported by the upstreams overlap. */
function assertOverlap(a, b, what) {
  assert.ok(a && b && typeof a.started_ms === 'number' && typeof b.started_ms === 'number', `${what}: ${JSON.stringify([a, b])}`);
  assert.ok(a.started_ms < b.ended_ms && b.started_ms < a.ended_ms, `${what}: the upstream calls did not overlap: ${JSON.stringify([a, b])}`);
}

before(async () => {
  requireBinaries();
  const hbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  tap = await startTap(hbox.url);
  gw = await startGateway({
    welcome: { strategy: 'none' },
    modes: {
      readonly: { include_slices: ['read'] },
      transfers: { include_tools: ['safe_transfer', 'bank:*'] },
    },
    servers: [bankStdio(), ratesStdio(), toolboxStdio(), toolboxStdio({ name: 'toolbox2' }), httpServer('hbox', tap.url)],
    plugins: [
      { path: plugin('banking_composites'), config: { safe_transfer: { max_amount: 1000 } } },
      { path: plugin('test_composites') },
      { path: plugin('test_c_plugin'), config: { server: 'toolbox' } },
    ],
  });
});

test(
  'plugin tools are listed under their own names, unprefixed, next to the proxied tools',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of ['get_chained_info', 'account_overview', 'safe_transfer', 'whoami', 'c_echo', 'bank:list_accounts', 'rates:get_exchange_rates'])
      assert.ok(byName.has(n), `${n} missing from ${[...byName.keys()].join(', ')}`);
    const overview = byName.get('account_overview');
    assert.equal(overview.title, 'Account Overview');
    assert.ok(!overview.description.startsWith('[Proxied'), overview.description);
    assert.deepEqual(overview.annotations, { readOnlyHint: true });
    assert.deepEqual(overview._meta, { slices: ['read'] });
    assert.equal(overview.inputSchema.type, 'object');
    assert.deepEqual(byName.get('safe_transfer').inputSchema.required, ['fromAccountId', 'toAccountId', 'amount']);
    await c.close();
  }),
);

test(
  'modes filter plugin tools by their slices like any tool; a hidden one is unknown',
  withDiagnostics(async () => {
    const ro = await connectHttp(`${gw.url}/readonly`);
    const names = (await ro.listAllTools()).tools.map((t) => t.name);
    assert.ok(names.includes('get_chained_info') && names.includes('account_overview') && names.includes('whoami'), names.join(', '));
    assert.ok(!names.includes('safe_transfer') && !names.includes('relay'), names.join(', '));
    const hidden = await ro.request('tools/call', { name: 'safe_transfer', arguments: { fromAccountId: SAVINGS, toAccountId: LOCKED, amount: 1 } });
    assert.equal(hidden.error?.code, -32602, JSON.stringify(hidden));
    await ro.close();

    const tr = await connectHttp(`${gw.url}/transfers`);
    const trNames = (await tr.listAllTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(trNames.filter((n) => !n.startsWith('bank:')), ['safe_transfer']);
    await tr.close();
  }),
);

test(
  'get_chained_info returns the chained tool\'s structured result with a source marker and an optional timestamp',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('get_chained_info', {});
    assert.ok(!r.isError, JSON.stringify(r));
    assert.equal(r.structuredContent.source, 'bank:list_accounts');
    assert.deepEqual(r.structuredContent.data.accounts.map((a) => a.accountId), [LOCKED, SAVINGS, 'acc_credit_001']);
    assert.equal(r.structuredContent.timestamp, undefined);
    assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent);

    const t = await c.callTool('get_chained_info', { includeTimestamp: true });
    assert.match(t.structuredContent.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Math.abs(Date.parse(t.structuredContent.timestamp) - Date.now()) < 60000, t.structuredContent.timestamp);
    await c.close();
  }),
);

test(
  'get_chained_info falls back to JSON in the text content of a tool without structuredContent',
  withDiagnostics(async () => {
    const g = await startGateway({
      servers: [toolboxStdio()],
      plugins: [{ path: plugin('banking_composites'), config: { get_chained_info: { server: 'toolbox', tool: 'echo' } } }],
    });
    const c = await connectHttp(g.url);
    const r = await c.callTool('get_chained_info', { arguments: { text: '{"order":42,"items":["a","b"]}' } });
    assert.deepEqual(r.structuredContent, { source: 'toolbox:echo', data: { order: 42, items: ['a', 'b'] } });
    const notJson = await c.callTool('get_chained_info', { arguments: { text: 'plain words' } });
    assert.equal(notJson.isError, true);
    assert.match(textOf(notJson), /toolbox\/echo returned no structured data/);
    const failed = await c.callTool('get_chained_info', { arguments: {} });
    assert.equal(failed.isError, true);
    assert.match(textOf(failed), /^Failed to get echo from toolbox: .*text/);
    await c.close();
  }),
);

test(
  'account_overview merges the bank and the rates server into one answer',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const usd = await c.callTool('account_overview', {});
    assert.ok(!usd.isError, JSON.stringify(usd));
    const s = usd.structuredContent;
    assert.equal(s.partial, false);
    assert.deepEqual(s.failed, []);
    assert.equal(s.bank.accounts.length, 3);
    assert.equal(s.fx.base, 'USD');
    assert.deepEqual(s.total, { currency: 'USD', amount: TOTAL_USD });
    assert.equal(textOf(usd), `3 accounts, USD ${TOTAL_USD} in total`);

    const eur = await c.callTool('account_overview', { currency: 'EUR' });
    assert.deepEqual(eur.structuredContent.total, { currency: 'EUR', amount: Math.round(TOTAL_USD * 0.92 * 100) / 100 });
    const unknown = await c.callTool('account_overview', { currency: 'XYZ' });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /No exchange rate for XYZ/);
    await c.close();
  }),
);

test(
  'account_overview with a failing side answers partially and says which side failed; both failing is an error',
  withDiagnostics(async () => {
    const g = await startGateway({
      servers: [bankStdio(), toolboxStdio()],
      plugins: [
        {
          path: plugin('banking_composites'),
          config: { account_overview: { fx: { server: 'toolbox', tool: 'fail', arguments: { message: 'rates offline' } } } },
        },
      ],
    });
    const c = await connectHttp(g.url);
    const r = await c.callTool('account_overview', {});
    assert.ok(!r.isError, JSON.stringify(r));
    assert.equal(r.structuredContent.partial, true);
    assert.deepEqual(r.structuredContent.failed, [{ side: 'fx', server: 'toolbox', error: 'rates offline' }]);
    assert.equal(r.structuredContent.fx, null);
    assert.equal(r.structuredContent.bank.accounts.length, 3);
    assert.equal(r.structuredContent.total, undefined);
    assert.match(textOf(r), /Partial answer: the fx side \(server toolbox\) failed: rates offline/);
    await c.close();

    const both = await startGateway({
      servers: [toolboxStdio()],
      plugins: [
        {
          path: plugin('banking_composites'),
          config: { account_overview: { bank: { server: 'nowhere' }, fx: { server: 'toolbox', tool: 'fail', arguments: { message: 'down' } } } },
        },
      ],
    });
    const d = await connectHttp(both.url);
    const e = await d.callTool('account_overview', {});
    assert.equal(e.isError, true);
    assert.match(textOf(e), /Both sides failed: .*unknown server "nowhere".*; down/);
    await d.close();
  }),
);

test(
  'the two sides of account_overview run in parallel: the upstreams\' own clocks show the calls overlapping',
  withDiagnostics(async () => {
    const g = await startGateway({
      servers: [toolboxStdio(), toolboxStdio({ name: 'toolbox2' })],
      plugins: [
        {
          path: plugin('banking_composites'),
          config: {
            account_overview: {
              bank: { server: 'toolbox', tool: 'sleep', arguments: { ms: 400 } },
              fx: { server: 'toolbox2', tool: 'sleep', arguments: { ms: 400 } },
            },
          },
        },
      ],
    });
    const c = await connectHttp(g.url);
    const r = await c.callTool('account_overview', {});
    assert.equal(r.structuredContent.partial, false, JSON.stringify(r));
    assertOverlap(r.structuredContent.bank, r.structuredContent.fx, 'account_overview');
    await c.close();
  }),
);

test(
  'call_all in C++ and call_tool_async in C overlap their calls too',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const cpp = await c.callTool('parallel_sleep', { ms: 400, servers: ['toolbox', 'toolbox2'] });
    const [a, b] = cpp.structuredContent.results.map((x) => x.structuredContent);
    assertOverlap(a, b, 'parallel_sleep');

    const cc = await c.callTool('c_parallel', {});
    assert.ok(!cc.isError, JSON.stringify(cc));
    const [x, y] = cc.structuredContent.results.map((r) => r.structuredContent);
    assert.equal(x.ms, 300);
    assert.equal(y.ms, 300);
    await c.close();
  }),
);

test(
  'safe_transfer: a valid transfer is prepared by the bank; invalid input never reaches it',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const ok = await c.callTool('safe_transfer', { fromAccountId: SAVINGS, toAccountId: LOCKED, amount: 250.5, memo: 'rent' });
    assert.ok(!ok.isError, JSON.stringify(ok));
    assert.equal(ok.structuredContent.status, 'prepared');
    assert.match(ok.structuredContent.transferId, /^trf_\d{6}$/);
    assert.equal(ok.structuredContent.amount, 250.5);
    assert.match(textOf(ok), /^Transfer trf_\d{6} prepared: 250\.50 USD/);

    const same = await c.callTool('safe_transfer', { fromAccountId: SAVINGS, toAccountId: SAVINGS, amount: 5 });
    assert.equal(same.isError, true);
    assert.equal(textOf(same), 'The source and destination accounts are the same.');
    const cents = await c.callTool('safe_transfer', { fromAccountId: SAVINGS, toAccountId: LOCKED, amount: 1.234 });
    assert.equal(textOf(cents), 'The amount must be positive with at most two decimals.');
    const refused = await c.callTool('safe_transfer', { fromAccountId: SAVINGS, toAccountId: 'acc_nope', amount: 5 });
    assert.equal(refused.isError, true);
    assert.equal(textOf(refused), 'The bank refused the transfer: Account not found: acc_nope');
    await c.close();
  }),
);

test(
  'safe_transfer over the limit hands off via nextTool, and the gateway resolves it in the same answer',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('safe_transfer', { fromAccountId: SAVINGS, toAccountId: LOCKED, amount: 5000 });
    assert.ok(!r.isError, JSON.stringify(r));
    const texts = textsOf(r);
    assert.equal(texts[0], 'Transfers over USD 1000 need a customer service agent.');
    assert.match(texts[1], /^I've requested a handoff to a customer service agent \(ticket HO-\d+\)/);
    const reason = `Transfer of USD 5000 from ${SAVINGS} exceeds the USD 1000 limit for assistant-initiated transfers`;
    // safe_transfer declares no outputSchema: the handoff's structured
    // result is in the trace, not in place of the plugin's own answer.
    assert.equal(r.structuredContent, undefined, JSON.stringify(r.structuredContent));
    assert.equal(r._meta['mcpgw/chain'][1].structuredContent.reason, reason);
    assert.deepEqual(
      r._meta['mcpgw/chain'].map(({ tool, arguments: a }) => ({ tool, arguments: a })),
      [
        { tool: 'safe_transfer', arguments: { fromAccountId: SAVINGS, toAccountId: LOCKED, amount: 5000 } },
        { tool: 'bank:request_agent_handoff', arguments: { reason } },
      ],
    );
    assert.ok(!JSON.stringify(r).includes('"nextTool"'), JSON.stringify(r));
    await c.close();
  }),
);

test(
  'safe_transfer from a locked account relays the bank\'s own handoff under the exposed tool name',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('safe_transfer', { fromAccountId: LOCKED, toAccountId: SAVINGS, amount: 10 });
    assert.ok(!r.isError, JSON.stringify(r));
    const texts = textsOf(r);
    assert.match(texts[0], /Primary Checking account \(acc_checking_001\) is currently locked/);
    assert.match(texts[1], /^I've requested a handoff/);
    assert.equal(r.structuredContent, undefined, JSON.stringify(r.structuredContent));
    assert.equal(
      r._meta['mcpgw/chain'][1].structuredContent.reason,
      'Customer attempted to transfer from locked account: Primary Checking (acc_checking_001)',
    );
    assert.deepEqual(r._meta['mcpgw/chain'].map((h) => h.tool), ['safe_transfer', 'bank:request_agent_handoff']);
    await c.close();
  }),
);

test(
  'a plugin\'s nextTool to a tool the client may not see, or that does not exist, is refused with the reason',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const ok = await c.callTool('handoff', { tool: 'toolbox:echo', arguments: { text: 'after the handoff' } });
    assert.deepEqual(textsOf(ok), ['handing off', 'after the handoff']);
    const unknown = await c.callTool('handoff', { tool: 'no_such_tool', arguments: {} });
    assert.equal(unknown.isError, true);
    assert.match(textsOf(unknown).at(-1), /no_such_tool/);
    await c.close();
  }),
);

test(
  'upstream failures reach the plugin as isError results naming the server and the cause',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const relay = (server, tool, args) => c.callTool('relay', { server, tool, arguments: args });
    const passed = await relay('toolbox', 'fail', { message: 'as designed' });
    assert.deepEqual(passed, { content: [{ type: 'text', text: 'as designed' }], isError: true });
    const rpcError = await relay('toolbox', 'rpc_error', {});
    assert.equal(rpcError.isError, true);
    assert.equal(textOf(rpcError), 'server toolbox: error -32000: deliberate failure');
    const unknownServer = await relay('nowhere', 'echo', {});
    assert.equal(textOf(unknownServer), 'unknown server "nowhere" (not in gateway.yaml)');
    const unknownTool = await relay('toolbox', 'no_such_tool', {});
    assert.equal(unknownTool.isError, true);
    assert.match(textOf(unknownTool), /no_such_tool/);
    const badArgs = await relay('toolbox', 'echo', ['not', 'an', 'object']);
    assert.equal(textOf(badArgs), 'arguments for toolbox/echo must be a JSON object');
    const fine = await relay('rates', 'get_exchange_rates', { base: 'EUR' });
    assert.equal(fine.structuredContent.base, 'EUR');
    await c.close();
  }),
);

test(
  'a plugin may call the host from its own threads, and may return before its asynchronous calls end',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    assert.equal(textOf(await c.callTool('from_own_thread', {})), 'from a plugin thread');
    assert.equal(textOf(await c.callTool('abandon_async', {})), 'returned before the call finished');
    assert.equal(textOf(await c.callTool('c_echo', { a: 1, b: 'x"y' })), '{"a":1,"b":"x\\"y"}');
    await c.close();
  }),
);

test(
  'a plugin result that is NULL or not JSON is an error for that call only',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const none = await c.callTool('c_null', {});
    assert.equal(none.isError, true);
    assert.equal(textOf(none), 'plugin test_c_plugin: tool c_null returned no result');
    const garbage = await c.callTool('c_garbage', {});
    assert.equal(garbage.isError, true);
    assert.match(textOf(garbage), /^plugin test_c_plugin: tool c_garbage returned invalid JSON/);
    const thrown = await c.callTool('throws', {});
    assert.equal(thrown.isError, true);
    assert.equal(textOf(thrown), 'tool throws failed: the handler broke');
    assert.equal(textOf(await c.callTool('c_echo', {})), '{}');
    await gw.proc.waitForLine('stderr', /plugin test_composites: tool throws threw: the handler broke/);
    await c.close();
  }),
);

test(
  'the plugin sees the client\'s principal and mode',
  withDiagnostics(async () => {
    const g = await startGateway({
      auth: { bearer_tokens: [{ token: 'tok-alice', name: 'alice' }] },
      modes: { readonly: { include_slices: ['read'] } },
      servers: [toolboxStdio()],
      plugins: [{ path: plugin('test_composites') }],
    });
    const headers = { authorization: 'Bearer tok-alice' };
    const all = await connectHttp(g.url, { headers });
    assert.deepEqual((await all.callTool('whoami', {})).structuredContent, { principal: 'alice', mode: 'all' });
    const ro = await connectHttp(`${g.url}/readonly`, { headers });
    assert.deepEqual((await ro.callTool('whoami', {})).structuredContent, { principal: 'alice', mode: 'readonly' });
    await Promise.all([all.close(), ro.close()]);

    const anon = await connectHttp(gw.url);
    assert.deepEqual((await anon.callTool('whoami', {})).structuredContent, { principal: '', mode: 'all' });
    await anon.close();
  }),
);

test(
  'cancelling the client\'s call cancels the plugin\'s upstream call, and the plugin is told',
  withDiagnostics(async () => {
    const g = await startGateway({
      servers: [httpServer('hbox', tap.url)],
      plugins: [{ path: plugin('test_composites'), config: { server: 'hbox' } }],
    });
    const c = await connectHttp(g.url);
    const id = newId();
    const pending = rpc(c.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'until_cancelled', arguments: {} } }, c.opts());
    const upstream = await tap.waitFor((b) => b?.method === 'tools/call' && b.params?.name === 'sleep' && b.params?.arguments?.ms === 60000);
    assert.equal((await c.notify('notifications/cancelled', { requestId: id, reason: 'user stopped it' })).status, 202);
    const cancel = await tap.waitFor((b) => b?.method === 'notifications/cancelled' && b.params?.requestId === upstream.id);
    assert.equal(cancel.id, undefined);
    const res = await pending;
    assert.equal(res.status, 200, res.text);
    const m = res.message;
    assert.ok(m.error || m.result, JSON.stringify(m));
    if (m.result) {
      assert.equal(m.result.isError ?? m.result.structuredContent?.cancelled, true, JSON.stringify(m.result));
    }
    assert.equal(textOf(await c.callTool('whoami', {})).length > 0, true);
    await c.close();
  }),
);

test(
  'a plugin tool can be the welcome tool; its text reaches the session\'s instructions',
  withDiagnostics(async () => {
    const g = await startGateway({
      welcome: { strategy: 'tool', tool: 'welcome' },
      servers: [toolboxStdio()],
      plugins: [{ path: plugin('test_composites') }],
    });
    const c = await connectHttp(g.url);
    assert.match(c.initResult.instructions, /Welcome from a plugin, guest\./);
    await c.close();
  }),
);

test(
  'the progress of a plugin\'s own upstream calls reaches the client\'s progress token',
  withDiagnostics(async () => {
    const g = await startGateway({
      servers: [{ name: 'conf', transport: 'stdio', command: path.join(BUILD, 'examples', 'conformance-server'), args: [] }],
      plugins: [{ path: plugin('test_composites') }],
    });
    const c = await connectHttp(g.url);
    const res = await c.send('tools/call', {
      name: 'relay',
      arguments: { server: 'conf', tool: 'test_tool_with_progress', arguments: {} },
      _meta: { progressToken: 'plugin-progress' },
    });
    assert.equal(res.status, 200, res.text);
    const progress = res.messages.filter((m) => m.method === 'notifications/progress');
    assert.deepEqual(progress.map((m) => [m.params.progressToken, m.params.progress]), [
      ['plugin-progress', 0],
      ['plugin-progress', 50],
      ['plugin-progress', 100],
    ]);
    assert.equal(textOf(res.messages.at(-1).result), 'Progress reported: 0, 50, 100 of 100');
    await c.close();
  }),
);
