// The input rounds of a 2026-07-28 upstream, from the outside: a raw
// stateless HTTP upstream (in this process, on a loopback port) that asks
// for client input by `input_required`, behind mcpgw, with the v1 SDK client
// answering the questions mid-call. Each retry carries the client's latest
// answers and the state of the round before it, and only that state (a
// round that gave none sends none); an upstream that never stops asking is
// cut off after 16 rounds, with a JSON-RPC error (-32603) naming it, having
// been sent the request 17 times.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { requireBinaries, startGateway, tempDir, textOf } from '../integration/harness.mjs';

const QUESTION = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'once more?', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } },
};

/** What each tools/call brought the upstream, per tool, in order. */
const calls = { endless: [], fading: [] };
let upstream;
let gw;

/**
 * endless: always input_required, its state "s<n>" for the n-th request.
 * fading: asks with state "first", then asks again with no state, then
 * answers with the state the third request brought ("none" when absent).
 */
function toolsCall(params) {
  const name = params.name;
  calls[name].push({ requestState: params.requestState, inputResponses: params.inputResponses });
  const n = calls[name].length;
  if (name === 'endless') return { resultType: 'input_required', inputRequests: { q: QUESTION }, requestState: `s${n}` };
  if (n === 1) return { resultType: 'input_required', inputRequests: { q: QUESTION }, requestState: 'first' };
  if (n === 2) return { resultType: 'input_required', inputRequests: { q: QUESTION } };
  return { resultType: 'complete', content: [{ type: 'text', text: `state=${params.requestState ?? 'none'}` }] };
}

function answer(msg) {
  switch (msg.method) {
    case 'server/discover':
      return { result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'rounds', version: '1.0.0' } } };
    case 'tools/list':
      return {
        result: {
          resultType: 'complete',
          tools: ['endless', 'fading'].map((name) => ({ name, inputSchema: { type: 'object' } })),
        },
      };
    case 'tools/call':
      return { result: toolsCall(msg.params) };
    default:
      return { error: { code: -32601, message: `Method not found: ${msg.method}` } };
  }
}

before(async () => {
  requireBinaries();
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const msg = JSON.parse(body);
      if (msg.id === undefined) return res.writeHead(202).end();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer(msg) }));
    });
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${upstream.address().port}/mcp`;
  gw = await startGateway(
    { welcome: { strategy: 'none' }, servers: [{ name: 'rounds', transport: 'http', url, timeout_ms: 30000 }] },
    { dir: tempDir('mcpgw-input-rounds-') },
  );
});

after(() => new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve())));

async function answeringClient() {
  const client = new Client({ name: 'rounds-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  let asked = 0;
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked += 1;
    return { action: 'accept', content: { answer: `answer ${asked}` } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return { client, asked: () => asked };
}

test('each retry carries the latest answers and only the last round\'s state: a round without state sends none', async () => {
  const c = await answeringClient();
  try {
    const res = await c.client.callTool({ name: 'rounds:fading', arguments: {} });
    assert.equal(res.isError, undefined, textOf(res));
    assert.deepEqual(res.content, [{ type: 'text', text: 'state=none' }]);
    assert.equal(c.asked(), 2);
    assert.deepEqual(calls.fading, [
      { requestState: undefined, inputResponses: undefined },
      { requestState: 'first', inputResponses: { q: { action: 'accept', content: { answer: 'answer 1' } } } },
      { requestState: undefined, inputResponses: { q: { action: 'accept', content: { answer: 'answer 2' } } } },
    ]);
  } finally {
    await c.client.close();
  }
});

test('an upstream that never stops asking is cut off after 16 rounds: -32603 naming it, 17 requests sent', async () => {
  const c = await answeringClient();
  try {
    await assert.rejects(c.client.callTool({ name: 'rounds:endless', arguments: {} }), (e) => {
      assert.equal(e.code, -32603);
      assert.match(e.message, /upstream 'rounds' asked for client input more than 16 times in one call/);
      return true;
    });
    assert.equal(c.asked(), 16);
    assert.equal(calls.endless.length, 17);
    assert.deepEqual(calls.endless[0], { requestState: undefined, inputResponses: undefined });
    for (let i = 1; i < 17; i++)
      assert.deepEqual(calls.endless[i], {
        requestState: `s${i}`,
        inputResponses: { q: { action: 'accept', content: { answer: `answer ${i}` } } },
      });
  } finally {
    await c.client.close();
  }
});
