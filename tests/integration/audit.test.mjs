// The audit log (`audit:`) through the real binary: one JSON line per
// client call, chain hop, plugin upstream call, saga round and refused
// request (bad bearer token, an unknown tool or one hidden from the mode,
// bad params), with principal,
// session, mode, tools, an argument digest, outcome, ms, chain id and hop,
// and the trace id the client sent; reopened on SIGHUP (logrotate).
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILD,
  TOOLBOX,
  connectHttp,
  httpGet,
  pollUntil,
  readJsonLines,
  requireBinaries,
  rpc,
  startGateway,
  tempDir,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { srpc } from './stateless.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const C_PLUGIN = path.join(BUILD, 'plugins', 'libtest_c_plugin.so');
const AUTH = { authorization: 'Bearer tok-ci' };
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (span = '00f067aa0ba902b7') => `00-${TRACE}-${span}-01`;

let gw;
let auditFile;

/** "sha256:<hex>" of the canonical JSON of `v` (keys sorted, no spaces), as the gateway computes it. */
function digest(v) {
  const canon = (x) =>
    Array.isArray(x)
      ? `[${x.map(canon).join(',')}]`
      : x && typeof x === 'object'
        ? `{${Object.keys(x)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canon(x[k])}`)
            .join(',')}}`
        : JSON.stringify(x);
  return `sha256:${createHash('sha256').update(canon(v)).digest('hex')}`;
}

/** Waits until the audit file has lines matching `pred`, `count` of them; returns them. */
function auditLines(pred, count, what) {
  return pollUntil(
    () => {
      const hits = readJsonLines(auditFile).filter(pred);
      return hits.length >= count ? hits : false;
    },
    { what: `${count} audit line(s): ${what}` },
  );
}

before(async () => {
  requireBinaries(TOOLBOX, CONFORMANCE);
  const dir = tempDir('mcpgw-audit-');
  auditFile = path.join(dir, 'audit.jsonl');
  gw = await startGateway(
    {
      welcome: { strategy: 'none' },
      auth: {
        bearer_tokens: [
          { token: 'tok-ci', name: 'ci' },
          { token: 'tok-ro', name: 'ro', modes: ['limited'] },
        ],
      },
      audit: { path: auditFile, arguments: 'digest' },
      modes: { limited: { include_tools: ['toolbox:*'] } },
      servers: [
        toolboxStdio({ args: ['--chain-tool', 'chain'] }),
        { name: 'conf', transport: 'stdio', command: CONFORMANCE, args: ['--watch-interval-ms', '0'] },
      ],
      plugins: [{ path: C_PLUGIN, config: { server: 'toolbox' } }],
    },
    { dir },
  );
});

test(
  'a chain: the client call and its hop, one line each, with the chain id, hop, trace id and argument digests',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: AUTH });
    const args = { text: 'first', next: 'echo', next_arguments: { text: 'second' } };
    const r = await c.callTool('toolbox:chain', args, { headers: { ...AUTH, traceparent: traceparent() } });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    const [call] = await auditLines((l) => l.event === 'call' && l.tool === 'toolbox:chain', 1, 'the chain call');
    const [hop] = await auditLines((l) => l.event === 'chain_hop' && l.tool === 'toolbox:chain', 1, 'the chain hop');
    assert.match(call.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      { ...call, time: undefined, ms: undefined, chain_id: undefined },
      {
        time: undefined,
        ms: undefined,
        chain_id: undefined,
        event: 'call',
        principal: 'ci',
        session: c.session,
        mode: 'all',
        tool: 'toolbox:chain',
        server: 'toolbox',
        upstream_tool: 'chain',
        arguments_digest: digest(args),
        outcome: 'ok',
        trace_id: TRACE,
      },
    );
    assert.equal(typeof call.ms, 'number');
    assert.match(call.chain_id, /^[0-9a-f]{16}$/);
    assert.deepEqual(
      { ...hop, time: undefined, ms: undefined },
      {
        time: undefined,
        ms: undefined,
        event: 'chain_hop',
        principal: 'ci',
        session: c.session,
        mode: 'all',
        tool: 'toolbox:chain',
        server: 'toolbox',
        upstream_tool: 'echo',
        arguments_digest: digest({ text: 'second' }),
        outcome: 'ok',
        chain_id: call.chain_id,
        hop: 1,
        trace_id: TRACE,
      },
    );
    // The trace id is in the log line of the call too.
    await pollUntil(() => gw.proc.stderrText.includes(`call toolbox:chain principal=ci session=${c.session.slice(0, 8)} trace=${TRACE}`), {
      what: 'the call log line with the trace id',
    });
    await c.close();
  }),
);

test(
  "a plugin's upstream calls: one plugin_call line each, under the client's call of the composite tool",
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: AUTH });
    const r = await c.callTool('c_parallel', {});
    assert.equal(r.structuredContent.results.length, 2, JSON.stringify(r));
    const [call] = await auditLines((l) => l.event === 'call' && l.tool === 'c_parallel', 1, 'the c_parallel call');
    const calls = await auditLines((l) => l.event === 'plugin_call' && l.tool === 'c_parallel', 2, 'the plugin calls');
    assert.equal(call.principal, 'ci');
    assert.equal(call.upstream_tool, 'c_parallel');
    assert.equal(call.outcome, 'ok');
    assert.equal(call.arguments_digest, digest({}));
    for (const p of calls) {
      assert.deepEqual(
        { ...p, time: undefined, ms: undefined },
        {
          time: undefined,
          ms: undefined,
          event: 'plugin_call',
          principal: 'ci',
          session: c.session,
          mode: 'all',
          tool: 'c_parallel',
          server: 'toolbox',
          upstream_tool: 'sleep',
          arguments_digest: digest({ ms: 300 }),
          outcome: 'ok',
          chain_id: call.chain_id,
          trace_id: call.trace_id,
        },
      );
      assert.ok(p.ms >= 250, JSON.stringify(p));
    }
    // The composite call got a fresh trace (the client sent none).
    assert.match(call.trace_id, /^[0-9a-f]{32}$/);
    assert.notEqual(call.trace_id, TRACE);
    // Plugin upstream calls are counted like the others.
    const m = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    assert.ok(sample(m, 'mcpgw_tool_calls_total', { server: 'toolbox', tool: 'sleep', via: 'plugin', outcome: 'ok' }) >= 2);
    await c.close();
  }),
);

test(
  'refused: a bad bearer token and a tool hidden from the mode each get a refused line and count in mcpgw_refused_total',
  withDiagnostics(async () => {
    const m0 = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    const bad = await rpc(gw.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } }, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(bad.status, 401);
    const none = await rpc(gw.url, { jsonrpc: '2.0', id: 2, method: 'ping' });
    assert.equal(none.status, 401);
    const [wrong] = await auditLines((l) => l.event === 'refused' && l.reason === 'unknown bearer token', 1, 'the bad token');
    assert.deepEqual({ ...wrong, time: undefined }, { time: undefined, event: 'refused', mode: 'all', outcome: 'refused', reason: 'unknown bearer token' });
    await auditLines((l) => l.event === 'refused' && l.reason === 'no bearer token', 1, 'the missing token');
    const otherMode = await rpc(gw.url, { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } }, { headers: { authorization: 'Bearer tok-ro' } });
    assert.equal(otherMode.status, 403, otherMode.text);
    const [mode] = await auditLines((l) => l.event === 'refused' && l.principal === 'ro', 1, 'the principal in a mode it may not use');
    assert.deepEqual({ ...mode, time: undefined }, { time: undefined, event: 'refused', principal: 'ro', mode: 'all', outcome: 'refused', reason: 'principal "ro" may not use mode "all"' });

    const c = await connectHttp(`${gw.url}/limited`, { headers: AUTH });
    const hidden = await c.request('tools/call', { name: 'conf:test_simple_text', arguments: { a: 1 } }, { headers: { ...AUTH, traceparent: traceparent() } });
    assert.equal(hidden.error?.code, -32602, JSON.stringify(hidden));
    const unknown = await c.request('tools/call', { name: 'nope:nothing', arguments: {} });
    assert.equal(unknown.error?.code, -32602, JSON.stringify(unknown));
    const [line] = await auditLines((l) => l.event === 'refused' && l.tool === 'conf:test_simple_text', 1, 'the hidden tool');
    assert.deepEqual(
      { ...line, time: undefined },
      {
        time: undefined,
        event: 'refused',
        principal: 'ci',
        session: c.session,
        mode: 'limited',
        tool: 'conf:test_simple_text',
        arguments_digest: digest({ a: 1 }),
        outcome: 'refused',
        trace_id: TRACE,
        reason: 'tool not visible in mode limited',
      },
    );
    // An unknown tool is refused and audited too: probing for tools is
    // what an auditor looks for.
    const [probe] = await auditLines((l) => l.event === 'refused' && l.tool === 'nope:nothing', 1, 'the unknown tool');
    assert.deepEqual(
      { ...probe, time: undefined },
      { time: undefined, event: 'refused', principal: 'ci', session: c.session, mode: 'limited', tool: 'nope:nothing', arguments_digest: digest({}), outcome: 'refused', reason: 'Unknown tool: nope:nothing' },
    );
    const m1 = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
    assert.equal(sample(m1, 'mcpgw_refused_total', { reason: 'auth' }) - sample(m0, 'mcpgw_refused_total', { reason: 'auth' }), 3);
    assert.equal(sample(m1, 'mcpgw_refused_total', { reason: 'tool_hidden' }) - sample(m0, 'mcpgw_refused_total', { reason: 'tool_hidden' }), 1);
    assert.equal(sample(m1, 'mcpgw_refused_total', { reason: 'unknown_tool' }) - sample(m0, 'mcpgw_refused_total', { reason: 'unknown_tool' }), 1);
    await c.close();
  }),
);

test(
  'every tools/call and tools/callSaga has its audit line: unknown names, bad params, each refused with why',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: AUTH });
    const calls = [
      ['tools/call', { name: 'toolbox:no_such_tool', arguments: { probe: 1 } }, 'toolbox:no_such_tool', 'Unknown tool: toolbox:no_such_tool'],
      ['tools/call', { name: 'admin:drop_tables' }, 'admin:drop_tables', 'Unknown tool: admin:drop_tables'],
      ['tools/callSaga', { name: 'saga:unknown', arguments: {} }, 'saga:unknown', 'Unknown tool: saga:unknown'],
      ['tools/call', { name: 'toolbox:echo', arguments: 'not an object' }, 'toolbox:echo', 'Invalid params: arguments must be an object'],
      ['tools/call', { name: 42 }, undefined, 'Invalid params: name must be a string'],
      ['tools/call', undefined, undefined, 'Invalid params: tools/call needs params'],
    ];
    for (const [method, params, tool, reason] of calls) {
      const answer = await c.request(method, params);
      assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
      assert.equal(answer.error.message, reason);
      const [line] = await auditLines((l) => l.event === 'refused' && l.reason === reason && l.session === c.session, 1, reason);
      assert.equal(line.tool, tool, JSON.stringify(line));
      assert.equal(line.principal, 'ci');
      assert.equal(line.outcome, 'refused');
    }
    // A call that ran has its own line, as before.
    await c.callTool('toolbox:echo', { text: 'audited' });
    await auditLines((l) => l.event === 'call' && l.tool === 'toolbox:echo' && l.session === c.session && l.outcome === 'ok', 1, 'the call');
    await c.close();
  }),
);

test(
  'a tools/call refused by limits.calls_per_s has its refused line, naming the tool',
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-audit-rate-');
    const file = path.join(dir, 'audit.jsonl');
    const limited = await startGateway(
      { welcome: { strategy: 'none' }, audit: { path: file }, limits: { calls_per_s: 1, burst: 1 }, servers: [toolboxStdio()] },
      { dir, label: 'mcpgw-rate' },
    );
    const c = await connectHttp(limited.url);
    // The bucket holds one call: of two at once, one is refused.
    const answers = await Promise.all([1, 2].map((n) => c.request('tools/call', { name: 'toolbox:echo', arguments: { text: `n${n}` } })));
    const over = answers.find((a) => a.error);
    assert.equal(over?.error.code, -32000, JSON.stringify(answers));
    const line = await pollUntil(() => readJsonLines(file).find((l) => l.event === 'refused'), { what: 'the refused line' });
    assert.equal(line.tool, 'toolbox:echo', JSON.stringify(line));
    assert.equal(line.outcome, 'refused');
    assert.match(line.reason, /limits\.calls_per_s/);
    await c.close();
  }),
);

test(
  'a saga: one saga_round line per round (suspended, then complete), besides the call line of the upstream call',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: AUTH, capabilities: {} });
    const args = { message: 'audit-saga' };
    const s = await c.request('tools/callSaga', { name: 'conf:test_elicitation', arguments: args }, { headers: { ...AUTH, traceparent: traceparent() } });
    assert.equal(s.result?.state, 'suspended', JSON.stringify(s));
    const answer = { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } };
    const done = await c.request(
      'tools/resumeSaga',
      { sagaToken: s.result.sagaToken, completedSteps: [{ stepId: 'user_details', result: answer }] },
      { headers: { ...AUTH, traceparent: traceparent('1111111111111111') } },
    );
    assert.equal(done.error, undefined, JSON.stringify(done));
    const rounds = await auditLines((l) => l.event === 'saga_round' && l.tool === 'conf:test_elicitation', 2, 'two saga rounds');
    const common = { event: 'saga_round', principal: 'ci', session: c.session, mode: 'all', tool: 'conf:test_elicitation', arguments_digest: digest(args), outcome: 'ok', trace_id: TRACE };
    assert.deepEqual({ ...rounds[0], time: undefined, ms: undefined }, { time: undefined, ms: undefined, ...common, reason: 'suspended: 1 question(s) for the client' });
    assert.deepEqual({ ...rounds[1], time: undefined, ms: undefined }, { time: undefined, ms: undefined, ...common, reason: 'complete' });
    const [call] = await auditLines((l) => l.event === 'call' && l.tool === 'conf:test_elicitation', 1, 'the upstream call of the saga');
    assert.equal(call.outcome, 'ok');
    assert.equal(call.trace_id, TRACE);
    await c.close();
  }),
);

test(
  'MRTR (a 2026-07-28 client): one mrtr_round line per round, input_required then complete',
  withDiagnostics(async () => {
    const args = { message: 'audit-mrtr' };
    const caps = { elicitation: { form: {} } };
    const headers = { ...AUTH, traceparent: traceparent() };
    const r1 = await srpc(gw.url, 'tools/call', { name: 'conf:test_elicitation', arguments: args }, { caps, headers });
    assert.equal(r1.message?.result?.resultType, 'input_required', r1.text);
    const answer = { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } };
    const r2 = await srpc(
      gw.url,
      'tools/call',
      { name: 'conf:test_elicitation', arguments: args, inputResponses: { user_details: answer }, requestState: r1.message.result.requestState },
      { caps, headers },
    );
    assert.equal(r2.message?.result?.resultType, 'complete', r2.text);
    const rounds = await auditLines((l) => l.event === 'mrtr_round' && l.arguments_digest === digest(args), 2, 'two MRTR rounds');
    const common = { event: 'mrtr_round', principal: 'ci', mode: 'all', tool: 'conf:test_elicitation', arguments_digest: digest(args), outcome: 'ok', trace_id: TRACE };
    assert.deepEqual({ ...rounds[0], time: undefined, ms: undefined }, { time: undefined, ms: undefined, ...common, reason: 'suspended: 1 question(s) for the client' });
    assert.deepEqual({ ...rounds[1], time: undefined, ms: undefined }, { time: undefined, ms: undefined, ...common, reason: 'complete' });
  }),
);

test(
  'SIGHUP reopens the audit file: after logrotate moved it, new lines go to a new file at the path; a reload with another path moves the log',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url, { headers: AUTH });
    await c.callTool('toolbox:echo', { text: 'before rotation' });
    await auditLines((l) => l.arguments_digest === digest({ text: 'before rotation' }), 1, 'the call before rotation');
    const rotated = `${auditFile}.1`;
    renameSync(auditFile, rotated);
    gw.proc.child.kill('SIGHUP');
    await gw.proc.waitForLine('stderr', /reloaded .*: 2 upstreams kept/);
    await c.callTool('toolbox:echo', { text: 'after rotation' });
    const [after] = await auditLines((l) => l.tool === 'toolbox:echo', 1, 'the call after rotation, in the new file');
    assert.equal(after.arguments_digest, digest({ text: 'after rotation' }), 'only the call after the rotation is in the new file');
    assert.equal(readJsonLines(rotated).filter((l) => l.arguments_digest === digest({ text: 'after rotation' })).length, 0);

    // A reload that changes audit.path moves the log there.
    const moved = `${auditFile}.moved`;
    writeFileSync(gw.configPath, readFileSync(gw.configPath, 'utf8').replace(auditFile, moved));
    gw.proc.child.kill('SIGHUP');
    await pollUntil(() => (gw.proc.stderrText.match(/reloaded .*: 2 upstreams kept/g) || []).length === 2, { what: 'the second reload' });
    await c.callTool('toolbox:echo', { text: 'after the move' });
    await pollUntil(() => readJsonLines(moved).some((l) => l.arguments_digest === digest({ text: 'after the move' })), { what: 'the line in the new file' });
    assert.equal(readJsonLines(auditFile).filter((l) => l.arguments_digest === digest({ text: 'after the move' })).length, 0);
    await c.close();
  }),
);
