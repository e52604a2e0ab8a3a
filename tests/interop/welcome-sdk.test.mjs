// Welcome tools seen by the official SDK client (1.32.2): the selected
// welcome tool's text is part of client.getInstructions(), after the
// configured instructions, over Streamable HTTP and over stdio; the bank's
// own welcome_customer (flagged _meta.welcomeTool) works as one too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOLBOX, bankStdio, requireBinaries, startGateway, tempDir, withDiagnostics, writeConfig } from '../integration/harness.mjs';
import { connectSdkHttp, connectSdkStdio } from './common.mjs';

const toolbox = (name, args = [], extra = {}) => ({ name, transport: 'stdio', command: TOOLBOX, args: ['--name', name, ...args], ...extra });

const CONFIG = {
  instructions: 'You are connected to mcpgw.',
  welcome: { strategy: 'priority' },
  modes: { nowelcome: { description: 'no welcome tools', exclude_tools: ['beta:hello_beta', 'gamma:hello_*'] } },
  servers: [
    toolbox('alpha'),
    toolbox('beta', ['--welcome-tool', 'hello_beta'], { welcome_priority: 1 }),
    toolbox('gamma', ['--welcome-tool', 'hello_gamma', '--welcome-tool', 'hello_gamma2'], { welcome_priority: 2 }),
  ],
};
let gw;
const open = [];

before(async () => {
  requireBinaries();
  gw = await startGateway(CONFIG);
});

after(async () => {
  for (const s of open) await s.client.close();
});

async function sdkHttp(url) {
  const s = await connectSdkHttp(url);
  open.push(s);
  return s;
}

test(
  'HTTP: getInstructions() = configured instructions, a blank line, then the welcome text (gamma, highest priority)',
  withDiagnostics(async () => {
    const { client } = await sdkHttp(gw.url);
    assert.equal(client.getInstructions(), 'You are connected to mcpgw.\n\nwelcome from gamma');
    const calls = await client.callTool({ name: 'gamma:welcome_calls', arguments: {} });
    assert.ok(Number(calls.content[0].text) >= 1);
    // Still listed and callable.
    const { tools } = await client.listTools();
    assert.equal(tools.find((t) => t.name === 'gamma:hello_gamma')?._meta?.welcomeTool, true);
    const r = await client.callTool({ name: 'gamma:hello_gamma', arguments: {} });
    assert.deepEqual(r.content, [{ type: 'text', text: 'welcome from gamma' }]);
  }),
);

test(
  'HTTP, mode nowelcome: only the configured instructions, and no welcome call',
  withDiagnostics(async () => {
    const { client: counter } = await sdkHttp(gw.url);
    const before = Number((await counter.callTool({ name: 'gamma:welcome_calls', arguments: {} })).content[0].text);
    const { client } = await sdkHttp(`${gw.url}/nowelcome`);
    assert.equal(client.getInstructions(), 'You are connected to mcpgw.');
    const after = Number((await counter.callTool({ name: 'gamma:welcome_calls', arguments: {} })).content[0].text);
    assert.equal(after, before);
  }),
);

test(
  'stdio: a client that launches mcpgw --stdio gets the welcome text in getInstructions() too',
  withDiagnostics(async () => {
    const s = await connectSdkStdio(writeConfig(tempDir(), CONFIG));
    open.push(s);
    assert.equal(s.client.getInstructions(), 'You are connected to mcpgw.\n\nwelcome from gamma');
  }),
);

test(
  'the bank example: welcome_customer (strategy first) greets the SDK client with the account summary',
  withDiagnostics(async () => {
    const bankGw = await startGateway({ servers: [bankStdio()] });
    const { client } = await sdkHttp(bankGw.url);
    const text = client.getInstructions();
    assert.match(text ?? '', /^Welcome to Example Bank! Here is a summary of your accounts:\n/);
    assert.match(text, /Primary Checking \(acc_checking_001\): 2543\.17 USD \[locked/);
  }),
);
