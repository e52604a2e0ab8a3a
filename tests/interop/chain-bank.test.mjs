// Seed 003's banking example end to end with the official SDK client
// (1.32.2): a plain client calls bank:prepare_money_transfer on the locked
// account and gets, in ONE result, the locked-account message and the
// request_agent_handoff that the gateway called for it (nextTool resolved
// server-side), over Streamable HTTP and over stdio.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bankStdio, requireBinaries, startGateway, tempDir, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio } from './common.mjs';

const ARGS = { fromAccountId: 'acc_checking_001', toAccountId: 'acc_savings_001', amount: 50 };
const REASON = 'Customer attempted to transfer from locked account: Primary Checking (acc_checking_001)';
const LOCKED =
  "I'm sorry, but your Primary Checking account (acc_checking_001) is currently locked. You'll need to speak with a " +
  'customer service agent to resolve this issue before you can transfer funds from this account.';

const CONFIG = { servers: [bankStdio()] };
let http;
let stdio;

before(async () => {
  requireBinaries();
  const gw = await startGateway(CONFIG);
  http = await connectSdkHttp(gw.url);
  stdio = await connectSdkStdio(writeConfig(tempDir(), CONFIG));
});

after(async () => {
  await http?.client.close();
  await stdio?.client.close();
});

async function checkTransfer(client) {
  await client.listTools(); // the SDK validates structuredContent against known output schemas
  const r = await client.callTool({ name: 'bank:prepare_money_transfer', arguments: ARGS });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(r.content.length, 2, JSON.stringify(r.content));
  assert.deepEqual(r.content[0], { type: 'text', text: LOCKED, annotations: { audience: ['user'] } });
  assert.equal(r.content[1].type, 'text');
  const m = r.content[1].text.match(/^I've requested a handoff to a customer service agent \(ticket (HO-\d+)\)\. An agent will join shortly\. Reason: (.*)$/);
  assert.ok(m, `second content item is not the handoff: ${r.content[1].text}`);
  assert.equal(m[2], REASON);
  // prepare_money_transfer declares no outputSchema: no structuredContent
  // (a client that shows only that would hide the locked message), the
  // handoff's structured result is in the trace.
  assert.equal(r.structuredContent, undefined, JSON.stringify(r.structuredContent));
  assert.ok(!JSON.stringify(r).includes('"nextTool"'), `nextTool left in the result: ${JSON.stringify(r._meta)}`);

  const trace = r._meta?.['mcpgw/chain'];
  assert.ok(Array.isArray(trace), `no _meta["mcpgw/chain"]: ${JSON.stringify(r._meta)}`);
  assert.equal(trace.length, 2, JSON.stringify(trace));
  assert.deepEqual(
    trace.map(({ tool, arguments: a, isError }) => ({ tool, arguments: a, isError })),
    [
      { tool: 'bank:prepare_money_transfer', arguments: ARGS, isError: false },
      { tool: 'bank:request_agent_handoff', arguments: { reason: REASON }, isError: false },
    ],
  );
  for (const h of trace) assert.ok(typeof h.ms === 'number' && h.ms >= 0, JSON.stringify(h));
  assert.equal(trace[0].structuredContent, undefined);
  assert.deepEqual(trace[1].structuredContent, { ticketId: m[1], reason: REASON, status: 'queued' });
  return m[1];
}

test(
  'HTTP: prepare_money_transfer on the locked account → locked message + handoff in one result',
  withDiagnostics(async () => {
    const t1 = await checkTransfer(http.client);
    // Each call is a new chain (a new ticket), not a cached answer.
    const t2 = await checkTransfer(http.client);
    assert.notEqual(t1, t2);
  }),
);

test(
  'stdio: the same chain for a client that launches mcpgw --stdio',
  withDiagnostics(async () => {
    await checkTransfer(stdio.client);
  }),
);

test(
  'an unlocked source account has no nextTool: the prepared transfer comes back alone',
  withDiagnostics(async () => {
    const r = await http.client.callTool({ name: 'bank:prepare_money_transfer', arguments: { ...ARGS, fromAccountId: 'acc_savings_001', toAccountId: 'acc_checking_001' } });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.equal(r.content.length, 1);
    assert.match(r.content[0].text, /^Transfer trf_\d+ prepared: 50\.00 USD/);
    assert.equal(r.structuredContent.status, 'prepared');
  }),
);
