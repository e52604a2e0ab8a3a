// OpenTelemetry traces through the real binary: with telemetry.otlp set,
// mcpgw POSTs its spans to a collector (tests/integration/otlp-collector.mjs,
// which decodes them with the official OTLP definitions). Checked here: the
// tree of spans of a nextTool chain (a server span per client request, a
// client span per upstream request as its children), of a composite plugin
// call (an internal span between them) and of failing upstreams (error.type
// and status); names and attributes by the MCP semantic conventions (the
// revision a client span names is the one its request went out in); the
// trace id of the audit line; the traceparent the upstream gets is the
// client span's; sampling; and an exporter that retries a collector
// answering 503 and counts what a collector refuses (400) as dropped.
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILD,
  REPO,
  TOOLBOX,
  bankStdio,
  chainArgs,
  connectHttp,
  httpGet,
  pollUntil,
  readJsonLines,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { startCollector } from './otlp-collector.mjs';

const STDIO_TAP = path.join(REPO, 'tests', 'interop', 'stdio-tap.mjs');
const RATES = path.join(BUILD, 'examples', 'rates-server');
const PLUGIN = path.join(BUILD, 'plugins', 'libbanking_composites.so');
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const KIND = { internal: 1, server: 2, client: 3 };
const ERROR = 2;

const metricsOf = async (gw) => parseMetrics((await httpGet(`${gw.base}/metrics`)).text);

describe('spans of calls', () => {
  let collector;
  let gw;
  let dir;
  let toolboxLog;

  before(async () => {
    requireBinaries(TOOLBOX, RATES, PLUGIN);
    collector = await startCollector();
    dir = tempDir('mcpgw-otlp-');
    toolboxLog = path.join(dir, 'toolbox.jsonl');
    gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        audit: { path: path.join(dir, 'audit.jsonl') },
        telemetry: { otlp: { endpoint: collector.url, headers: { 'X-Collector-Token': 'sesame' }, service_name: 'mcpgw-test' } },
        servers: [
          { name: 'toolbox', command: process.execPath, args: [STDIO_TAP, toolboxLog, '--', TOOLBOX, '--chain-tool', 'chain'] },
          bankStdio(),
          { name: 'rates', command: RATES },
          // The toolbox again, spoken to in the stateless revision.
          { name: 'modern', command: TOOLBOX, args: ['--era', '2026'], protocol: '2026-07-28' },
        ],
        plugins: [
          {
            path: PLUGIN,
            config: { account_overview: { bank: { server: 'bank', tool: 'list_accounts' }, fx: { server: 'rates', tool: 'get_exchange_rates' } } },
          },
        ],
      },
      { dir },
    );
  });
  after(async () => {
    await gw?.proc.stop();
    await collector?.close();
  });

  test(
    'a chain: one server span (child of the client traceparent) and a client span per hop under it, with the MCP attributes',
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const r = await c.callTool('toolbox:chain', chainArgs(['one', 'two', 'three']), { headers: { traceparent: `00-${TRACE}-${PARENT}-01` } });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      const [server] = await collector.waitFor((s) => s.traceId === TRACE && s.kind === KIND.server, { what: 'the server span' });
      const clients = await collector.waitFor((s) => s.traceId === TRACE && s.kind === KIND.client, { count: 3, what: 'three client spans' });

      assert.equal(server.name, 'tools/call toolbox:chain');
      assert.equal(server.parentSpanId, PARENT, 'the server span continues the client traceparent');
      assert.equal(server.attributes['mcp.method.name'], 'tools/call');
      assert.equal(server.attributes['gen_ai.tool.name'], 'toolbox:chain', 'the exposed name on the server span');
      assert.equal(server.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(server.attributes['mcp.session.id'], c.session);
      assert.equal(server.attributes['mcp.protocol.version'], c.protocolVersion);
      assert.match(server.attributes['jsonrpc.request.id'], /^\d+$/);
      assert.equal(server.status.code, 0, 'unset status for a call that worked');
      assert.equal(server.attributes['error.type'], undefined);
      assert.equal(server.resource['service.name'], 'mcpgw-test');
      assert.ok(server.resource['service.version']);
      assert.equal(server.scope.name, 'mcpgw');
      assert.ok(server.end >= server.start);

      assert.equal(clients.length, 3, 'the call and its two hops');
      for (const s of clients) {
        assert.equal(s.name, 'tools/call chain');
        assert.equal(s.parentSpanId, server.spanId, 'every hop is a child of the server span');
        assert.equal(s.attributes['gen_ai.tool.name'], 'chain', "the upstream's own name on client spans");
        assert.equal(s.attributes['mcp.method.name'], 'tools/call');
        assert.equal(s.attributes['mcpgw.server'], 'toolbox');
        assert.equal(s.attributes['network.transport'], 'pipe');
        assert.match(s.attributes['jsonrpc.request.id'], /^\d+$/);
        assert.ok(s.start >= server.start && s.end <= server.end, 'a client span lies within its server span');
      }
      // The traceparent each upstream request carried is its client span.
      const sent = readJsonLines(toolboxLog)
        .filter((m) => m.method === 'tools/call' && m.params?._meta?.traceparent?.includes(TRACE))
        .map((m) => m.params._meta.traceparent.split('-')[2]);
      assert.deepEqual(new Set(sent), new Set(clients.map((s) => s.spanId)));
      // The audit lines of the call carry the same trace, and the server span names the chain.
      await pollUntil(() => readJsonLines(path.join(dir, 'audit.jsonl')).filter((l) => l.trace_id === TRACE).length >= 3, {
        what: 'three audit lines of the trace',
      });
      for (const l of readJsonLines(path.join(dir, 'audit.jsonl')).filter((x) => x.trace_id === TRACE))
        assert.equal(l.chain_id, server.spanId);
      const req = collector.requests.find((q) => q.status === 200);
      assert.equal(req.headers['content-type'], 'application/x-protobuf');
      assert.equal(req.headers['x-collector-token'], 'sesame', 'telemetry.otlp.headers go with every export');
    }),
  );

  test(
    'a composite plugin call: server span, then an internal span of the plugin, then a client span per upstream call it makes',
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const r = await c.callTool('account_overview', {});
      assert.equal(r.isError, undefined, textOf(r));
      const [server] = await collector.waitFor((s) => s.name === 'tools/call account_overview' && s.kind === KIND.server, {
        what: 'the server span of account_overview',
      });
      const [plugin] = await collector.waitFor((s) => s.traceId === server.traceId && s.kind === KIND.internal, { what: 'the plugin span' });
      assert.equal(plugin.parentSpanId, server.spanId);
      assert.equal(plugin.name, 'tools/call account_overview');
      assert.equal(plugin.attributes['mcpgw.plugin'], 'banking_composites');
      const calls = await collector.waitFor((s) => s.traceId === server.traceId && s.kind === KIND.client, { count: 2, what: 'two upstream calls' });
      assert.deepEqual(calls.map((s) => s.name).sort(), ['tools/call get_exchange_rates', 'tools/call list_accounts']);
      assert.deepEqual(calls.map((s) => s.attributes['mcpgw.server']).sort(), ['bank', 'rates']);
      for (const s of calls) assert.equal(s.parentSpanId, plugin.spanId, 'the plugin span is the parent of its upstream calls');
      assert.equal(server.parentSpanId, '', 'no traceparent from the client: the server span is a root');
    }),
  );

  test(
    'failing upstreams: a tool error, a JSON-RPC error and a crash mark both spans failed with error.type',
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const cases = [
        { tool: 'toolbox:fail', args: { message: 'nope' }, trace: '11111111111111111111111111111111', client: 'tool_error', server: 'tool_error' },
        { tool: 'toolbox:rpc_error', args: {}, trace: '22222222222222222222222222222222', client: '-32000', server: '-32000' },
        { tool: 'toolbox:crash', args: {}, trace: '33333333333333333333333333333333', client: 'unavailable', server: 'tool_error' },
      ];
      for (const k of cases) {
        await c.send('tools/call', { name: k.tool, arguments: k.args }, { headers: { traceparent: `00-${k.trace}-${PARENT}-01` } });
        const [server] = await collector.waitFor((s) => s.traceId === k.trace && s.kind === KIND.server, { what: `server span of ${k.tool}` });
        const [client] = await collector.waitFor((s) => s.traceId === k.trace && s.kind === KIND.client, { what: `client span of ${k.tool}` });
        assert.equal(client.parentSpanId, server.spanId);
        assert.equal(client.attributes['error.type'], k.client, `${k.tool}: client span error.type`);
        assert.equal(client.status.code, ERROR, `${k.tool}: client span status`);
        assert.equal(server.attributes['error.type'], k.server, `${k.tool}: server span error.type`);
        assert.equal(server.status.code, ERROR, `${k.tool}: server span status`);
      }
      const [rpc] = collector.spans.filter((s) => s.traceId === cases[1].trace && s.kind === KIND.client);
      assert.equal(rpc.attributes['rpc.response.status_code'], '-32000');
      assert.equal(rpc.status.message, 'deliberate failure');
    }),
  );

  test(
    'a client span names the revision its request was sent in: 2026-07-28 to a stateless upstream, none to a session-era one',
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const cases = [
        { tool: 'modern:echo', trace: '77777777777777777777777777777777', version: '2026-07-28' },
        { tool: 'toolbox:echo', trace: '88888888888888888888888888888888', version: undefined },
      ];
      for (const k of cases) {
        const r = await c.callTool(k.tool, { text: 'which revision' }, { headers: { traceparent: `00-${k.trace}-${PARENT}-01` } });
        assert.equal(textOf(r), 'which revision');
        const [client] = await collector.waitFor((s) => s.traceId === k.trace && s.kind === KIND.client, { what: `client span of ${k.tool}` });
        assert.equal(client.attributes['mcp.protocol.version'], k.version, k.tool);
      }
    }),
  );

  test(
    'a traceparent whose flags say "not sampled" is not exported; the next sampled one is',
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const unsampled = '55555555555555555555555555555555';
      const sampled = '66666666666666666666666666666666';
      await c.callTool('toolbox:echo', { text: 'quiet' }, { headers: { traceparent: `00-${unsampled}-${PARENT}-00` } });
      await c.callTool('toolbox:echo', { text: 'loud' }, { headers: { traceparent: `00-${sampled}-${PARENT}-01` } });
      await collector.waitFor((s) => s.traceId === sampled, { count: 2, what: 'the sampled call' });
      // Spans leave in the order they ended: the earlier call's would be there by now.
      assert.equal(collector.spans.filter((s) => s.traceId === unsampled).length, 0);
      const m = await metricsOf(gw);
      assert.ok(sample(m, 'mcpgw_otlp_spans_exported_total') >= 2);
    }),
  );
});

describe('the exporter against a failing collector', () => {
  /** A gateway exporting to a collector that answers `answer(n)`; stopped after `fn`. */
  async function withCollector(answer, fn) {
    requireBinaries(TOOLBOX);
    const collector = await startCollector({ answer });
    const gw = await startGateway({
      welcome: { strategy: 'none' },
      telemetry: { otlp: { endpoint: collector.url } },
      servers: [{ name: 'toolbox', command: TOOLBOX }],
    });
    try {
      await fn(gw, collector, await connectHttp(gw.url));
    } finally {
      await gw.proc.stop();
      await collector.close();
    }
  }

  test(
    'a collector answering 503 gets the same spans again with backoff until it takes them; calls are answered meanwhile',
    withDiagnostics(() =>
      withCollector(
        (n) => (n < 2 ? 503 : 200),
        async (gw, collector, c) => {
          const r = await c.callTool('toolbox:echo', { text: 'while the collector is busy' });
          assert.equal(textOf(r), 'while the collector is busy');
          const spans = await collector.waitFor((s) => s.name === 'tools/call toolbox:echo', { what: 'the span after two 503s' });
          assert.equal(spans.length, 1, 'delivered once');
          assert.deepEqual(collector.requests.slice(0, 3).map((q) => q.status), [503, 503, 200]);
          await gw.proc.waitForLine('stderr', /otlp: exporting to .* again/);
          assert.equal(sample(await metricsOf(gw), 'mcpgw_otlp_spans_dropped_total'), 0);
        },
      ),
    ),
  );

  test(
    'spans a collector refuses (HTTP 400) are dropped and counted in mcpgw_otlp_spans_dropped_total',
    withDiagnostics(() =>
      withCollector(
        () => 400,
        async (gw, collector, c) => {
          assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'x' })), 'x');
          await pollUntil(async () => sample(await metricsOf(gw), 'mcpgw_otlp_spans_dropped_total') >= 2, {
            what: 'the server and client spans counted as dropped',
          });
          assert.equal(collector.requests.length, 1, 'a refused batch is not sent again');
          await gw.proc.waitForLine('stderr', /otlp: dropped \d+ spans: export to .* failed: HTTP 400/);
        },
      ),
    ),
  );
});
