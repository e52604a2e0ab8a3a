// The example composite plugin driven by the official TypeScript SDK client
// (1.32.2), over Streamable HTTP and over stdio (the SDK launches
// `mcpgw --stdio`): it lists the composites next to the proxied tools and
// calls each one, including a parallel merge and a handoff that the gateway
// resolves before answering.
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILD, bankStdio, requireBinaries, startGateway, tempDir, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio } from './common.mjs';

const CONFIG = {
  welcome: { strategy: 'none' },
  servers: [bankStdio(), { name: 'rates', transport: 'stdio', command: path.join(BUILD, 'examples', 'rates-server'), args: [] }],
  plugins: [{ path: path.join(BUILD, 'plugins', 'libbanking_composites.so'), config: { safe_transfer: { max_amount: 1000 } } }],
};
const clients = {};

before(async () => {
  requireBinaries();
  const gw = await startGateway(CONFIG);
  clients.http = (await connectSdkHttp(gw.url)).client;
  clients.stdio = (await connectSdkStdio(writeConfig(tempDir(), CONFIG))).client;
});

after(async () => {
  await clients.http?.close();
  await clients.stdio?.close();
});

for (const transport of ['http', 'stdio']) {
  test(
    `SDK client over ${transport}: the composites are listed and each answers`,
    withDiagnostics(async () => {
      const client = clients[transport];
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['get_chained_info', 'account_overview', 'safe_transfer', 'bank:list_accounts', 'rates:get_exchange_rates'])
        assert.ok(names.includes(n), `${n} not in ${names.join(', ')}`);

      const info = await client.callTool({ name: 'get_chained_info', arguments: { includeTimestamp: true } });
      assert.equal(info.structuredContent.source, 'bank:list_accounts');
      assert.equal(info.structuredContent.data.accounts.length, 3);

      const overview = await client.callTool({ name: 'account_overview', arguments: { currency: 'GBP' } });
      assert.equal(overview.isError, undefined, JSON.stringify(overview));
      assert.deepEqual(overview.structuredContent.total, { currency: 'GBP', amount: Math.round(17131.57 * 0.79 * 100) / 100 });
      assert.equal(overview.structuredContent.partial, false);

      const handoff = await client.callTool({
        name: 'safe_transfer',
        arguments: { fromAccountId: 'acc_savings_001', toAccountId: 'acc_checking_001', amount: 2500 },
      });
      assert.equal(handoff.isError, undefined, JSON.stringify(handoff));
      assert.equal(handoff.content.length, 2);
      assert.match(handoff.content[1].text, /^I've requested a handoff to a customer service agent/);
      assert.deepEqual(handoff._meta['mcpgw/chain'].map((h) => h.tool), ['safe_transfer', 'bank:request_agent_handoff']);
    }),
  );
}
