// Server-to-client traffic through mcpgw, stateful protocol era, with the
// official SDK client (1.32.2) and real upstreams (server-everything over
// stdio, our conformance server over Streamable HTTP):
//   - an upstream's elicitation/create, sampling/createMessage and roots/list
//     in the middle of a call reach the client that made the call, and the
//     client's answers reach the upstream;
//   - a client that did not declare a capability is never asked: the
//     upstream gets an error naming the missing capability;
//   - log messages an upstream sends during a call reach that client,
//     filtered by the client's logging/setLevel;
//   - a composite plugin's own upstream calls reach the client the same way;
//   - request ids are the gateway's own: 50 concurrent calls from 5 clients
//     through one upstream, each elicitation answered by the right client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { BUILD, EVERYTHING, requireBinaries, startGateway, startUpstreamHttp, withDiagnostics } from '../integration/harness.mjs';
import { Client } from './common.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const everything = { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 20000 };
let gw;
const open = [];

before(async () => {
  requireBinaries();
  const conf = await startUpstreamHttp(CONFORMANCE, [], { label: 'conformance-http' });
  gw = await startGateway({
    welcome: { strategy: 'none' },
    servers: [everything, { name: 'conf', transport: 'http', url: conf.url, timeout_ms: 20000 }],
    plugins: [{ path: path.join(BUILD, 'plugins', 'libtest_composites.so'), config: { server: 'conf' } }],
  });
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
});

/** An SDK client with the given capabilities, connected to the gateway. */
async function connect(name, capabilities) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  open.push(client);
  return client;
}

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test(
  'an upstream\'s elicitation, sampling and roots requests reach the calling client and its answers come back',
  withDiagnostics(async () => {
    const client = await connect('answering-client', { elicitation: {}, sampling: {}, roots: {} });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.method);
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.org' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      asked.push(req.method);
      const prompt = req.params.messages[0].content.text;
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `sampled: ${prompt}` } };
    });
    client.setRequestHandler(ListRootsRequestSchema, (req) => {
      asked.push(req.method);
      return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
    });

    const elicited = await client.callTool({ name: 'everything:trigger-elicitation-request', arguments: {} });
    assert.match(text(elicited), /User provided the requested information/, text(elicited));
    assert.match(text(elicited), /Ada Lovelace/);

    const sampled = await client.callTool({ name: 'everything:trigger-sampling-request', arguments: { prompt: 'two plus two', maxTokens: 20 } });
    assert.match(text(sampled), /sampled: .*two plus two/, text(sampled));
    assert.match(text(sampled), /"model": "test-model"/);

    const roots = await client.callTool({ name: 'everything:get-roots-list', arguments: {} });
    assert.match(text(roots), /file:\/\/\/work\/project/, text(roots));

    const conf = await client.callTool({ name: 'conf:test_sampling', arguments: { prompt: 'over http' } });
    assert.equal(text(conf), 'LLM response: sampled: over http');
    assert.ok(asked.includes('elicitation/create') && asked.includes('sampling/createMessage') && asked.includes('roots/list'), asked.join(', '));
  }),
);

test(
  'a client that did not declare elicitation is never asked; the upstream learns why',
  withDiagnostics(async () => {
    const client = await connect('plain-client', {});
    let asked = 0;
    client.fallbackRequestHandler = async () => {
      asked++;
      return {};
    };
    const r = await client.callTool({ name: 'conf:test_elicitation', arguments: { message: 'anyone there?' } });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(text(r), /did not declare the elicitation capability/, text(r));
    assert.equal(asked, 0);
  }),
);

test(
  'log messages of an upstream during a call reach the calling client, filtered by its level',
  withDiagnostics(async () => {
    const client = await connect('logging-client', {});
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    const r = await client.callTool({ name: 'conf:test_tool_with_logging', arguments: {} });
    assert.equal(text(r), 'Tool with logging executed successfully');
    assert.deepEqual(logs.map((l) => [l.level, l.data]), [
      ['info', 'Tool execution started'],
      ['info', 'Tool processing data'],
      ['info', 'Tool execution completed'],
    ]);

    await client.setLoggingLevel('error');
    logs.length = 0;
    await client.callTool({ name: 'conf:test_tool_with_logging', arguments: {} });
    assert.deepEqual(logs, []);
  }),
);

test(
  '50 concurrent calls from 5 clients through one upstream: every elicitation is answered by the client that made the call',
  withDiagnostics(async () => {
    const clients = await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        const c = await connect(`client-${i}`, { elicitation: {} });
        c.setRequestHandler(ElicitRequestSchema, async (req) => {
          // Answers slowly and out of order, tagged with who answered and what was asked.
          await new Promise((r) => setImmediate(r));
          return { action: 'accept', content: { username: `client-${i}`, email: `${req.params.message}@example.org` } };
        });
        return c;
      }),
    );
    const calls = [];
    for (let i = 0; i < 5; i++)
      for (let k = 0; k < 10; k++) {
        const message = `call-${i}-${k}`;
        calls.push(
          clients[i].callTool({ name: 'conf:test_elicitation', arguments: { message } }).then((r) => ({ i, message, r })),
        );
      }
    const results = await Promise.all(calls);
    for (const { i, message, r } of results) {
      assert.ok(!r.isError, JSON.stringify(r));
      assert.match(text(r), new RegExp(`client-${i}\\b`), `${message}: ${text(r)}`);
      assert.match(text(r), new RegExp(`${message}@example\\.org`), `${message}: ${text(r)}`);
    }
  }),
);

test(
  'an upstream called by a composite plugin asks the client that called the plugin',
  withDiagnostics(async () => {
    const client = await connect('plugin-caller', { elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, (req) => ({
      action: 'accept',
      content: { username: 'plugin-caller', email: `${req.params.message}@example.org` },
    }));
    const r = await client.callTool({
      name: 'relay',
      arguments: { server: 'conf', tool: 'test_elicitation', arguments: { message: 'via-plugin' } },
    });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.match(text(r), /"username":"plugin-caller".*"email":"via-plugin@example\.org"/, text(r));
  }),
);
