// Tool search with real clients: call_tool of a tool that asks the client
// (bank-server --transfer-tool transfer_money, elicitation "confirm") works
// in every era, as a direct call of that tool would:
//   - the v1 SDK client (1.32.2, 2025-11-25) answers mid-call with its
//     elicitation handler;
//   - the v2 SDK client (2.4.0, 2026-07-28) fulfils input_required itself;
//   - a saga client (tools/callSaga of call_tool) gets the suspended step and
//     completes it with tools/resumeSaga;
// and progress of a call_tool reaches the v1 client (server-everything's
// trigger-long-running-operation).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { BANK, EVERYTHING, connectHttp, requireBinaries, startGateway, withDiagnostics } from '../integration/harness.mjs';
import { Client } from './common.mjs';

const SAVINGS = 'acc_savings_001';
const CREDIT = 'acc_credit_001';
const SAGAS = { methods: ['tools/callSaga', 'tools/resumeSaga'], stepTypes: ['elicitation', 'sampling', 'roots'] };
let gw;
let url;

before(async () => {
  requireBinaries(BANK);
  gw = await startGateway({
    welcome: { strategy: 'none' },
    sagas: { secret: 'tool-search-clients-secret-0123456789' },
    modes: { assistant: { discovery: 'search' } },
    servers: [
      { name: 'bank', transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money'], timeout_ms: 30000 },
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 },
    ],
  });
  url = `${gw.url}/assistant`;
});

const transfer = (amount) => ({ name: 'bank:transfer_money', arguments: { fromAccountId: SAVINGS, toAccountId: CREDIT, amount } });
const question = (amount) => ({
  message: `Transfer ${amount.toFixed(2)} USD from High Yield Savings (${SAVINGS}) to Rewards Credit Card (${CREDIT})?`,
  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm the transfer' } }, required: ['confirm'] },
});

function assertMoved(r, amount) {
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.equal(r.structuredContent.status, 'completed', JSON.stringify(r));
  assert.equal(r.structuredContent.amount, amount);
  assert.match(r.structuredContent.transferId, /^trf_\d{6}$/);
}

test(
  'v1 client: search finds bank:transfer_money, call_tool of it asks for confirmation mid-call, the answer moves the money',
  withDiagnostics(async () => {
    const asked = [];
    const client = new Client({ name: 'v1-search', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'transfer money', limit: 3 } });
      assert.equal(found.structuredContent.tools[0].name, 'bank:transfer_money', JSON.stringify(found.structuredContent));
      const r = await client.callTool({ name: 'call_tool', arguments: transfer(1.25) });
      assertMoved(r, 1.25);
      assert.deepEqual(asked, [question(1.25)]);
    } finally {
      await client.close();
    }
  }),
);

test(
  'v1 client: progress of a call made through call_tool reaches the client',
  withDiagnostics(async () => {
    const client = new Client({ name: 'v1-progress', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const seen = [];
      const r = await client.callTool(
        { name: 'call_tool', arguments: { name: 'everything:trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } } },
        undefined,
        { onprogress: (p) => seen.push(p.progress) },
      );
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.ok(seen.length >= 2, `progress seen: ${seen}`);
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `not increasing: ${seen}`);
    } finally {
      await client.close();
    }
  }),
);

test(
  'v2 client (2026-07-28): call_tool of transfer_money comes back input_required, the client answers, the money moves',
  withDiagnostics(async () => {
    const asked = [];
    const client = new ClientV2({ name: 'v2-search', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new TransportV2(new URL(url)));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
      const r = await client.callTool({ name: 'call_tool', arguments: transfer(2.5) });
      assertMoved(r, 2.5);
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, question(2.5).message);
    } finally {
      await client.close();
    }
  }),
);

test(
  'saga client: tools/callSaga of call_tool suspends with the confirmation step; tools/resumeSaga completes the transfer',
  withDiagnostics(async () => {
    const c = await connectHttp(url, { capabilities: { experimental: { 'mcpgw/sagas': SAGAS } } });
    const s = await c.request('tools/callSaga', { name: 'call_tool', arguments: transfer(3.75) });
    assert.equal(s.error, undefined, JSON.stringify(s));
    assert.equal(s.result.state, 'suspended', JSON.stringify(s));
    assert.deepEqual(s.result.steps, [{ type: 'elicitation', stepId: 'confirm', params: question(3.75) }]);
    const done = await c.request('tools/resumeSaga', {
      sagaToken: s.result.sagaToken,
      completedSteps: [{ stepId: 'confirm', result: { action: 'accept', content: { confirm: true } } }],
    });
    assert.equal(done.error, undefined, JSON.stringify(done));
    assertMoved(done.result, 3.75);
    // search_tools through callSaga is answered at once.
    const found = await c.request('tools/callSaga', { name: 'search_tools', arguments: { query: 'account balance' } });
    assert.equal(found.result.structuredContent.tools[0].name, 'bank:get_account_balance');
  }),
);
