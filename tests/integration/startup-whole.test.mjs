// Whole from the first request (startup_wait_ms): a client that connects
// while upstreams are still making their first connection attempt gets what
// a later client gets. The upstreams: a stdio server that answers
// initialize only after two seconds and brings tools (one a welcome tool), a
// resource, a prompt, tasks and an extension of its own; an HTTP server that
// accepts and never answers; the quick stdio toolbox. Every client below
// sends its first request the moment the gateway listens, none waits for
// /readyz: the first initialize (or server/discover) has the slow server's
// capabilities and welcome text, the first lists hold its tools, resources
// and prompts, a read, a get and a chain hop reach it, and the server that
// never answers costs startup_wait_ms once and is then left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startFault } from './fault.mjs';
import {
  REPO,
  TOOLBOX,
  chainArgs,
  httpServer,
  HttpClient,
  requireBinaries,
  startGateway,
  startGatewayStdio,
  textOf,
  textsOf,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';
import { srpc } from './stateless.mjs';

const FIXTURE = path.join(REPO, 'tests', 'integration', 'slow-start-fixture.mjs');
const STARTUP_WAIT_MS = 5000;
const WAITED = /waits for the upstreams in their first connection attempt/g;

const slowServer = () => ({ name: 'slow', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--delay-ms', '2000'] });

/** The gateway's configuration: the never-answering server is still in its first attempt at the bound. */
const config = (silentUrl) => ({
  startup_wait_ms: STARTUP_WAIT_MS,
  welcome: { strategy: 'first' },
  servers: [slowServer(), httpServer('silent', silentUrl, { timeout_ms: 120000 }), toolboxStdio({ args: ['--chain-tool', 'chain'] })],
});

/** What a legacy initialize result must show of the slow server. */
function assertWholeInitialize(init) {
  assert.ok(init.capabilities.tasks, `no tasks capability: ${JSON.stringify(init.capabilities)}`);
  assert.ok(init.capabilities.extensions?.['com.example/slow-start'], `no extension of the slow server: ${JSON.stringify(init.capabilities)}`);
  assert.match(init.instructions ?? '', /welcome from the slow server/);
}

test(
  'HTTP: the first initialize, lists, read and get include a server that answers initialize after 2 s; a server that never answers costs startup_wait_ms once',
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    const silent = await startFault(['--silent'], 'silent');
    const gw = await startGateway(config(silent.url), { label: 'mcpgw-startup-whole' });
    const c = new HttpClient(gw.url);
    assertWholeInitialize(await c.initialize({ protocolVersion: '2025-11-25' }));
    assert.equal(gw.proc.stderrText.match(WAITED)?.length, 1, 'initialize did not wait for the servers starting');
    assert.match(gw.proc.stderrText, /initialize waits for the upstreams in their first connection attempt \(slow, silent/);

    const names = (await c.listAllTools()).tools.map((t) => t.name);
    for (const n of ['slow:hello', 'slow:welcome', 'toolbox:echo']) assert.ok(names.includes(n), `${n} missing from ${names}`);
    assert.ok(!names.some((n) => n.startsWith('silent:')), 'a server that never answered is listed');
    const resources = (await c.result('resources/list', {})).resources;
    const readme = resources.find((r) => r.name === 'readme');
    assert.ok(readme, `the slow server's resource is not listed: ${JSON.stringify(resources)}`);
    const read = await c.result('resources/read', { uri: readme.uri });
    assert.equal(read.contents[0].text, 'read from slow');
    const prompts = (await c.result('prompts/list', {})).prompts.map((p) => p.name);
    assert.ok(prompts.includes('slow:greet'), `prompts: ${prompts}`);
    const prompt = await c.result('prompts/get', { name: 'slow:greet' });
    assert.equal(prompt.messages[0].content.text, 'prompt from slow');
    assert.equal(textOf(await c.callTool('slow:hello', { who: 'you' })), 'hello you from slow');

    // The never-answering server is left out from now on: nothing waits for it again.
    assert.equal(gw.proc.stderrText.match(WAITED)?.length, 1, 'a request after the bound waited again');
    const never = await c.callTool('silent:echo', { text: 'x' });
    assert.equal(never.isError, true, JSON.stringify(never));
    assert.match(textOf(never), /^mcpgw: upstream 'silent' is still connecting/);
    await c.close();
    await gw.proc.stop();
    await silent.proc.stop();
  }),
);

test(
  'HTTP 2026-07-28: server/discover, a read, a get and a chain hop sent at start reach the slow server',
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    const silent = await startFault(['--silent'], 'silent-2026');
    const gw = await startGateway(config(silent.url), { label: 'mcpgw-startup-2026' });
    const [discover, read, get, chain, list] = await Promise.all([
      srpc(gw.url, 'server/discover', {}),
      srpc(gw.url, 'resources/read', { uri: 'file:///slow/readme.txt' }),
      srpc(gw.url, 'prompts/get', { name: 'slow:greet' }),
      srpc(gw.url, 'tools/call', { name: 'toolbox:chain', arguments: chainArgs(['first'], { tool: 'slow:hello', arguments: { who: 'a hop' } }) }),
      srpc(gw.url, 'tools/list', {}),
    ]);
    const d = discover.message.result;
    assert.ok(d.capabilities.extensions?.['io.modelcontextprotocol/tasks'], JSON.stringify(d.capabilities));
    assert.ok(d.capabilities.extensions?.['com.example/slow-start'], JSON.stringify(d.capabilities));
    assert.match(d.instructions ?? '', /welcome from the slow server/);
    assert.equal(read.message.result?.contents?.[0]?.text, 'read from slow', JSON.stringify(read.message));
    assert.equal(get.message.result?.messages?.[0]?.content?.text, 'prompt from slow', JSON.stringify(get.message));
    const hops = chain.message.result;
    assert.equal(hops.isError, undefined, JSON.stringify(hops));
    assert.deepEqual(textsOf(hops), ['first', 'hello a hop from slow']);
    assert.ok(list.message.result.tools.some((t) => t.name === 'slow:hello'), JSON.stringify(list.message));
    await gw.proc.stop();
    await silent.proc.stop();
  }),
);

test(
  '--stdio: the first initialize and tools/list, sent at once, include the slow server',
  withDiagnostics(async () => {
    requireBinaries(TOOLBOX);
    const silent = await startFault(['--silent'], 'silent-stdio');
    const gw = startGatewayStdio(config(silent.url), { label: 'mcpgw-startup-stdio' });
    assertWholeInitialize(await gw.client.initialize({ protocolVersion: '2025-11-25' }));
    const tools = (await gw.client.result('tools/list', {})).tools.map((t) => t.name);
    assert.ok(tools.includes('slow:hello'), `tools: ${tools}`);
    assert.ok(!tools.some((n) => n.startsWith('silent:')));
    assert.equal(gw.proc.stderrText.match(WAITED)?.length, 1, 'only the first request waits');
    await gw.proc.stop();
    await silent.proc.stop();
  }),
);
