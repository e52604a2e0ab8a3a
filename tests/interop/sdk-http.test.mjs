// The official TypeScript SDK client (1.32.2) against the gateway over
// Streamable HTTP: bank over stdio and toolbox over HTTP behind it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SUPPORTED_VERSIONS, TOOLBOX, bankStdio, httpServer, requireBinaries, startGateway, startUpstreamHttp, withDiagnostics } from '../integration/harness.mjs';
import { connectSdkHttp, gatewayChecks } from './common.mjs';

let gw;
let sdk; // {client, transport}
let refFail;

before(async () => {
  requireBinaries();
  const toolbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  gw = await startGateway({ servers: [bankStdio(), httpServer('toolbox', toolbox.url)] });
  // toolbox's own answer, through the same SDK, for comparison.
  const direct = await connectSdkHttp(toolbox.url);
  refFail = await direct.client.callTool({ name: 'fail', arguments: { message: 'nope' } });
  await direct.client.close();
  sdk = await connectSdkHttp(gw.url);
});

after(async () => {
  await sdk?.client.close();
});

test(
  'SDK connects over Streamable HTTP and negotiates a session',
  withDiagnostics(async () => {
    const info = sdk.client.getServerVersion();
    assert.equal(typeof info?.name, 'string');
    assert.ok(sdk.client.getServerCapabilities()?.tools);
    assert.match(sdk.transport.sessionId ?? '', /^[0-9a-fA-F]{32}$/);
    assert.ok(SUPPORTED_VERSIONS.includes(sdk.transport.protocolVersion), `protocol ${sdk.transport.protocolVersion}`);
    await sdk.client.ping();
  }),
);

for (const [name, check] of Object.entries(gatewayChecks)) {
  test(
    `HTTP: ${name}`,
    withDiagnostics(async () => check(sdk.client, { refFail })),
  );
}

test(
  'HTTP: terminateSession ends the session on the gateway',
  withDiagnostics(async () => {
    const s = await connectSdkHttp(gw.url);
    const sid = s.transport.sessionId;
    await s.transport.terminateSession();
    assert.equal(s.transport.sessionId, undefined);
    await s.client.close();
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await res.text();
    assert.equal(res.status, 404);
  }),
);
