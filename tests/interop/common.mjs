// Shared pieces of the interop suites: the official SDK client (pinned in
// package.json) connected to the real gateway over either transport.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCPGW, REPO, addDiagnostics } from '../integration/harness.mjs';

export { Client, McpError, StdioClientTransport, StreamableHTTPClientTransport };

export function newClient(name = 'mcpgw-interop') {
  return new Client({ name, version: '1.0.0' }, { capabilities: {} });
}

/** SDK client over Streamable HTTP to `url`. */
export async function connectSdkHttp(url) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

/**
 * SDK client that launches `mcpgw --config FILE --stdio` itself, the way MCP
 * hosts launch servers. Its stderr is kept for failure diagnostics.
 */
export async function connectSdkStdio(configPath, { env = {} } = {}) {
  const client = newClient();
  const transport = new StdioClientTransport({
    command: MCPGW,
    args: ['--config', configPath, '--stdio', '--log-level', 'debug'],
    cwd: REPO,
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (c) => {
    if (stderr.length < 512 * 1024) stderr += c;
  });
  addDiagnostics(`mcpgw --stdio launched by the SDK (${configPath}) stderr`, () => stderr);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** Asserts that `promise` rejects with an McpError carrying `code`. */
export async function assertMcpError(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof McpError, `not an McpError: ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, code, `McpError code ${err.code}: ${err.message}`);
    return true;
  });
}

/**
 * The checks both transports must pass, as named test bodies taking a
 * connected SDK client. `refFail` is toolbox's own `fail` result, to compare.
 */
export const gatewayChecks = {
  'listTools shows bank:prepare_money_transfer with its inputSchema': async (client) => {
    const { tools } = await client.listTools();
    const pmt = tools.find((t) => t.name === 'bank:prepare_money_transfer');
    assert.ok(pmt, `bank:prepare_money_transfer missing from ${tools.map((t) => t.name)}`);
    assert.match(pmt.description, /^\[Proxied from bank\] /);
    assert.equal(pmt.inputSchema.type, 'object');
    for (const p of ['fromAccountId', 'toAccountId', 'amount', 'memo']) assert.ok(pmt.inputSchema.properties[p], `no ${p}`);
    assert.deepEqual([...pmt.inputSchema.required].sort(), ['amount', 'fromAccountId', 'toAccountId']);
    assert.ok(tools.some((t) => t.name === 'toolbox:echo'));
    const welcome = tools.find((t) => t.name === 'bank:welcome_customer');
    assert.equal(welcome?._meta?.welcomeTool, true);
  },
  'calls reach two different upstreams': async (client) => {
    await client.listTools(); // lets the SDK learn output schemas and validate structuredContent
    const accounts = await client.callTool({ name: 'bank:list_accounts', arguments: {} });
    assert.equal(accounts.isError, undefined);
    assert.deepEqual(
      accounts.structuredContent.accounts.map((a) => [a.accountId, a.balance, a.isLocked]),
      [
        ['acc_checking_001', 2543.17, true],
        ['acc_savings_001', 15020.5, false],
        ['acc_credit_001', -432.1, false],
      ],
    );
    const add = await client.callTool({ name: 'toolbox:add', arguments: { a: 1.5, b: 2.25 } });
    assert.deepEqual(add.structuredContent, { sum: 3.75 });
    assert.deepEqual(add.content, [{ type: 'text', text: '3.75' }]);
    const echo = await client.callTool({ name: 'toolbox:echo', arguments: { text: 'interop ✓' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'interop ✓' }]);
  },
  'isError results come back unchanged': async (client, { refFail }) => {
    const fail = await client.callTool({ name: 'toolbox:fail', arguments: { message: 'nope' } });
    assert.equal(fail.isError, true);
    assert.deepEqual(fail, refFail);
    await client.listTools();
    const bal = await client.callTool({ name: 'bank:get_account_balance', arguments: { accountId: 'acc_missing' } });
    assert.equal(bal.isError, true);
    assert.deepEqual(bal.content, [{ type: 'text', text: 'Account not found: acc_missing' }]);
  },
  'an unknown tool is an McpError -32602': async (client) => {
    await assertMcpError(client.callTool({ name: 'bank:does_not_exist', arguments: {} }), -32602);
    await assertMcpError(client.callTool({ name: 'toolbox_echo', arguments: { text: 'x' } }), -32602);
    // The connection is still usable afterwards.
    const echo = await client.callTool({ name: 'toolbox:echo', arguments: { text: 'still here' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'still here' }]);
  },
};
