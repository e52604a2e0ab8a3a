// A tool that declares an outputSchema and answers with a nextTool, called
// through mcpgw by both official SDK generations: the v1 client
// (@modelcontextprotocol/sdk 1.32.2, over Streamable HTTP and launching
// `mcpgw --stdio`) and the v2 client (@modelcontextprotocol/client 2.4.0, in
// its legacy mode and negotiating 2026-07-28). Both validate a result's
// structuredContent against the called tool's outputSchema and require one
// when the tool declares a schema: a merged result that carried the last
// hop's structuredContent made them throw (-32602 "Structured content does
// not match the tool's output schema"), one without any made them throw
// ("has an output schema but did not return structured content"). Each
// client here gets the whole chain, every hop's text in `content` and in
// the structuredContent (where the schema allows), every hop's structured
// result in `_meta["mcpgw/chain"]`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { bankStdio, requireBinaries, startGateway, tempDir, toolboxStdio, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio } from './common.mjs';

const CONFIG = {
  welcome: { strategy: 'none' },
  servers: [toolboxStdio({ args: ['--chain-tool', 'chain', '--typed-chain-tool', 'typed', '--closed-chain-tool', 'closed'] }), bankStdio()],
};
const BALANCE = 'The balance of High Yield Savings (acc_savings_001) is 15020.50 USD.';
const clients = {};

async function connectV2(url, mode) {
  const client = new ClientV2({ name: `mcpgw-interop-v2-${mode ?? 'legacy'}`, version: '1.0.0' }, { capabilities: {}, ...(mode ? { versionNegotiation: { mode } } : {}) });
  await client.connect(new HttpTransportV2(new URL(url)));
  return client;
}

before(async () => {
  requireBinaries();
  const gw = await startGateway(CONFIG);
  clients['v1 over HTTP'] = (await connectSdkHttp(gw.url)).client;
  clients['v1 launching mcpgw --stdio'] = (await connectSdkStdio(writeConfig(tempDir(), CONFIG))).client;
  clients['v2 legacy over HTTP'] = await connectV2(gw.url);
  const modern = await connectV2(gw.url, 'auto');
  assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
  clients['v2 2026-07-28 over HTTP'] = modern;
});

after(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close().catch(() => {})));
});

const texts = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text);
const trace = (r) => r._meta?.['mcpgw/chain'] ?? assert.fail(`no _meta["mcpgw/chain"]: ${JSON.stringify(r._meta)}`);

async function typedChains(client) {
  // The SDK learns the output schemas here and validates every result after.
  const { tools } = await client.listTools();
  assert.ok(tools.find((t) => t.name === 'toolbox:typed')?.outputSchema, 'toolbox:typed lists no outputSchema');

  // Ends on the bank, whose structured result does not conform to {text}.
  const bank = await client.callTool({
    name: 'toolbox:typed',
    arguments: { text: 'a', next: 'chain', next_arguments: { text: 'b', next: 'bank:get_account_balance', next_arguments: { accountId: 'acc_savings_001' } } },
  });
  assert.ok(!bank.isError, JSON.stringify(bank));
  assert.deepEqual(texts(bank), ['a', 'b', BALANCE]);
  assert.deepEqual(bank.structuredContent, {
    text: 'a',
    'mcpgw/hops': [
      { tool: 'toolbox:typed', text: 'a' },
      { tool: 'toolbox:chain', text: 'b' },
      { tool: 'bank:get_account_balance', text: BALANCE },
    ],
  });
  assert.deepEqual(trace(bank).at(-1).structuredContent, { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' });

  // Three hops, the last with no structuredContent at all.
  const three = await client.callTool({
    name: 'toolbox:typed',
    arguments: { text: 'h0', next: 'chain', next_arguments: { text: 'h1', next: 'typed', next_arguments: { text: 'h2', next: 'echo', next_arguments: { text: 'h3' } } } },
  });
  assert.ok(!three.isError, JSON.stringify(three));
  assert.deepEqual(texts(three), ['h0', 'h1', 'h2', 'h3']);
  assert.deepEqual(trace(three).map((h) => h.tool), ['toolbox:typed', 'toolbox:chain', 'toolbox:typed', 'toolbox:echo']);
  assert.equal(three.structuredContent.text, 'h0');
  assert.deepEqual(three.structuredContent['mcpgw/hops'].map((h) => h.text), ['h0', 'h1', 'h2', 'h3']);

  // additionalProperties: false: the listed schema declares mcpgw/hops, so
  // the validating client accepts the hops there too.
  const closed = await client.callTool({ name: 'toolbox:closed', arguments: { text: 'a', next: 'echo', next_arguments: { text: 'b' } } });
  assert.ok(!closed.isError, JSON.stringify(closed));
  assert.deepEqual(closed.structuredContent, {
    text: 'a',
    'mcpgw/hops': [
      { tool: 'toolbox:closed', text: 'a' },
      { tool: 'toolbox:echo', text: 'b' },
    ],
  });
  assert.deepEqual(texts(closed), ['a', 'b']);
}

for (const name of ['v1 over HTTP', 'v1 launching mcpgw --stdio', 'v2 legacy over HTTP', 'v2 2026-07-28 over HTTP']) {
  test(
    `${name}: typed chains (3 hops, across servers, a closed schema) come back whole, without a validation error`,
    withDiagnostics(() => typedChains(clients[name])),
  );
}
