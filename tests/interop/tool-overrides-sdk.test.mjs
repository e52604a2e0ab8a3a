// servers[].tools with the official TypeScript SDK client, over Streamable
// HTTP and over stdio (the SDK launching `mcpgw --stdio`): the client sees
// the overridden tool, its calls reach the upstream's tool with the
// upstream's argument names and the fixed and default values (the fixture
// answers with what it received), a fixed argument is an McpError -32602, a
// nextTool naming the upstream's tool and a view's call by the upstream's
// name still work.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MCPGW, requireBinaries, startGateway, tempDir, textsOf, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { CONFIG, MAPPED } from '../integration/overrides-config.mjs';
import { assertMcpError, connectSdkHttp, connectSdkStdio } from './common.mjs';

function checks(connect) {
  let sdk;
  before(async () => {
    sdk = await connect();
  });
  after(async () => {
    await sdk?.client.close();
  });

  test(
    'listTools: the overridden definition',
    withDiagnostics(async () => {
      const { tools } = await sdk.client.listTools();
      const t = tools.find((x) => x.name === 'tracker:open_ticket');
      assert.ok(t, tools.map((x) => x.name).join(', '));
      assert.ok(!tools.some((x) => x.name === 'tracker:create_issue'));
      assert.equal(t.title, 'Open ticket');
      assert.deepEqual(Object.keys(t.inputSchema.properties), ['title', 'details', 'labels']);
      assert.deepEqual(t.inputSchema.required, ['title', 'details']);
      assert.deepEqual(t.annotations, { destructiveHint: false, openWorldHint: true });
    }),
  );

  test(
    'callTool: mapped back; a fixed argument is -32602',
    withDiagnostics(async () => {
      const r = await sdk.client.callTool({ name: 'tracker:open_ticket', arguments: { title: 'T', details: 'from the SDK' } });
      assert.deepEqual(r.structuredContent, MAPPED({ title: 'T', body: 'from the SDK' }));
      await assertMcpError(
        sdk.client.callTool({ name: 'tracker:open_ticket', arguments: { title: 'T', details: 'D', repo: 'evil/repo' } }),
        -32602,
      );
    }),
  );

  test(
    "a nextTool naming the upstream's tool, and a view's call by the upstream's name",
    withDiagnostics(async () => {
      const chained = await sdk.client.callTool({
        name: 'tracker:triage',
        arguments: { next: 'create_issue', next_arguments: { title: 'C', body: 'chained' } },
      });
      assert.notEqual(chained.isError, true, JSON.stringify(chained));
      const got = textsOf(chained).filter((t) => t.startsWith('{')).map((t) => JSON.parse(t));
      assert.deepEqual(got, [MAPPED({ title: 'C', body: 'chained' })]);
      const view = await sdk.client.callTool({
        name: 'create_issue',
        arguments: { repo: 'view/repo', title: 'V', body: 'from the view' },
        _meta: { 'mcpgw/server': 'tracker' },
      });
      assert.deepEqual(view.structuredContent, MAPPED({ title: 'V', body: 'from the view' }));
    }),
  );
}

before(() => requireBinaries(MCPGW));

describe('over Streamable HTTP', () => {
  let gw;
  checks(async () => {
    gw = await startGateway(CONFIG);
    return connectSdkHttp(gw.url);
  });
  after(async () => {
    await gw?.proc.stop();
  });
});

describe('over stdio', () => {
  checks(() => connectSdkStdio(writeConfig(tempDir(), CONFIG)));
});
