// An upstream written with the official v2 server SDK
// (@modelcontextprotocol/server 2.4.0, tests/interop/fixtures/v2-server.mjs:
// dual-era, questions to the client as `input_required`) behind mcpgw, over
// stdio and over Streamable HTTP. For each upstream transport:
//   - the gateway finds the upstream speaks 2026-07-28 and uses it
//     statelessly (its log says so);
//   - the v1 SDK client (@modelcontextprotocol/sdk 1.32.2, stateful era):
//     the upstream's elicitation, sampling and roots questions reach its
//     handlers as server-to-client requests and the answers come back,
//     progress reaches onprogress, and aborting a call reaches the upstream
//     (its handler's signal fires);
//   - the v2 SDK client (@modelcontextprotocol/client 2.4.0, versionNegotiation
//     auto, so 2026-07-28 on both sides): the same, with the questions as
//     the gateway's own input_required results;
//   - a raw 2026-07-28 client sees only the gateway's requestState
//     ("mcpgw1."...), never the upstream's own state string, and the upstream
//     gets its own state back unchanged on the retry.
// The fixture appends what reaches it to an events file the tests poll.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { Proc, REPO, descendants, pollUntil, requireBinaries, startGateway, tempDir, waitGone, withDiagnostics, readJsonLines } from '../integration/harness.mjs';
import { srpc } from '../integration/stateless.mjs';

const FIXTURE = path.join(REPO, 'tests', 'interop', 'fixtures', 'v2-server.mjs');
const STATE_PREFIX = 'v2-fixture-own-state:';
const TOOLS = ['v2:ask', 'v2:echo', 'v2:roots', 'v2:slow', 'v2:summarize'];
const TRANSPORTS = ['stdio', 'http'];

/** Per upstream transport: {gw, events (the fixture's events file)}. */
const setups = {};

before(async () => {
  requireBinaries();
  const dir = tempDir('mcpgw-v2-upstream-');
  await Promise.all(
    TRANSPORTS.map(async (transport) => {
      const events = path.join(dir, `${transport}-events.jsonl`);
      let server;
      if (transport === 'stdio') {
        server = { name: 'v2', transport: 'stdio', command: process.execPath, args: [FIXTURE, 'stdio'], env: { V2_FIXTURE_EVENTS: events }, timeout_ms: 30000 };
      } else {
        const proc = new Proc('v2-fixture-http', process.execPath, [FIXTURE, 'http'], { env: { V2_FIXTURE_EVENTS: events } });
        const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/);
        server = { name: 'v2', transport: 'http', url: m[1], timeout_ms: 30000 };
      }
      // A 2026-07-28 client cancels by closing its stream; the gateway notices
      // when it next writes to it (a heartbeat), hence a short heartbeat.
      const gw = await startGateway({ welcome: { strategy: 'none' }, listen: { heartbeat_ms: 200 }, servers: [server] }, { dir, label: `mcpgw (${transport} upstream)` });
      setups[transport] = { gw, events };
    }),
  );
});

/** What has reached the upstream so far (the fixture's events file). */
function upstreamEvents(transport) {
  return readJsonLines(setups[transport].events);
}

/** How many events the upstream has recorded so far (to look only at what follows). */
function mark(transport) {
  return upstreamEvents(transport).length;
}

/**
 * An elicitation, sampling or roots call through the gateway reached the
 * upstream exactly twice since `since`: once with nothing, then once with
 * the answer under the upstream's own key and the upstream's own state,
 * unchanged.
 */
function assertTwoRounds(transport, since, tool, args, key) {
  const calls = upstreamEvents(transport)
    .slice(since)
    .filter((e) => e.event === 'call' && e.tool === tool)
    .map((e) => ({ arguments: e.arguments, era: e.era, requestState: e.requestState, inputResponseKeys: e.inputResponseKeys }));
  assert.deepEqual(calls, [
    { arguments: args, era: 'modern', requestState: null, inputResponseKeys: [] },
    { arguments: args, era: 'modern', requestState: STATE_PREFIX + tool, inputResponseKeys: [key] },
  ]);
}

const textOf = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const withoutMeta = (params) => {
  const { _meta, ...rest } = params;
  return rest;
};

const ANSWER_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
};

/** Handlers of every kind of question; `asked` records {method, params}. */
function answering(who) {
  const asked = [];
  return {
    asked,
    elicit: (req) => {
      asked.push({ method: req.method, params: req.params });
      return { action: 'accept', content: { answer: `${who} says blue` } };
    },
    sample: (req) => {
      asked.push({ method: req.method, params: req.params });
      return { role: 'assistant', content: { type: 'text', text: `${who}'s summary` }, model: `${who}-model`, stopReason: 'endTurn' };
    },
    roots: (req) => {
      asked.push({ method: req.method, params: req.params ?? {} });
      return { roots: [{ uri: `file:///home/${who}/project`, name: `${who}-project` }] };
    },
  };
}

async function v1Client(transport, who) {
  const client = new V1Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  const h = answering(who);
  client.setRequestHandler(ElicitRequestSchema, h.elicit);
  client.setRequestHandler(CreateMessageRequestSchema, h.sample);
  client.setRequestHandler(ListRootsRequestSchema, h.roots);
  await client.connect(new V1HttpTransport(new URL(setups[transport].gw.url)));
  // The v1 SDK's schema for elicitation/create has no `$schema`: its handler
  // sees the requested schema without it.
  const { $schema, ...schemaSeen } = ANSWER_SCHEMA;
  return { client, asked: h.asked, schemaSeen, call: (name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts) };
}

async function v2Client(transport, who) {
  const client = new V2Client(
    { name: who, version: '1.0.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} }, versionNegotiation: { mode: 'auto' } },
  );
  const h = answering(who);
  client.setRequestHandler('elicitation/create', h.elicit);
  client.setRequestHandler('sampling/createMessage', h.sample);
  client.setRequestHandler('roots/list', h.roots);
  await client.connect(new V2HttpTransport(new URL(setups[transport].gw.url)));
  return { client, asked: h.asked, schemaSeen: ANSWER_SCHEMA, call: (name, args, opts) => client.callTool({ name, arguments: args }, opts) };
}

/** The four behaviours both SDK clients must see, whatever the era on the client side. */
async function exercise(transport, c, who) {
  const { tools } = await c.client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);

  const echo = await c.call('v2:echo', { text: `hello from ${who}` });
  assert.deepEqual(echo.content, [{ type: 'text', text: `echo: hello from ${who}` }]);

  // elicitation
  const question = `${who}: favourite colour?`;
  let since = mark(transport);
  const asked = await c.call('v2:ask', { question });
  assert.equal(asked.isError, undefined, textOf(asked));
  assert.deepEqual(asked.content, [{ type: 'text', text: `${question} -> ${who} says blue (state intact)` }]);
  assert.equal(c.asked.length, 1, JSON.stringify(c.asked));
  assert.equal(c.asked[0].method, 'elicitation/create');
  assert.deepEqual(withoutMeta(c.asked[0].params), { mode: 'form', message: question, requestedSchema: c.schemaSeen });
  assertTwoRounds(transport, since, 'ask', { question }, 'question');

  // sampling
  const text = `${who}: a long text`;
  since = mark(transport);
  const summary = await c.call('v2:summarize', { text });
  assert.equal(summary.isError, undefined, textOf(summary));
  assert.deepEqual(summary.content, [{ type: 'text', text: `summary by ${who}-model: ${who}'s summary (state intact)` }]);
  assert.equal(c.asked.length, 2, JSON.stringify(c.asked));
  assert.equal(c.asked[1].method, 'sampling/createMessage');
  assert.deepEqual(withoutMeta(c.asked[1].params), { messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }], maxTokens: 64 });
  assertTwoRounds(transport, since, 'summarize', { text }, 'summary');

  // roots
  since = mark(transport);
  const roots = await c.call('v2:roots', {});
  assert.equal(roots.isError, undefined, textOf(roots));
  assert.deepEqual(roots.content, [{ type: 'text', text: `roots: ${who}-project=file:///home/${who}/project (state intact)` }]);
  assert.equal(c.asked.length, 3, JSON.stringify(c.asked));
  assert.equal(c.asked[2].method, 'roots/list');
  assert.deepEqual(withoutMeta(c.asked[2].params), {});
  assertTwoRounds(transport, since, 'roots', {}, 'roots');

  // progress
  const progress = [];
  const tag = `${who}-progress`;
  const done = await c.call('v2:slow', { tag, ms: 20 }, { onprogress: (p) => progress.push(p) });
  assert.deepEqual(done.content, [{ type: 'text', text: `slow ${tag} finished after 20 ms` }]);
  assert.deepEqual(progress, [
    { progress: 1, total: 2, message: `slow ${tag} started` },
    { progress: 2, total: 2, message: `slow ${tag} finished` },
  ]);
}

/**
 * Starts `slow` (60 s), aborts it on its first progress, and waits for the
 * upstream handler's signal to fire; the call never finishes upstream.
 */
async function cancellationReachesUpstream(transport, c, who) {
  const tag = `${who}-cancel`;
  const ac = new AbortController();
  const progress = [];
  const pending = c.call('v2:slow', { tag, ms: 60000 }, {
    signal: ac.signal,
    timeout: 90000,
    onprogress: (p) => {
      progress.push(p);
      ac.abort(new Error(`${who} gives up`));
    },
  });
  await assert.rejects(pending, (e) => {
    assert.match(String(e?.message ?? e), new RegExp(`${who} gives up`));
    return true;
  });
  assert.deepEqual(progress, [{ progress: 1, total: 2, message: `slow ${tag} started` }]);
  const cancelled = await pollUntil(() => upstreamEvents(transport).find((e) => e.event === 'slow-cancelled' && e.tag === tag), {
    timeoutMs: 10000,
    what: `the upstream's slow ${tag} to be cancelled`,
  });
  // Over stdio the gateway sent notifications/cancelled (with its own
  // reason); over HTTP it closed the request's stream, which the SDK
  // reports as a closed connection.
  assert.equal(cancelled.reason, transport === 'stdio' ? 'cancelled by client' : 'Connection closed');
  assert.deepEqual(
    upstreamEvents(transport)
      .filter((e) => e.tag === tag)
      .map((e) => e.event),
    ['slow-started', 'slow-cancelled'],
  );
}

for (const transport of TRANSPORTS) {
  test(
    `${transport} upstream: mcpgw detects the v2 SDK server as protocol 2026-07-28, stateless`,
    withDiagnostics(async () => {
      const { gw } = setups[transport];
      await gw.proc.waitForLine('stderr', /upstream v2: connected \(protocol 2026-07-28, stateless\)/);
      assert.doesNotMatch(gw.proc.stderrText, /upstream v2: connected \(.*protocol 2025/);
      // Nothing of the stateful handshake reached the upstream: the first
      // thing it ran is a tool call, in the stateless era.
      const c = await v1Client(transport, 'detect');
      const r = await c.call('v2:echo', { text: 'which era?' });
      assert.deepEqual(r.content, [{ type: 'text', text: 'echo: which era?' }]);
      assert.deepEqual(
        upstreamEvents(transport)
          .filter((e) => e.event === 'call' && e.arguments.text === 'which era?')
          .map((e) => e.era),
        ['modern'],
      );
      await c.client.close();
    }),
  );

  test(
    `${transport} upstream, v1 SDK client (stateful era): elicitation, sampling and roots answered by its handlers, progress received`,
    withDiagnostics(async () => {
      const c = await v1Client(transport, `v1-${transport}`);
      await exercise(transport, c, `v1-${transport}`);
      await c.client.close();
    }),
  );

  test(
    `${transport} upstream, v1 SDK client: aborting a call cancels it in the upstream`,
    withDiagnostics(async () => {
      const c = await v1Client(transport, `v1c-${transport}`);
      await cancellationReachesUpstream(transport, c, `v1c-${transport}`);
      // The session is still usable.
      const r = await c.call('v2:echo', { text: 'after cancel' });
      assert.deepEqual(r.content, [{ type: 'text', text: 'echo: after cancel' }]);
      await c.client.close();
    }),
  );

  test(
    `${transport} upstream, v2 SDK client (auto: 2026-07-28 on both sides): elicitation, sampling and roots answered by its handlers, progress received`,
    withDiagnostics(async () => {
      const c = await v2Client(transport, `v2-${transport}`);
      assert.equal(c.client.getProtocolEra(), 'modern');
      assert.equal(c.client.getNegotiatedProtocolVersion(), '2026-07-28');
      await exercise(transport, c, `v2-${transport}`);
      await c.client.close();
    }),
  );

  test(
    `${transport} upstream, v2 SDK client: aborting a call cancels it in the upstream`,
    withDiagnostics(async () => {
      const c = await v2Client(transport, `v2c-${transport}`);
      assert.equal(c.client.getProtocolEra(), 'modern');
      await cancellationReachesUpstream(transport, c, `v2c-${transport}`);
      const r = await c.call('v2:echo', { text: 'after cancel' });
      assert.deepEqual(r.content, [{ type: 'text', text: 'echo: after cancel' }]);
      await c.client.close();
    }),
  );

  test(
    `${transport} upstream, raw 2026-07-28 client: only the gateway's requestState, never the upstream's`,
    withDiagnostics(async () => {
      const { gw } = setups[transport];
      const caps = { elicitation: { form: {} }, sampling: {}, roots: {} };
      const cases = [
        {
          tool: 'ask',
          args: { question: `raw-${transport}: yes or no?` },
          key: 'question',
          method: 'elicitation/create',
          answer: { action: 'accept', content: { answer: 'yes' } },
          final: `raw-${transport}: yes or no? -> yes (state intact)`,
        },
        {
          tool: 'summarize',
          args: { text: `raw-${transport} text` },
          key: 'summary',
          method: 'sampling/createMessage',
          answer: { role: 'assistant', content: { type: 'text', text: 'short' }, model: 'raw-model' },
          final: 'summary by raw-model: short (state intact)',
        },
        {
          tool: 'roots',
          args: {},
          key: 'roots',
          method: 'roots/list',
          answer: { roots: [{ uri: 'file:///raw', name: 'raw' }] },
          final: 'roots: raw=file:///raw (state intact)',
        },
      ];
      for (const k of cases) {
        const name = `v2:${k.tool}`;
        const since = mark(transport);
        const first = await srpc(gw.url, 'tools/call', { name, arguments: k.args }, { caps });
        assert.equal(first.status, 200, first.text);
        const res = first.message?.result;
        assert.ok(res, `${k.tool}: no result: ${first.text}`);
        assert.equal(res.resultType, 'input_required', JSON.stringify(res));
        assert.deepEqual(Object.keys(res.inputRequests), [k.key]);
        assert.equal(res.inputRequests[k.key].method, k.method);
        const state = res.requestState;
        assert.equal(typeof state, 'string');
        assert.ok(state.startsWith('mcpgw1.'), `requestState ${state}`);
        // Neither the answer nor the token's readable payload carries the upstream's state.
        assert.ok(!first.text.includes(STATE_PREFIX), `the upstream's state leaked: ${first.text}`);
        const payload = Buffer.from(state.split('.')[1], 'base64url').toString('utf8');
        assert.ok(!payload.includes(STATE_PREFIX), `the upstream's state is inside the gateway's token: ${payload}`);

        const retry = await srpc(gw.url, 'tools/call', { name, arguments: k.args, inputResponses: { [k.key]: k.answer }, requestState: state }, { caps });
        assert.equal(retry.status, 200, retry.text);
        assert.ok(!retry.text.includes(STATE_PREFIX), `the upstream's state leaked: ${retry.text}`);
        const done = retry.message?.result;
        assert.equal(done?.resultType, 'complete', retry.text);
        assert.deepEqual(done.content, [{ type: 'text', text: k.final }]);
        assertTwoRounds(transport, since, k.tool, k.args, k.key);
      }
    }),
  );
}

test(
  'SIGTERM: each gateway exits 0 and its stdio upstream process is reaped',
  withDiagnostics(async () => {
    const { gw } = setups.stdio;
    const tree = descendants(gw.proc.pid);
    assert.ok(tree.length >= 1, 'the stdio upstream is not a child of the gateway');
    for (const t of TRANSPORTS) {
      const r = await setups[t].gw.proc.stop();
      assert.deepEqual({ code: r.code, signal: r.signal, killed: r.killed }, { code: 0, signal: null, killed: false });
    }
    assert.deepEqual(await waitGone(tree), [], 'processes left behind');
  }),
);
