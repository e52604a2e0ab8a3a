// The official TypeScript SDK client (1.32.2) launching `mcpgw --stdio`
// itself, as MCP hosts do, with bank (stdio) and toolbox (HTTP) behind it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLBOX,
  bankStdio,
  descendants,
  httpServer,
  procStat,
  requireBinaries,
  startUpstreamHttp,
  tempDir,
  waitGone,
  withDiagnostics,
  writeConfig,
} from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio, gatewayChecks } from './common.mjs';

let sdk; // {client, transport}
let refFail;

before(async () => {
  requireBinaries();
  const toolbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  const direct = await connectSdkHttp(toolbox.url);
  refFail = await direct.client.callTool({ name: 'fail', arguments: { message: 'nope' } });
  await direct.client.close();
  const config = writeConfig(tempDir(), { servers: [bankStdio(), httpServer('toolbox', toolbox.url)] });
  sdk = await connectSdkStdio(config);
});

after(async () => {
  await sdk?.client.close();
});

test(
  'SDK connects over stdio',
  withDiagnostics(async () => {
    assert.equal(typeof sdk.client.getServerVersion()?.name, 'string');
    assert.ok(sdk.client.getServerCapabilities()?.tools);
    await sdk.client.ping();
  }),
);

for (const [name, check] of Object.entries(gatewayChecks)) {
  test(
    `stdio: ${name}`,
    withDiagnostics(async () => check(sdk.client, { refFail })),
  );
}

test(
  'stdio: closing the client ends mcpgw and its upstream children',
  withDiagnostics(async () => {
    const pid = sdk.transport.pid;
    assert.ok(pid);
    const children = descendants(pid);
    assert.ok(children.some((s) => s.comm.startsWith('bank-server')), JSON.stringify(children));
    const self = procStat(pid);
    await sdk.client.close();
    sdk = undefined;
    assert.deepEqual(await waitGone([self], 5000), [], 'mcpgw still running after the client closed');
    assert.deepEqual(await waitGone(children, 5000), [], 'upstream children outlived the gateway');
  }),
);
