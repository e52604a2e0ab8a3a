// The bank server (seed 003) as a Streamable HTTP upstream behind the
// gateway: its tool list and its results, `_meta.nextTool`, content
// annotations and tool errors included, come through unchanged (with
// chain.resolve off, so the gateway leaves nextTool to the client).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BANK, connectHttp, httpServer, requireBinaries, startGateway, startUpstreamHttp, textOf, toolByName, withDiagnostics } from './harness.mjs';

let gw;
let bankRef; // HttpClient straight to the bank upstream

before(async () => {
  requireBinaries();
  const bank = await startUpstreamHttp(BANK, [], { label: 'bank-http' });
  gw = await startGateway({ chain: { resolve: false }, servers: [httpServer('bank', bank.url)] });
  bankRef = await connectHttp(bank.url);
});

test(
  'tools/list shows bank:prepare_money_transfer with the upstream inputSchema',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    const ref = toolByName((await bankRef.listAllTools()).tools, 'prepare_money_transfer');
    const t = toolByName(tools, 'bank:prepare_money_transfer');
    assert.ok(t, `bank:prepare_money_transfer missing from ${tools.map((x) => x.name)}`);
    assert.equal(t.description, `[Proxied from bank] ${ref.description}`);
    assert.deepEqual(t.inputSchema, ref.inputSchema);
    assert.equal(t.inputSchema.type, 'object');
    assert.deepEqual(Object.keys(t.inputSchema.properties).sort(), ['amount', 'fromAccountId', 'memo', 'toAccountId']);
    assert.ok(tools.every((x) => x.name.startsWith('bank:')), tools.map((x) => x.name).join(','));
    await c.close();
  }),
);

test(
  'prepare_money_transfer returns the upstream result unchanged: nextTool and content annotations',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const args = { fromAccountId: 'acc_checking_001', toAccountId: 'acc_savings_001', amount: 5 };
    const r = await c.callTool('bank:prepare_money_transfer', args);
    assert.deepEqual(r, await bankRef.callTool('prepare_money_transfer', args));
    assert.equal(r.isError, undefined);
    assert.equal(r.content.length, 1);
    assert.equal(r.content[0].type, 'text');
    assert.match(r.content[0].text, /acc_checking_001\) is currently locked/);
    assert.deepEqual(r.content[0].annotations, { audience: ['user'] });
    assert.deepEqual(r._meta, {
      nextTool: {
        tool: 'request_agent_handoff',
        arguments: { reason: 'Customer attempted to transfer from locked account: Primary Checking (acc_checking_001)' },
      },
    });
    await c.close();
  }),
);

test(
  'get_account_balance of an unknown account returns the upstream isError result unchanged',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('bank:get_account_balance', { accountId: 'acc_unknown_42' });
    assert.deepEqual(r, await bankRef.callTool('get_account_balance', { accountId: 'acc_unknown_42' }));
    assert.equal(r.isError, true);
    assert.equal(textOf(r), 'Account not found: acc_unknown_42');
    await c.close();
  }),
);
