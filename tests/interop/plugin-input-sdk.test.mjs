// Client input through mcpgw with the official SDK clients, over
// Streamable HTTP:
//   - the v1 client (@modelcontextprotocol/sdk 1.32.2, stateful era)
//     answers deploy_flow's elicitation and sampling with its request
//     handlers and gets the final result; a decline or an UNSAFE verdict
//     gets an isError result and nothing is deployed;
//   - the v2 client (@modelcontextprotocol/client 2.4.0, versionNegotiation
//     auto, so 2026-07-28) fulfils the input_required rounds with the same
//     handlers and gets the same final result;
//   - bank-server --transfer-tool transfer_money (both kit eras) with the
//     v1 client: confirmed → money moved; declined → refused, nothing moves.
// The act of `deploy` is its call of the toolbox's `echo`: the toolbox
// serves Streamable HTTP behind a tap that sees every tools/call reaching it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { BANK, BUILD, TOOLBOX, requireBinaries, startGateway, startTap, startUpstreamHttp, withDiagnostics } from '../integration/harness.mjs';
import { Client } from './common.mjs';

const DEPLOY_FLOW = path.join(BUILD, 'plugins', 'libdeploy_flow.so');
const MODERN = '2026-07-28';
let gw;
let tap;
const open = [];

const bank = (name, era) => ({ name, transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money', '--era', era], timeout_ms: 30000 });

before(async () => {
  requireBinaries(BANK, TOOLBOX, DEPLOY_FLOW);
  const toolbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  tap = await startTap(toolbox.url);
  gw = await startGateway({
    welcome: { strategy: 'none' },
    servers: [{ name: 'toolbox', transport: 'http', url: tap.url, timeout_ms: 20000 }, bank('bank', 'legacy'), bank('bank26', '2026')],
    plugins: [{ path: DEPLOY_FLOW, config: { server: 'toolbox' } }],
  });
});

after(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
});

/** Every echo of `service` that reached the toolbox (the act). */
const acts = (service) => tap.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'echo' && String(b.params?.arguments?.text).startsWith(`deploy ${service} `));

const TARGET_SCHEMA = {
  type: 'object',
  properties: { target: { type: 'string', title: 'Deployment target', enum: ['staging', 'production'] } },
  required: ['target'],
};
const safetyPrompt = (service, version, target) => `Is it safe to deploy ${service} ${version} to ${target}? Answer SAFE or UNSAFE and why.`;

/**
 * The answers a client gives: `elicit(params)` and `sample(params)` return
 * the results; `asked` records every request as {method, params}.
 */
function answers({ target = 'staging', verdict = 'SAFE: nothing else is deploying.', elicit, confirm } = {}) {
  const asked = [];
  return {
    asked,
    elicit: (params) => {
      asked.push({ method: 'elicitation/create', params });
      if (elicit) return elicit;
      if (confirm !== undefined) return { action: 'accept', content: { confirm } };
      return { action: 'accept', content: { target } };
    },
    sample: (params) => {
      asked.push({ method: 'sampling/createMessage', params });
      return { role: 'assistant', content: { type: 'text', text: verdict }, model: 'test-model', stopReason: 'endTurn' };
    },
  };
}

/** A v1 (1.32.2) client declaring elicitation and sampling, answering with `a`. */
async function connectV1(name, a) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, (req) => a.elicit(req.params));
  client.setRequestHandler(CreateMessageRequestSchema, (req) => a.sample(req.params));
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  open.push(client);
  return client;
}

/** A v2 (2.4.0) client, versionNegotiation auto, answering with `a`. */
async function connectV2(name, a) {
  const client = new ClientV2({ name, version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('elicitation/create', async (req) => a.elicit(req.params));
  client.setRequestHandler('sampling/createMessage', async (req) => a.sample(req.params));
  await client.connect(new TransportV2(new URL(gw.url)));
  open.push(client);
  return client;
}

/** The checks of a successful deploy, whatever the client. */
async function deploysOk(client, a, service) {
  await client.listTools(); // the client learns deploy's outputSchema and checks structuredContent against it
  const r = await client.callTool({ name: 'deploy', arguments: { service, version: '2.1.0' } });
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.deepEqual(r.structuredContent, { service, version: '2.1.0', target: 'staging', safety: 'SAFE: nothing else is deploying.', deployed: true });
  assert.deepEqual(r.content, [{ type: 'text', text: `Deployed ${service} 2.1.0 to staging.` }]);
  assert.deepEqual(
    a.asked,
    [
      { method: 'elicitation/create', params: { message: `Where should ${service} 2.1.0 be deployed?`, requestedSchema: TARGET_SCHEMA } },
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: safetyPrompt(service, '2.1.0', 'staging') } }], maxTokens: 200 } },
    ],
  );
  assert.deepEqual(acts(service).map((b) => b.params.arguments), [{ text: `deploy ${service} 2.1.0 to staging` }]);
}

// ---------------------------------------------------------------------------
// deploy_flow

test(
  'v1 client (1.32.2): its elicitation and sampling handlers answer deploy\'s rounds and the call returns the final result; the act runs once',
  withDiagnostics(async () => {
    const a = answers();
    const client = await connectV1('v1-deployer', a);
    await deploysOk(client, a, 'web-v1');
  }),
);

test(
  'v1 client: a declined elicitation gets an isError result, the model is never asked and nothing is deployed',
  withDiagnostics(async () => {
    const a = answers({ elicit: { action: 'decline' } });
    const client = await connectV1('v1-decliner', a);
    const r = await client.callTool({ name: 'deploy', arguments: { service: 'web-declined', version: '1.0.0' } });
    assert.equal(r.isError, true);
    assert.deepEqual(r.content, [{ type: 'text', text: 'Not deployed: no deployment target (the user declined).' }]);
    assert.deepEqual(a.asked.map((q) => q.method), ['elicitation/create']);
    assert.equal(acts('web-declined').length, 0);
  }),
);

test(
  'v1 client: an UNSAFE verdict from its model gets an isError refusal and nothing is deployed',
  withDiagnostics(async () => {
    const a = answers({ target: 'production', verdict: 'UNSAFE: a migration is running.' });
    const client = await connectV1('v1-unsafe', a);
    const r = await client.callTool({ name: 'deploy', arguments: { service: 'web-unsafe', version: '1.0.0' } });
    assert.equal(r.isError, true);
    assert.deepEqual(r.content, [{ type: 'text', text: 'Not deployed: the safety check did not say SAFE: UNSAFE: a migration is running.' }]);
    assert.deepEqual(a.asked.map((q) => q.method), ['elicitation/create', 'sampling/createMessage']);
    assert.equal(acts('web-unsafe').length, 0);
  }),
);

test(
  'v2 client (2.4.0, versionNegotiation auto → 2026-07-28): it fulfils the input_required rounds itself and gets the same final result',
  withDiagnostics(async () => {
    const a = answers();
    const client = await connectV2('v2-deployer', a);
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    await deploysOk(client, a, 'web-v2');
  }),
);

test(
  'v2 client (modern): a declined elicitation gets an isError result and nothing is deployed',
  withDiagnostics(async () => {
    const a = answers({ elicit: { action: 'decline' } });
    const client = await connectV2('v2-decliner', a);
    assert.equal(client.getProtocolEra(), 'modern');
    const r = await client.callTool({ name: 'deploy', arguments: { service: 'web-v2-declined', version: '1.0.0' } });
    assert.equal(r.isError, true);
    assert.deepEqual(r.content, [{ type: 'text', text: 'Not deployed: no deployment target (the user declined).' }]);
    assert.deepEqual(a.asked.map((q) => q.method), ['elicitation/create']);
    assert.equal(acts('web-v2-declined').length, 0);
  }),
);

// ---------------------------------------------------------------------------
// bank-server transfer_money, v1 client, both kit eras

const SAVINGS = 'acc_savings_001';
const CREDIT = 'acc_credit_001';

async function balances(client, server) {
  const out = [];
  for (const accountId of [SAVINGS, CREDIT]) out.push((await client.callTool({ name: `${server}:get_account_balance`, arguments: { accountId } })).structuredContent.balance);
  return out;
}

for (const [server, era] of [
  ['bank', 'legacy'],
  ['bank26', '2026'],
]) {
  test(
    `bank transfer_money (kit era ${era}) with the v1 client: declined → refused and nothing moves; confirmed → money moved`,
    withDiagnostics(async () => {
      const args = { fromAccountId: SAVINGS, toAccountId: CREDIT, amount: 20.25 };
      const what = `20.25 USD from High Yield Savings (${SAVINGS}) to Rewards Credit Card (${CREDIT})`;
      const declining = answers({ elicit: { action: 'decline' } });
      const decliner = await connectV1(`v1-bank-decliner-${era}`, declining);
      assert.deepEqual(await balances(decliner, server), [15020.5, -432.1]);
      const refused = await decliner.callTool({ name: `${server}:transfer_money`, arguments: args });
      assert.equal(refused.isError, true);
      assert.deepEqual(refused.content, [{ type: 'text', text: `Not transferred: you did not confirm the transfer of ${what}. No money has moved.` }]);
      assert.deepEqual(
        declining.asked,
        [{ method: 'elicitation/create', params: { message: `Transfer ${what}?`, requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm the transfer' } }, required: ['confirm'] } } }],
      );
      assert.deepEqual(await balances(decliner, server), [15020.5, -432.1]);

      const confirming = answers({ confirm: true });
      const confirmer = await connectV1(`v1-bank-confirmer-${era}`, confirming);
      const moved = await confirmer.callTool({ name: `${server}:transfer_money`, arguments: args });
      assert.equal(moved.isError, undefined, JSON.stringify(moved));
      const { transferId, ...rest } = moved.structuredContent;
      assert.match(transferId, /^trf_\d{6}$/);
      assert.deepEqual(rest, { status: 'completed', fromAccountId: SAVINGS, toAccountId: CREDIT, amount: 20.25, currency: 'USD', fromBalance: 15000.25, toBalance: -411.85 });
      assert.deepEqual(confirming.asked.map((q) => q.method), ['elicitation/create']);
      assert.deepEqual(await balances(confirmer, server), [15000.25, -411.85]);
    }),
  );
}
