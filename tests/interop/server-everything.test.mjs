// A third-party upstream: @modelcontextprotocol/server-everything (pinned in
// package.json) launched over stdio by the gateway, used through the
// official SDK client over Streamable HTTP and over stdio.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EVERYTHING, requireBinaries, startGateway, tempDir, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio } from './common.mjs';

const everything = { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 20000 };
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({ servers: [everything] });
});

async function checkEverything(client) {
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const n of ['everything:echo', 'everything:get-sum', 'everything:get-structured-content']) assert.ok(byName[n], `${n} missing from ${Object.keys(byName)}`);
  assert.equal(byName['everything:echo'].description, '[Proxied from everything] Echoes back the input string');
  assert.equal(byName['everything:echo'].title, 'Echo Tool');
  assert.deepEqual(Object.keys(byName['everything:get-sum'].inputSchema.properties).sort(), ['a', 'b']);
  assert.deepEqual(Object.keys(byName['everything:get-structured-content'].outputSchema.properties).sort(), ['conditions', 'humidity', 'mcpgw/hops', 'temperature']); // hops: declared for chains
  assert.deepEqual(byName['everything:get-sum'].annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });

  const echo = await client.callTool({ name: 'everything:echo', arguments: { message: 'through the gateway' } });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: through the gateway' }]);

  const sum = await client.callTool({ name: 'everything:get-sum', arguments: { a: 19, b: 23 } });
  assert.deepEqual(sum.content, [{ type: 'text', text: 'The sum of 19 and 23 is 42.' }]);

  const weather = await client.callTool({ name: 'everything:get-structured-content', arguments: { location: 'Chicago' } });
  const expected = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 };
  assert.deepEqual(weather.structuredContent, expected);
  assert.deepEqual(JSON.parse(weather.content[0].text), expected);

  // The upstream's own argument validation comes back as its error, not a hang.
  const bad = await client.callTool({ name: 'everything:get-sum', arguments: { a: 'x', b: 1 } }).then(
    (r) => ({ result: r }),
    (e) => ({ error: e }),
  );
  assert.ok(bad.error || bad.result.isError, `invalid arguments accepted: ${JSON.stringify(bad)}`);
}

test(
  'server-everything through the gateway over Streamable HTTP (SDK client)',
  withDiagnostics(async () => {
    const { client } = await connectSdkHttp(gw.url);
    try {
      await checkEverything(client);
    } finally {
      await client.close();
    }
  }),
);

test(
  'server-everything through the gateway over stdio (SDK client)',
  withDiagnostics(async () => {
    const config = writeConfig(tempDir(), { servers: [everything] });
    const { client } = await connectSdkStdio(config);
    try {
      await checkEverything(client);
    } finally {
      await client.close();
    }
  }),
);
