// Live catalog with the official SDK client: the toolbox upstream restarts
// with a different number of tools (its --tools count is read from a file at
// each start), the gateway relists it and tells clients with an open GET
// stream notifications/tools/list_changed; the SDK client re-lists and sees
// (and can call) the new tools, and no longer sees removed ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  TOOLBOX,
  bankStdio,
  connectHttp,
  openGetStream,
  pidFromResult,
  requireBinaries,
  startGateway,
  tempDir,
  withDiagnostics,
  withTimeout,
} from '../integration/harness.mjs';
import { Client, StreamableHTTPClientTransport, assertMcpError } from './common.mjs';

let gw;
let countFile;
const clients = [];

before(async () => {
  requireBinaries();
  const dir = tempDir('mcpgw-listchanged-');
  countFile = path.join(dir, 'tools-count');
  writeFileSync(countFile, '2\n');
  const toolbox = {
    name: 'toolbox',
    transport: 'stdio',
    command: 'sh',
    args: ['-c', `exec ${JSON.stringify(TOOLBOX)} --tools "$(cat ${JSON.stringify(countFile)})"`],
  };
  gw = await startGateway({ modes: { readonly: { include_slices: ['read'] } }, servers: [bankStdio(), toolbox] });
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

/** SDK client that resolves once its GET stream is open, counting tools/list_changed notifications. */
async function sdkClient(url) {
  let opened;
  const getOpen = new Promise((r) => {
    opened = r;
  });
  const client = new Client({ name: 'mcpgw-list-changed', version: '1.0.0' }, { capabilities: {} });
  const state = { client, notes: 0, waiters: [] };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    state.notes++;
    for (const w of state.waiters.splice(0)) w();
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method || 'GET') === 'GET' && res.ok) opened();
      return res;
    },
  });
  await client.connect(transport);
  clients.push(client);
  await withTimeout(getOpen, 10000, 'the SDK GET stream to open');
  /** Resolves when more than `n` notifications have arrived. */
  state.after = (n, ms = 15000) =>
    withTimeout(
      new Promise((resolve) => {
        const check = () => (state.notes > n ? resolve() : state.waiters.push(check));
        check();
      }),
      ms,
      `notifications/tools/list_changed #${n + 1}`,
    );
  return state;
}

const genNames = (tools) => tools.map((t) => t.name).filter((n) => /^toolbox:gen_\d+$/.test(n)).sort();

/**
 * Waits for a list_changed notification after `seen`, re-lists, and repeats
 * (a restart may be announced in more than one step) until `done(tools)`.
 */
async function relistAfterNotification(state, seen, done) {
  let n = seen;
  for (let round = 0; round < 4; round++) {
    await state.after(n);
    n = state.notes;
    const { tools } = await state.client.listTools();
    if (done(tools)) return tools;
  }
  throw new Error(`no list after ${n} notifications satisfied the condition`);
}

test(
  'the SDK client gets tools/list_changed when toolbox restarts with more tools, then with none, and re-lists to see it',
  withDiagnostics(async () => {
    const sdk = await sdkClient(gw.url);
    // A raw client with its own GET stream, and one in a mode that does not show gen_* (slice other).
    const raw = await connectHttp(gw.url);
    const readonly = await connectHttp(`${gw.url}/readonly`);
    const rawStream = await openGetStream(raw);
    assert.equal(rawStream.status, 200);

    const before0 = await sdk.client.listTools();
    assert.deepEqual(genNames(before0.tools), ['toolbox:gen_0', 'toolbox:gen_1']);
    const pid1 = pidFromResult(await sdk.client.callTool({ name: 'toolbox:pid', arguments: {} }));

    // Grow: the next start of toolbox has five generated tools.
    writeFileSync(countFile, '5\n');
    let seen = sdk.notes;
    const crash = await sdk.client.callTool({ name: 'toolbox:crash', arguments: {} });
    assert.equal(crash.isError, true, JSON.stringify(crash));
    const grown = await relistAfterNotification(sdk, seen, (tools) => genNames(tools).length === 5);
    assert.deepEqual(genNames(grown), ['toolbox:gen_0', 'toolbox:gen_1', 'toolbox:gen_2', 'toolbox:gen_3', 'toolbox:gen_4']);
    const gen4 = await sdk.client.callTool({ name: 'toolbox:gen_4', arguments: {} });
    assert.deepEqual(gen4.content, [{ type: 'text', text: 'gen_4' }]);
    const pid2 = pidFromResult(await sdk.client.callTool({ name: 'toolbox:pid', arguments: {} }));
    assert.notEqual(pid2, pid1, 'toolbox did not restart');
    // The raw client's GET stream carried the notification too.
    await rawStream.waitFor((m) => m.method === 'notifications/tools/list_changed');
    const rawNames = (await raw.listAllTools()).tools.map((t) => t.name);
    assert.ok(rawNames.includes('toolbox:gen_4'), rawNames.join(' '));
    // The mode still applies to the new tools.
    const roNames = (await readonly.listAllTools()).tools.map((t) => t.name);
    assert.deepEqual(roNames.filter((n) => n.startsWith('toolbox:')).sort(), ['toolbox:meta', 'toolbox:pid']);
    assert.equal((await readonly.request('tools/call', { name: 'toolbox:gen_4', arguments: {} })).error?.code, -32602);

    // Shrink: no generated tools at the next start; the removed ones are unknown.
    writeFileSync(countFile, '0\n');
    seen = sdk.notes;
    await sdk.client.callTool({ name: 'toolbox:crash', arguments: {} });
    const shrunk = await relistAfterNotification(sdk, seen, (tools) => genNames(tools).length === 0 && tools.some((t) => t.name === 'toolbox:echo'));
    assert.ok(shrunk.some((t) => t.name === 'bank:list_accounts'), 'bank tools vanished');
    await assertMcpError(sdk.client.callTool({ name: 'toolbox:gen_4', arguments: {} }), -32602);
    const echo = await sdk.client.callTool({ name: 'toolbox:echo', arguments: { text: 'after two restarts' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'after two restarts' }]);
    rawStream.close();
    await raw.close();
    await readonly.close();
  }),
);
