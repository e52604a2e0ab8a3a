// Sagas (seed 004): tools/callSaga and tools/resumeSaga through the real
// binary, as raw JSON-RPC over Streamable HTTP (stateful 2025 sessions and
// stateless 2026-07-28 requests).
//
//   - seed 004's message flow, steps 1-6, with deploy_flow's `deploy`
//     (elicits `target`, samples `safety`, then calls the toolbox `echo`:
//     "the act"); a proxied legacy upstream asking mid-call (conformance
//     server test_elicitation / test_sampling / list_roots, the talker's
//     ask_twice and ask_two); a tool that needs no input completes at once;
//   - the token: "mcpgw1." base64url(payload) "." base64url(HMAC-SHA256),
//     its payload checked field by field and its signature recomputed here;
//   - restart: gateway A (SIGTERM) between callSaga and resumeSaga, B with
//     the same config completes the resume; another secret is refused;
//   - the failure matrix, each with its exact error and proof that nothing
//     ran (the tap in front of the conformance server / toolbox, the talker's
//     log): tampered, expired, another principal, replayed, another tool
//     (hidden by the mode, crafted, an MRTR requestState), oversized,
//     completedSteps missing a step or malformed, a step with `error`;
//   - a saga in stateless 2026-07-28 requests.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  BUILD,
  REPO,
  TOOLBOX,
  connectHttp,
  requireBinaries,
  rpc,
  startGateway,
  startTap,
  startUpstreamHttp,
  tempDir,
  withDiagnostics,
  readJsonLines,
} from './harness.mjs';
import { srpc } from './stateless.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const DEPLOY_FLOW = path.join(BUILD, 'plugins', 'libdeploy_flow.so');
const TALKER = path.join(REPO, 'tests', 'integration', 'talker-fixture.mjs');
const SECRET = 'sagas-test-secret-0123456789';
const OTHER_SECRET = 'sagas-other-secret-9876543210';
const TTL_S = 900;
const SAGAS_CAPABILITY = { methods: ['tools/callSaga', 'tools/resumeSaga'], stepTypes: ['elicitation', 'sampling', 'roots'] };
const SIGNATURE_REFUSAL = 'Invalid sagaToken: token signature does not verify (tampered, or signed with another secret)';

let tapToolbox; // in front of the toolbox: every `echo` (deploy's act) that reaches it
let tapConf; // in front of the conformance server (legacy era): every call and answer reaching it
let gw; // the main gateway
let authGw; // bearer auth: principals ci and second
const logs = {};
const TALKERS = ['rounds', 'two', 'errs', 'hidden', 'stateless', 'plain'];

/** The gateway config every gateway of this file uses (the restart test's too), plus `extra`. */
function config(extra = {}) {
  return {
    welcome: { strategy: 'none' },
    sagas: { secret: SECRET, ttl_s: TTL_S },
    modes: { limited: { description: 'The toolbox only', include_tools: ['toolbox:*'] } },
    servers: [
      { name: 'toolbox', transport: 'http', url: tapToolbox.url, timeout_ms: 30000 },
      { name: 'conf', transport: 'http', url: tapConf.url, timeout_ms: 60000 },
    ],
    plugins: [{ path: DEPLOY_FLOW, config: { server: 'toolbox' } }],
    ...extra,
  };
}
const talker = (name) => ({ name, transport: 'stdio', command: process.execPath, args: [TALKER, logs[name]], timeout_ms: 60000 });

before(async () => {
  requireBinaries(TOOLBOX, CONFORMANCE);
  if (!existsSync(DEPLOY_FLOW)) throw new Error(`missing ${DEPLOY_FLOW} (plugins/examples/deploy_flow; build it, or set MCPGW_BUILD_DIR)`);
  const dir = tempDir('mcpgw-sagas-');
  for (const n of TALKERS) logs[n] = path.join(dir, `${n}.jsonl`);
  const [toolbox, conf] = await Promise.all([
    startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' }),
    startUpstreamHttp(CONFORMANCE, ['--watch-interval-ms', '0'], { label: 'conformance-http' }),
  ]);
  tapToolbox = await startTap(toolbox.url);
  tapConf = await startTap(conf.url);
  const base = config();
  [gw, authGw] = await Promise.all([
    startGateway({ ...base, servers: [...base.servers, ...TALKERS.map(talker)] }, { label: 'mcpgw-main' }),
    startGateway(
      { ...base, auth: { bearer_tokens: [{ token: 'tok-ci', name: 'ci' }, { token: 'tok-second', name: 'second' }] } },
      { label: 'mcpgw-auth' },
    ),
  ]);
});

// ---------------------------------------------------------------------------
// helpers

const CI = { authorization: 'Bearer tok-ci' };
const SECOND = { authorization: 'Bearer tok-second' };

/** A stateful (2025-06-18) session on `g` (optionally `/mcp/<mode>`), declaring no client capabilities at all. */
function session(g, { mode, headers } = {}) {
  return connectHttp(mode ? `${g.url}/${mode}` : g.url, { headers, capabilities: {} });
}

const callSaga = (c, name, args) => c.request('tools/callSaga', { name, arguments: args });
const resumeSaga = (c, sagaToken, completedSteps) => c.request('tools/resumeSaga', { sagaToken, completedSteps });

const show = (m) => JSON.stringify(m).slice(0, 3000);

/** The suspended saga state of response `m`: exactly state, sagaToken, steps (and resultType "complete" when stateless). */
function suspended(m, what, { stateless = false } = {}) {
  assert.equal(m?.error, undefined, `${what}: ${show(m)}`);
  const r = m.result;
  assert.deepEqual(Object.keys(r).sort(), stateless ? ['resultType', 'sagaToken', 'state', 'steps'] : ['sagaToken', 'state', 'steps'], `${what}: ${show(m)}`);
  if (stateless) assert.equal(r.resultType, 'complete', `${what}: ${show(m)}`);
  assert.equal(r.state, 'suspended', `${what}: ${show(m)}`);
  assert.match(r.sagaToken, /^mcpgw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, `${what}: ${show(m)}`);
  assert.ok(Array.isArray(r.steps) && r.steps.length > 0, `${what}: ${show(m)}`);
  for (const s of r.steps) {
    assert.deepEqual(Object.keys(s).sort(), ['params', 'stepId', 'type'], `${what}: ${show(s)}`);
    assert.equal(s.params?._meta?.['mcpgw/inputKey'], undefined, `${what}: the gateway's own _meta leaked`);
    assert.equal(s.params?._meta?.['mcpgw/inputBatch'], undefined, `${what}: the gateway's own _meta leaked`);
  }
  return r;
}

/** The final CallToolResult of response `m` (no saga state in it). */
function final(m, what) {
  assert.equal(m?.error, undefined, `${what}: ${show(m)}`);
  assert.ok(m.result && typeof m.result === 'object', `${what}: ${show(m)}`);
  assert.equal(m.result.state, undefined, `${what}: still suspended: ${show(m)}`);
  assert.equal(m.result.sagaToken, undefined, `${what}: ${show(m)}`);
  return m.result;
}

/** Asserts response `m` is exactly the JSON-RPC error {code, message} (message: string, or RegExp). */
function refused(m, message, what, code = -32602) {
  assert.equal(m?.result, undefined, `${what}: ${show(m)}`);
  assert.equal(m?.error?.code, code, `${what}: ${show(m)}`);
  if (message instanceof RegExp) assert.match(m.error.message, message, `${what}: ${show(m)}`);
  else assert.equal(m.error.message, message, `${what}: ${show(m)}`);
  return m.error;
}

// --- tokens

const b64u = (s) => Buffer.from(s, 'utf8').toString('base64url');
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
/** The payload of a token, parsed. */
const claimsOf = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
/** A token with payload `claims`, signed as the gateway signs (HMAC-SHA256 over "mcpgw1.<payload>"). */
function sign(claims, secret = SECRET) {
  const head = `mcpgw1.${b64u(JSON.stringify(claims))}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}
const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
const nowS = () => Math.floor(Date.now() / 1000);

/** Checks the token format and every claim; returns the claims. */
function checkToken(token, { principal = '', tool, args, steps }) {
  const [prefix, payload, sig] = token.split('.');
  assert.equal(prefix, 'mcpgw1');
  assert.equal(sig, createHmac('sha256', SECRET).update(`mcpgw1.${payload}`).digest('base64url'), 'the signature is not HMAC-SHA256(sagas.secret, "mcpgw1.<payload>")');
  const c = claimsOf(token);
  assert.deepEqual(Object.keys(c).sort(), ['a', 'e', 'i', 'k', 'p', 's', 't'], JSON.stringify(c));
  assert.equal(c.k, 'saga');
  assert.equal(c.p, principal);
  assert.equal(c.t, `tools/call ${tool}`);
  assert.equal(c.a, sha256(JSON.stringify(args)));
  assert.match(c.i, /^[0-9a-f]{24}$/);
  assert.ok(Number.isInteger(c.e) && Math.abs(c.e - (nowS() + TTL_S)) <= 30, `expiry ${c.e}, now ${nowS()}`);
  assert.deepEqual(Object.keys(c.s).sort(), ['arguments', 'park', 'steps', 'tool'], JSON.stringify(c.s));
  assert.match(c.s.park, /^[0-9a-f]{24}$/);
  assert.equal(c.s.tool, tool);
  assert.deepEqual(c.s.arguments, args);
  assert.deepEqual(c.s.steps, steps);
  return c;
}

// --- what reached the upstreams

const isResponse = (b) => b && typeof b === 'object' && !Array.isArray(b) && !('method' in b) && ('result' in b || 'error' in b);
/** deploy's act for `service` (toolbox echo "deploy <service> ..."), as reached the toolbox. */
const acts = (service) => tapToolbox.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'echo' && String(b.params?.arguments?.text).startsWith(`deploy ${service} `));
/** conf tools/call of `tool` with argument `key` = `value`, as reached the conformance server. */
const confCalls = (tool, key, value) => tapConf.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === tool && b.params?.arguments?.[key] === value);
/** Answers (JSON-RPC responses) the gateway gave the conformance server whose result or error mentions `marker`. */
const confAnswers = (marker) => tapConf.seen.filter((b) => isResponse(b) && JSON.stringify(b).includes(marker));

/** Every message talker `name` has received. */
function saw(name) {
  return readJsonLines(logs[name]);
}
const talkerCalls = (name, tool) => saw(name).filter((m) => m.method === 'tools/call' && (tool === undefined || m.params?.name === tool));

// --- fixed texts

const TARGET_SCHEMA = {
  type: 'object',
  properties: { target: { type: 'string', title: 'Deployment target', enum: ['staging', 'production'] } },
  required: ['target'],
};
const targetStep = (service, version) => ({ type: 'elicitation', stepId: 'target', params: { message: `Where should ${service} ${version} be deployed?`, requestedSchema: TARGET_SCHEMA } });
const safetyStep = (service, version, target) => ({
  type: 'sampling',
  stepId: 'safety',
  params: { messages: [{ role: 'user', content: { type: 'text', text: `Is it safe to deploy ${service} ${version} to ${target}? Answer SAFE or UNSAFE and why.` } }], maxTokens: 200 },
});
const pick = (target) => ({ action: 'accept', content: { target } });
const says = (text) => ({ role: 'assistant', content: { type: 'text', text }, model: 'client-side-llm-v2' });
const deployed = (service, version, target, safety) => ({
  content: [{ type: 'text', text: `Deployed ${service} ${version} to ${target}.` }],
  structuredContent: { service, version, target, safety, deployed: true },
});

const CONF_SCHEMA = {
  type: 'object',
  properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
  required: ['username', 'email'],
};
const confStep = (message) => ({ type: 'elicitation', stepId: 'user_details', params: { message, requestedSchema: CONF_SCHEMA } });
const confAnswer = (username) => ({ action: 'accept', content: { username, email: `${username}@example.org` } });
const confResult = (username) => ({ content: [{ type: 'text', text: `User response: action=accept, content=${JSON.stringify(confAnswer(username).content)}` }] });

/** Rounds 1 and 2 of deploy in session `c`: both suspended states (round 2's token is the one awaiting `safety`). */
async function deployRounds(c, service, version, target) {
  const args = { service, version };
  const s1 = suspended(await callSaga(c, 'deploy', args), 'deploy round 1');
  assert.deepEqual(s1.steps, [targetStep(service, version)]);
  const s2 = suspended(await resumeSaga(c, s1.sagaToken, [{ stepId: 'target', result: pick(target) }]), 'deploy round 2');
  assert.deepEqual(s2.steps, [safetyStep(service, version, target)]);
  return { args, s1, s2 };
}

/** callSaga conf:test_elicitation {message} in session `c`: the suspended state, checked. */
async function confSaga(c, message) {
  const s = suspended(await callSaga(c, 'conf:test_elicitation', { message }), `conf:test_elicitation ${message}`);
  assert.deepEqual(s.steps, [confStep(message)]);
  return s;
}

// ---------------------------------------------------------------------------
// capability

test(
  'initialize and server/discover advertise capabilities.experimental["mcpgw/sagas"] {methods, stepTypes}',
  withDiagnostics(async () => {
    const c = await session(gw);
    assert.deepEqual(c.initResult.capabilities.experimental?.['mcpgw/sagas'], SAGAS_CAPABILITY, JSON.stringify(c.initResult.capabilities));
    const r = await srpc(gw.url, 'server/discover', {});
    assert.equal(r.message?.error, undefined, r.text);
    assert.deepEqual(r.message.result.capabilities.experimental?.['mcpgw/sagas'], SAGAS_CAPABILITY, r.text);
  }),
);

// ---------------------------------------------------------------------------
// seed 004's message flow, and the other kinds of tool

test(
  'seed 004 steps 1-6, raw JSON-RPC: callSaga deploy → suspended (elicitation) → resume → suspended (sampling) → resume with both steps → the CallToolResult; the act runs once, at the end',
  withDiagnostics(async () => {
    const c = await session(gw);
    const post = (body) => rpc(c.url, body, c.opts());
    const args = { service: 'billing', version: '1.4.2' };

    // 1. Client initiates the tool call. 2. Server suspends for elicitation.
    const r1 = await post({ jsonrpc: '2.0', id: 'client-req-1', method: 'tools/callSaga', params: { name: 'deploy', arguments: args } });
    assert.equal(r1.status, 200, r1.text);
    assert.equal(r1.message?.id, 'client-req-1', r1.text);
    const s1 = suspended(r1.message, 'step 2');
    assert.deepEqual(s1.steps, [targetStep('billing', '1.4.2')]);
    checkToken(s1.sagaToken, { tool: 'deploy', args, steps: ['target'] });
    assert.equal(acts('billing').length, 0, 'acted before any answer');

    // 3. Client resumes with the elicitation result. 4. Server suspends for sampling.
    const elicited = { stepId: 'target', result: { action: 'accept', content: { target: 'production' } } };
    const r2 = await post({ jsonrpc: '2.0', id: 'client-req-2', method: 'tools/resumeSaga', params: { sagaToken: s1.sagaToken, completedSteps: [elicited] } });
    assert.equal(r2.message?.id, 'client-req-2', r2.text);
    const s2 = suspended(r2.message, 'step 4');
    assert.deepEqual(s2.steps, [safetyStep('billing', '1.4.2', 'production')]);
    assert.notEqual(s2.sagaToken, s1.sagaToken);
    const c2 = checkToken(s2.sagaToken, { tool: 'deploy', args, steps: ['target', 'safety'] });
    assert.notEqual(c2.i, claimsOf(s1.sagaToken).i, 'a new token has a new id');
    assert.equal(acts('billing').length, 0, 'acted before the last answer');

    // 5. Client resumes with all completed step results. 6. Server completes the tool call.
    const sampled = { stepId: 'safety', result: { role: 'assistant', content: { type: 'text', text: 'SAFE: all systems are green.' }, model: 'client-side-llm-v2' } };
    const r3 = await post({ jsonrpc: '2.0', id: 'client-req-3', method: 'tools/resumeSaga', params: { sagaToken: s2.sagaToken, completedSteps: [elicited, sampled] } });
    assert.equal(r3.message?.id, 'client-req-3', r3.text);
    assert.deepEqual(final(r3.message, 'step 6'), deployed('billing', '1.4.2', 'production', 'SAFE: all systems are green.'));
    assert.equal(acts('billing').length, 1);
    assert.deepEqual(acts('billing')[0].params.arguments, { text: 'deploy billing 1.4.2 to production' });
  }),
);

test(
  'a proxied legacy upstream asking mid-call: conformance test_elicitation, test_sampling and list_roots each suspend with one step (type elicitation / sampling / roots); the answer reaches the upstream',
  withDiagnostics(async () => {
    const c = await session(gw);
    // elicitation
    const s = await confSaga(c, 'proxied-elicit');
    checkToken(s.sagaToken, { tool: 'conf:test_elicitation', args: { message: 'proxied-elicit' }, steps: ['user_details'] });
    const done = final(await resumeSaga(c, s.sagaToken, [{ stepId: 'user_details', result: confAnswer('ada') }]), 'elicitation resume');
    assert.deepEqual(done, confResult('ada'));
    assert.equal(confCalls('test_elicitation', 'message', 'proxied-elicit').length, 1);
    assert.deepEqual(confAnswers('ada@example.org').map((b) => b.result), [confAnswer('ada')]);

    // sampling
    const ss = suspended(await callSaga(c, 'conf:test_sampling', { prompt: 'proxied two plus two' }), 'test_sampling');
    assert.deepEqual(ss.steps, [{ type: 'sampling', stepId: 'llm_response', params: { messages: [{ role: 'user', content: { type: 'text', text: 'proxied two plus two' } }], maxTokens: 100 } }]);
    const sd = final(await resumeSaga(c, ss.sagaToken, [{ stepId: 'llm_response', result: says('four') }]), 'sampling resume');
    assert.deepEqual(sd, { content: [{ type: 'text', text: 'LLM response: four' }] });
    assert.equal(confCalls('test_sampling', 'prompt', 'proxied two plus two').length, 1);

    // roots (the gateway's addition to the seed's step types)
    const before = tapConf.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'test_input_required_result_list_roots').length;
    const sr = suspended(await callSaga(c, 'conf:test_input_required_result_list_roots', {}), 'list_roots');
    assert.deepEqual(sr.steps, [{ type: 'roots', stepId: 'client_roots', params: {} }]);
    const rd = final(await resumeSaga(c, sr.sagaToken, [{ stepId: 'client_roots', result: { roots: [{ uri: 'file:///work/project', name: 'project' }] } }]), 'roots resume');
    assert.deepEqual(rd, { content: [{ type: 'text', text: 'Client roots: file:///work/project (project)' }] });
    assert.equal(tapConf.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'test_input_required_result_list_roots').length, before + 1);
  }),
);

test(
  'a proxied legacy upstream asking twice (talker ask_twice: two rounds) and twice at once (ask_two: one round with two steps)',
  withDiagnostics(async () => {
    const c = await session(gw);
    const answerSchema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const s1 = suspended(await callSaga(c, 'rounds:ask_twice', {}), 'ask_twice round 1');
    assert.deepEqual(s1.steps, [{ type: 'elicitation', stepId: 'step1', params: { message: 'step 1: your name?', requestedSchema: answerSchema } }]);
    const step1 = { stepId: 'step1', result: { action: 'accept', content: { answer: 'Ada' } } };
    const s2 = suspended(await resumeSaga(c, s1.sagaToken, [step1]), 'ask_twice round 2');
    assert.deepEqual(s2.steps, [{ type: 'elicitation', stepId: 'step2', params: { message: 'step 2: your colour, Ada?', requestedSchema: answerSchema } }]);
    const step2 = { stepId: 'step2', result: { action: 'accept', content: { answer: 'blue' } } };
    const done = final(await resumeSaga(c, s2.sagaToken, [step1, step2]), 'ask_twice round 3');
    assert.deepEqual(done, { content: [{ type: 'text', text: `step1=${JSON.stringify(step1.result)} step2=${JSON.stringify(step2.result)}` }] });
    assert.equal(talkerCalls('rounds', 'ask_twice').length, 1, 'the call ran more than once upstream');
    assert.deepEqual(saw('rounds').filter(isResponse).map((m) => m.result), [step1.result, step2.result]);

    const t = suspended(await callSaga(c, 'two:ask_two', {}), 'ask_two');
    assert.deepEqual(t.steps, [
      { type: 'elicitation', stepId: 'first', params: { message: 'first question', requestedSchema: answerSchema } },
      { type: 'sampling', stepId: 'second', params: { messages: [{ role: 'user', content: { type: 'text', text: 'second question' } }], maxTokens: 10 } },
    ]);
    const a = { action: 'accept', content: { answer: 'one' } };
    const b = says('two');
    const both = final(await resumeSaga(c, t.sagaToken, [{ stepId: 'second', result: b }, { stepId: 'first', result: a }]), 'ask_two resume (steps in any order)');
    assert.deepEqual(both, { content: [{ type: 'text', text: `first=${JSON.stringify(a)} second=${JSON.stringify(b)}` }] });
  }),
);

test(
  'a tool that needs no input completes at once: callSaga returns the CallToolResult itself (proxied and composite); an unknown tool is -32602',
  withDiagnostics(async () => {
    const c = await session(gw);
    const before = tapToolbox.seen.filter((b) => b?.method === 'tools/call' && b.params?.arguments?.text === 'no input needed').length;
    const r = final(await callSaga(c, 'toolbox:echo', { text: 'no input needed' }), 'toolbox:echo');
    assert.deepEqual(r, { content: [{ type: 'text', text: 'no input needed' }] });
    assert.equal(tapToolbox.seen.filter((b) => b?.method === 'tools/call' && b.params?.arguments?.text === 'no input needed').length, before + 1);
    const p = final(await callSaga(c, 'plain:echo', { text: 'talker says hi' }), 'talker echo');
    assert.deepEqual(p, { content: [{ type: 'text', text: 'talker says hi' }] });
    // deploy refuses bad arguments before asking anything.
    const bad = final(await callSaga(c, 'deploy', { service: '', version: '1' }), 'deploy without a service');
    assert.deepEqual(bad, { content: [{ type: 'text', text: 'deploy needs a service and a version' }], isError: true });
    refused(await callSaga(c, 'nope:nothing', {}), 'Unknown tool: nope:nothing', 'unknown tool');
  }),
);

// ---------------------------------------------------------------------------
// restart

test(
  'restart: gateway A is stopped (SIGTERM) between callSaga and resumeSaga; B with the same config and secret completes the resume by replaying the call; a gateway with another secret refuses the token and runs nothing',
  withDiagnostics(async () => {
    const cfg = config({ shutdown_grace_ms: 2000 });
    const a = await startGateway(cfg, { label: 'mcpgw-A' });
    const ca = await session(a);
    const { args, s2 } = await deployRounds(ca, 'survivor', '9.9.9', 'production');
    const cs = await confSaga(ca, 'across-restart');
    assert.equal(confCalls('test_elicitation', 'message', 'across-restart').length, 1);

    const exit = await a.proc.stop({ signal: 'SIGTERM' });
    assert.equal(exit.killed, false, `A did not exit on SIGTERM: ${JSON.stringify(exit)}`);
    assert.equal(a.proc.alive, false);

    const b = await startGateway(cfg, { label: 'mcpgw-B' });
    const cb = await session(b);
    const steps = [
      { stepId: 'target', result: pick('production') },
      { stepId: 'safety', result: says('SAFE: canary is healthy.') },
    ];
    assert.deepEqual(final(await resumeSaga(cb, s2.sagaToken, steps), 'deploy resumed on B'), deployed('survivor', '9.9.9', 'production', 'SAFE: canary is healthy.'));
    assert.equal(acts('survivor').length, 1);
    assert.deepEqual(args, { service: 'survivor', version: '9.9.9' });

    // The proxied call: B runs it again upstream and answers its question from completedSteps.
    assert.deepEqual(final(await resumeSaga(cb, cs.sagaToken, [{ stepId: 'user_details', result: confAnswer('restarted') }]), 'conf resumed on B'), confResult('restarted'));
    assert.equal(confCalls('test_elicitation', 'message', 'across-restart').length, 2, 'B did not replay the call upstream');
    assert.deepEqual(confAnswers('restarted@example.org').map((m) => m.result), [confAnswer('restarted')]);
    // B remembers what it resumed.
    refused(await resumeSaga(cb, s2.sagaToken, steps), 'Invalid sagaToken: it was already resumed', 'second resume on B');

    // Another secret: refused, nothing runs.
    const other = await startGateway({ ...cfg, sagas: { secret: OTHER_SECRET, ttl_s: TTL_S } }, { label: 'mcpgw-other-secret' });
    const co = await session(other);
    const fresh = await deployRounds(cb, 'foreign', '1.0.0', 'staging');
    const freshConf = await confSaga(cb, 'foreign-secret');
    const fsteps = [
      { stepId: 'target', result: pick('staging') },
      { stepId: 'safety', result: says('SAFE') },
    ];
    refused(await resumeSaga(co, fresh.s2.sagaToken, fsteps), SIGNATURE_REFUSAL, 'another secret (deploy)');
    refused(await resumeSaga(co, fresh.s1.sagaToken, fsteps.slice(0, 1)), SIGNATURE_REFUSAL, 'another secret (deploy, round 1 token)');
    refused(await resumeSaga(co, freshConf.sagaToken, [{ stepId: 'user_details', result: confAnswer('foreigner') }]), SIGNATURE_REFUSAL, 'another secret (conf)');
    assert.equal(acts('foreign').length, 0, 'the gateway with another secret acted');
    assert.equal(confCalls('test_elicitation', 'message', 'foreign-secret').length, 1, 'the gateway with another secret ran the call');
    assert.equal(confAnswers('foreigner@example.org').length, 0);
    // ... and the genuine resumes still complete on B.
    assert.deepEqual(final(await resumeSaga(cb, fresh.s2.sagaToken, fsteps), 'foreign on B'), deployed('foreign', '1.0.0', 'staging', 'SAFE'));
    assert.deepEqual(final(await resumeSaga(cb, freshConf.sagaToken, [{ stepId: 'user_details', result: confAnswer('foreigner') }]), 'foreign conf on B'), confResult('foreigner'));
    await Promise.all([b.proc.stop(), other.proc.stop()]);
  }),
);

// ---------------------------------------------------------------------------
// the failure matrix

test(
  'a tampered token (a payload byte flipped; a signature byte flipped) → -32602 signature refusal; nothing reaches the upstream; the genuine token still completes',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = await confSaga(c, 'tamper-me');
    const [prefix, payload, sig] = s.sagaToken.split('.');
    const steps = [{ stepId: 'user_details', result: confAnswer('mallory') }];
    for (const [what, bad] of Object.entries({
      'a payload byte flipped': `${prefix}.${flip(payload, payload.length >> 1)}.${sig}`,
      'the first payload byte flipped': `${prefix}.${flip(payload, 0)}.${sig}`,
      'a signature byte flipped': `${prefix}.${payload}.${flip(sig, 3)}`,
      'the last signature byte flipped': `${prefix}.${payload}.${flip(sig, sig.length - 1)}`,
    })) {
      assert.notEqual(bad, s.sagaToken, what);
      refused(await resumeSaga(c, bad, steps), SIGNATURE_REFUSAL, what);
    }
    assert.equal(confCalls('test_elicitation', 'message', 'tamper-me').length, 1, 'a refused resume ran the call again');
    assert.equal(confAnswers('mallory@example.org').length, 0, 'a refused resume answered the upstream');

    // The same against the composite: no act.
    const d = await deployRounds(c, 'tamper', '0.0.1', 'staging');
    const [dp, dpayload, dsig] = d.s2.sagaToken.split('.');
    const dsteps = [
      { stepId: 'target', result: pick('staging') },
      { stepId: 'safety', result: says('SAFE') },
    ];
    refused(await resumeSaga(c, `${dp}.${flip(dpayload, dpayload.length >> 1)}.${dsig}`, dsteps), SIGNATURE_REFUSAL, 'deploy: payload flipped');
    refused(await resumeSaga(c, `${dp}.${dpayload}.${flip(dsig, 3)}`, dsteps), SIGNATURE_REFUSAL, 'deploy: signature flipped');
    assert.equal(acts('tamper').length, 0, 'a refused resume acted');

    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, steps), 'genuine conf'), confResult('mallory'));
    assert.deepEqual(final(await resumeSaga(c, d.s2.sagaToken, dsteps), 'genuine deploy'), deployed('tamper', '0.0.1', 'staging', 'SAFE'));
    assert.equal(acts('tamper').length, 1);
  }),
);

test(
  'an expired token (validly signed with the known secret, e in the past) → -32602 "token expired N s ago"; nothing runs; the unexpired original still completes',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = await confSaga(c, 'expire-me');
    const claims = claimsOf(s.sagaToken);
    const expired = sign({ ...claims, e: nowS() - 100 });
    const steps = [{ stepId: 'user_details', result: confAnswer('late') }];
    const err = refused(await resumeSaga(c, expired, steps), /^Invalid sagaToken: token expired (\d+) s ago \(sagas\.ttl_s is 900 s\)$/, 'expired');
    const ago = Number(err.message.match(/expired (\d+) s/)[1]);
    assert.ok(ago >= 100 && ago <= 160, `expired ${ago} s ago, expected about 100`);
    // Expired a second ago: refused too.
    refused(await resumeSaga(c, sign({ ...claims, e: nowS() - 1 }), steps), /^Invalid sagaToken: token expired \d+ s ago \(sagas\.ttl_s is 900 s\)$/, 'just expired');
    assert.equal(confCalls('test_elicitation', 'message', 'expire-me').length, 1);
    assert.equal(confAnswers('late@example.org').length, 0);

    // Composite: an expired round-2 token acts on nothing.
    const d = await deployRounds(c, 'expired', '1.0.0', 'production');
    const dsteps = [
      { stepId: 'target', result: pick('production') },
      { stepId: 'safety', result: says('SAFE') },
    ];
    refused(await resumeSaga(c, sign({ ...claimsOf(d.s2.sagaToken), e: nowS() - 3600 }), dsteps), /^Invalid sagaToken: token expired \d+ s ago \(sagas\.ttl_s is 900 s\)$/, 'deploy expired');
    assert.equal(acts('expired').length, 0);

    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, steps), 'the original'), confResult('late'));
    assert.deepEqual(final(await resumeSaga(c, d.s2.sagaToken, dsteps), 'deploy original'), deployed('expired', '1.0.0', 'production', 'SAFE'));
  }),
);

test(
  'a token of another principal (bearer auth ci vs second) → -32602 "token was issued to another principal"; nothing runs; its own principal completes it',
  withDiagnostics(async () => {
    const ci = await session(authGw, { headers: CI });
    const second = await session(authGw, { headers: SECOND });
    const s = suspended(await callSaga(ci, 'conf:test_elicitation', { message: 'for-ci' }), 'ci callSaga');
    checkToken(s.sagaToken, { principal: 'ci', tool: 'conf:test_elicitation', args: { message: 'for-ci' }, steps: ['user_details'] });
    const steps = [{ stepId: 'user_details', result: confAnswer('intruder') }];
    refused(await resumeSaga(second, s.sagaToken, steps), 'Invalid sagaToken: token was issued to another principal', 'second resumes ci\'s token');
    // A token re-signed for nobody ("" principal, as without auth) is refused too.
    refused(await resumeSaga(second, sign({ ...claimsOf(s.sagaToken), p: '' }), steps), 'Invalid sagaToken: token was issued to another principal', 'principal rewritten to ""');
    assert.equal(confCalls('test_elicitation', 'message', 'for-ci').length, 1);
    assert.equal(confAnswers('intruder@example.org').length, 0);

    const d = suspended(await callSaga(ci, 'deploy', { service: 'principal', version: '1' }), 'ci deploy');
    refused(await resumeSaga(second, d.sagaToken, [{ stepId: 'target', result: pick('production') }]), 'Invalid sagaToken: token was issued to another principal', 'second resumes ci\'s deploy');

    assert.deepEqual(final(await resumeSaga(ci, s.sagaToken, steps), 'ci resumes'), confResult('intruder'));
    const d2 = suspended(await resumeSaga(ci, d.sagaToken, [{ stepId: 'target', result: pick('production') }]), 'ci deploy round 2');
    assert.deepEqual(
      final(await resumeSaga(ci, d2.sagaToken, [{ stepId: 'target', result: pick('production') }, { stepId: 'safety', result: says('SAFE') }]), 'ci deploy round 3'),
      deployed('principal', '1', 'production', 'SAFE'),
    );
    assert.equal(acts('principal').length, 1);
  }),
);

test(
  'a replayed token → -32602 "it was already resumed" (a round-1 token after round 2, the last token after the result); nothing runs again',
  withDiagnostics(async () => {
    const c = await session(gw);
    const { s1, s2 } = await deployRounds(c, 'replay', '2.0.0', 'staging');
    const round1 = [{ stepId: 'target', result: pick('staging') }];
    const all = [...round1, { stepId: 'safety', result: says('SAFE') }];
    refused(await resumeSaga(c, s1.sagaToken, round1), 'Invalid sagaToken: it was already resumed', 'round-1 token again');
    assert.deepEqual(final(await resumeSaga(c, s2.sagaToken, all), 'round 3'), deployed('replay', '2.0.0', 'staging', 'SAFE'));
    assert.equal(acts('replay').length, 1);
    refused(await resumeSaga(c, s2.sagaToken, all), 'Invalid sagaToken: it was already resumed', 'last token again');
    refused(await resumeSaga(c, s1.sagaToken, all), 'Invalid sagaToken: it was already resumed', 'round-1 token with every step');
    // Another session of the same principal: the guard is per token, not per session.
    const other = await session(gw);
    refused(await resumeSaga(other, s2.sagaToken, all), 'Invalid sagaToken: it was already resumed', 'last token, another session');
    assert.equal(acts('replay').length, 1, 'a replayed token acted again');

    const s = await confSaga(c, 'replay-me');
    const steps = [{ stepId: 'user_details', result: confAnswer('once') }];
    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, steps), 'conf'), confResult('once'));
    refused(await resumeSaga(c, s.sagaToken, steps), 'Invalid sagaToken: it was already resumed', 'conf token again');
    assert.equal(confCalls('test_elicitation', 'message', 'replay-me').length, 1);
    assert.equal(confAnswers('once@example.org').length, 1);
  }),
);

test(
  'a token for a tool the client cannot see (issued on /mcp, resumed on /mcp/limited; crafted for a hidden or unknown tool) → -32602 "its tool X is not available to this client"; nothing runs',
  withDiagnostics(async () => {
    const all = await session(gw);
    const limited = await session(gw, { mode: 'limited' });
    refused(await callSaga(limited, 'conf:test_elicitation', { message: 'hidden' }), 'Unknown tool: conf:test_elicitation', 'callSaga of a hidden tool');

    const s = await confSaga(all, 'mode-bound');
    const steps = [{ stepId: 'user_details', result: confAnswer('moded') }];
    refused(await resumeSaga(limited, s.sagaToken, steps), 'Invalid sagaToken: its tool conf:test_elicitation is not available to this client', 'resumed in another mode');
    assert.equal(confCalls('test_elicitation', 'message', 'mode-bound').length, 1);
    assert.equal(confAnswers('moded@example.org').length, 0);

    // Crafted, validly signed: a talker tool hidden by the mode, and a tool nobody serves.
    const args = { text: 'crafted' };
    const craft = (tool) =>
      sign({ k: 'saga', p: '', t: `tools/call ${tool}`, a: sha256(JSON.stringify(args)), i: 'c0ffee'.repeat(4), e: nowS() + 600, s: { park: '0'.repeat(24), tool, arguments: args, steps: [] } });
    refused(await resumeSaga(limited, craft('hidden:echo'), []), 'Invalid sagaToken: its tool hidden:echo is not available to this client', 'crafted, hidden tool');
    refused(await resumeSaga(limited, craft('ghost:tool'), []), 'Invalid sagaToken: its tool ghost:tool is not available to this client', 'crafted, unknown tool');
    refused(await resumeSaga(all, craft('ghost:tool'), []), 'Invalid sagaToken: its tool ghost:tool is not available to this client', 'crafted, unknown tool, mode all');
    assert.equal(talkerCalls('hidden').length, 0, 'the hidden tool ran');

    // The refusals did not use the token up: it completes in the mode it came from.
    assert.deepEqual(final(await resumeSaga(all, s.sagaToken, steps), 'resumed where issued'), confResult('moded'));
  }),
);

test(
  'an MRTR requestState offered as a sagaToken → -32602 "token is a mrtr token, not a saga one" (and a sagaToken as requestState is refused likewise); nothing runs',
  withDiagnostics(async () => {
    const first = await srpc(gw.url, 'tools/call', { name: 'conf:test_elicitation', arguments: { message: 'mrtr-kind' } }, { caps: { elicitation: {} } });
    const ir = first.message?.result;
    assert.equal(ir?.resultType, 'input_required', first.text);
    const state = ir.requestState;
    const c = await session(gw);
    refused(await resumeSaga(c, state, [{ stepId: 'user_details', result: confAnswer('kind') }]), 'Invalid sagaToken: token is a mrtr token, not a saga one', 'requestState as sagaToken');

    const s = await confSaga(c, 'saga-kind');
    const wrong = await srpc(
      gw.url,
      'tools/call',
      { name: 'conf:test_elicitation', arguments: { message: 'saga-kind' }, inputResponses: { user_details: confAnswer('kind') }, requestState: s.sagaToken },
      { caps: { elicitation: {} } },
    );
    assert.equal(wrong.message?.error?.code, -32602, wrong.text);
    assert.equal(wrong.message.error.message, 'Invalid requestState: token is a saga token, not a mrtr one', wrong.text);
    assert.equal(confCalls('test_elicitation', 'message', 'mrtr-kind').length, 1);
    assert.equal(confCalls('test_elicitation', 'message', 'saga-kind').length, 1);
    assert.equal(confAnswers('kind@example.org').length, 0);

    // Both complete the way they were meant to.
    const done = await srpc(
      gw.url,
      'tools/call',
      { name: 'conf:test_elicitation', arguments: { message: 'mrtr-kind' }, inputResponses: { user_details: confAnswer('kind') }, requestState: state },
      { caps: { elicitation: {} } },
    );
    assert.deepEqual(done.message?.result, { ...confResult('kind'), resultType: 'complete' }, done.text);
    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, [{ stepId: 'user_details', result: confAnswer('sagakind') }]), 'saga'), confResult('sagakind'));
  }),
);

test(
  'an oversized token (over 64 KiB) → -32602 "token is N bytes, over the limit of 65536", unread; 65536 bytes is read (and fails its signature)',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = await confSaga(c, 'oversized');
    const steps = [{ stepId: 'user_details', result: confAnswer('big') }];
    const [prefix, payload, sig] = s.sagaToken.split('.');
    const pad = (n) => `${prefix}.${payload}${'A'.repeat(n - s.sagaToken.length)}.${sig}`;
    for (const n of [65537, 70000, 1024 * 1024]) {
      const big = pad(n);
      assert.equal(big.length, n);
      refused(await resumeSaga(c, big, steps), `Invalid sagaToken: token is ${n} bytes, over the limit of 65536`, `${n} bytes`);
    }
    refused(await resumeSaga(c, pad(65536), steps), SIGNATURE_REFUSAL, '65536 bytes');
    assert.equal(confCalls('test_elicitation', 'message', 'oversized').length, 1);
    assert.equal(confAnswers('big@example.org').length, 0);
    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, steps), 'genuine'), confResult('big'));
  }),
);

test(
  'completedSteps missing the step the token waits for → -32602 "Invalid params: completedSteps has no result or error for step X"; nothing runs and the token stays usable',
  withDiagnostics(async () => {
    const c = await session(gw);
    const { s1, s2 } = await deployRounds(c, 'missing', '1.0.0', 'production');
    const target = { stepId: 'target', result: pick('production') };
    const safety = { stepId: 'safety', result: says('SAFE') };
    refused(await resumeSaga(c, s2.sagaToken, [target]), 'Invalid params: completedSteps has no result or error for step safety', 'round 2 without safety');
    refused(await resumeSaga(c, s2.sagaToken, []), 'Invalid params: completedSteps has no result or error for step target', 'no steps at all');
    refused(await resumeSaga(c, s2.sagaToken, [target, { stepId: 'Safety', result: says('SAFE') }]), 'Invalid params: completedSteps has no result or error for step safety', 'a step of another id');
    assert.equal(acts('missing').length, 0);
    // (Round 1's token is used up already; the refusal of a used token comes after the steps check.)
    refused(await resumeSaga(c, s1.sagaToken, []), 'Invalid params: completedSteps has no result or error for step target', 'round 1 token without target');

    const s = await confSaga(c, 'missing-step');
    refused(await resumeSaga(c, s.sagaToken, []), 'Invalid params: completedSteps has no result or error for step user_details', 'conf without its step');
    assert.equal(confCalls('test_elicitation', 'message', 'missing-step').length, 1);
    assert.equal(tapConf.seen.filter((b) => isResponse(b) && b.error && JSON.stringify(b).includes('missing-step')).length, 0);

    assert.deepEqual(final(await resumeSaga(c, s2.sagaToken, [target, safety]), 'complete'), deployed('missing', '1.0.0', 'production', 'SAFE'));
    assert.deepEqual(final(await resumeSaga(c, s.sagaToken, [{ stepId: 'user_details', result: confAnswer('missing') }]), 'conf complete'), confResult('missing'));
    assert.equal(acts('missing').length, 1);
  }),
);

test(
  'completedSteps must carry every step so far: a round-2 resume without round 1\'s step → -32602 naming it, and nothing runs',
  withDiagnostics(async () => {
    const c = await session(gw);
    const { s2 } = await deployRounds(c, 'earlier', '1.0.0', 'staging');
    const target = { stepId: 'target', result: pick('staging') };
    const safety = { stepId: 'safety', result: says('SAFE') };
    const m = await resumeSaga(c, s2.sagaToken, [safety]);
    const detail = `acts so far: ${acts('earlier').length}; token steps: ${JSON.stringify(claimsOf(s2.sagaToken).s.steps)}`;
    refused(m, 'Invalid params: completedSteps has no result or error for step target', `round 2 without round 1's step (${detail})`);
    assert.equal(acts('earlier').length, 0, 'deployed without every step');
    assert.deepEqual(final(await resumeSaga(c, s2.sagaToken, [target, safety]), 'complete'), deployed('earlier', '1.0.0', 'staging', 'SAFE'));
  }),
);

test(
  'completedSteps malformed (not an array; a step with both result and error, or neither; no stepId; a non-object result) and a missing sagaToken → -32602; nothing runs and the token stays usable',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = await confSaga(c, 'malformed');
    const token = s.sagaToken;
    const good = { stepId: 'user_details', result: confAnswer('shaped') };
    const cases = [
      ['completedSteps an object', { sagaToken: token, completedSteps: { user_details: good.result } }, 'Invalid params: completedSteps must be an array'],
      ['completedSteps a string', { sagaToken: token, completedSteps: 'user_details' }, 'Invalid params: completedSteps must be an array'],
      ['completedSteps absent', { sagaToken: token }, 'Invalid params: completedSteps must be an array'],
      ['a step with both result and error', { sagaToken: token, completedSteps: [{ ...good, error: { code: -1, message: 'no' } }] }, 'Invalid params: completed step user_details needs exactly one of result and error'],
      ['a step with neither', { sagaToken: token, completedSteps: [{ stepId: 'user_details' }] }, 'Invalid params: completed step user_details needs exactly one of result and error'],
      ['a step without stepId', { sagaToken: token, completedSteps: [{ result: good.result }] }, 'Invalid params: every completed step needs a stepId string'],
      ['a numeric stepId', { sagaToken: token, completedSteps: [{ stepId: 7, result: good.result }] }, 'Invalid params: every completed step needs a stepId string'],
      ['a string result', { sagaToken: token, completedSteps: [{ stepId: 'user_details', result: 'yes' }] }, 'Invalid params: completed step user_details: result or error must be an object'],
      ['a string error', { sagaToken: token, completedSteps: [{ stepId: 'user_details', error: 'no' }] }, 'Invalid params: completed step user_details: result or error must be an object'],
      ['a valid step after a bad one', { sagaToken: token, completedSteps: [{ stepId: 'x', result: 1 }, good] }, 'Invalid params: completed step x: result or error must be an object'],
      ['sagaToken absent', { completedSteps: [good] }, 'Invalid params: sagaToken must be the string of the last suspended result'],
      ['sagaToken a number', { sagaToken: 42, completedSteps: [good] }, 'Invalid params: sagaToken must be the string of the last suspended result'],
    ];
    for (const [what, params, message] of cases) refused(await c.request('tools/resumeSaga', params), message, what);
    refused(await c.request('tools/resumeSaga', { sagaToken: 'not-a-token', completedSteps: [good] }), 'Invalid sagaToken: not a token issued by mcpgw', 'not a token');
    assert.equal(confCalls('test_elicitation', 'message', 'malformed').length, 1);
    assert.equal(confAnswers('shaped@example.org').length, 0);
    assert.deepEqual(final(await resumeSaga(c, token, [good]), 'well-formed'), confResult('shaped'));
  }),
);

test(
  'a step completed with `error`: the upstream\'s request gets exactly that JSON-RPC error and its tool result says so; deploy refuses without acting',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = suspended(await callSaga(c, 'errs:ask', { question: 'Deploy now?', key: 'go' }), 'talker ask');
    assert.deepEqual(s.steps, [{ type: 'elicitation', stepId: 'go', params: { message: 'Deploy now?', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } }]);
    const error = { code: -32042, message: 'User rejected the elicitation', data: { reason: 'not now' } };
    const done = final(await resumeSaga(c, s.sagaToken, [{ stepId: 'go', error }]), 'resume with error');
    assert.deepEqual(done, { content: [{ type: 'text', text: `ask failed: error ${JSON.stringify(error)}` }], isError: true });
    // What the upstream received: a JSON-RPC error response to its elicitation request.
    const asked = saw('errs').filter(isResponse);
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.match(String(asked[0].id), /^talker-ask-\d+$/);
    assert.equal(asked[0].result, undefined);
    assert.deepEqual(asked[0].error, error);

    // Composite: the error of `target` ends deploy, nothing deployed.
    const d = suspended(await callSaga(c, 'deploy', { service: 'refused', version: '1' }), 'deploy');
    const r = final(await resumeSaga(c, d.sagaToken, [{ stepId: 'target', error: { code: -1, message: 'the user closed the dialog' } }]), 'deploy with error');
    assert.deepEqual(r, { content: [{ type: 'text', text: 'Not deployed: no deployment target (the client could not ask: the user closed the dialog).' }], isError: true });
    assert.equal(acts('refused').length, 0);

    // Proxied conformance server: its tool result carries the error's message.
    const cs = await confSaga(c, 'error-step');
    const ce = final(await resumeSaga(c, cs.sagaToken, [{ stepId: 'user_details', error: { code: -32600, message: 'elicitation unsupported here' } }]), 'conf with error');
    assert.deepEqual(ce, { content: [{ type: 'text', text: 'elicitation/create failed: elicitation unsupported here' }], isError: true });
    assert.deepEqual(confAnswers('elicitation unsupported here').map((b) => b.error), [{ code: -32600, message: 'elicitation unsupported here' }]);
  }),
);

// ---------------------------------------------------------------------------
// stateless (2026-07-28)

test(
  'stateless 2026-07-28 requests (envelope and headers, no client capabilities): callSaga/resumeSaga run the deploy saga and a proxied one',
  withDiagnostics(async () => {
    const sreq = async (method, params, what) => {
      const r = await srpc(gw.url, method, params, { caps: {}, name: 'saga-stateless' });
      assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${r.text.slice(0, 2000)}`);
      assert.equal(r.message?.id, r.request.id, `${what}: ${r.text.slice(0, 2000)}`);
      return r.message;
    };
    const args = { service: 'edge', version: '7.0.0' };
    const s1 = suspended(await sreq('tools/callSaga', { name: 'deploy', arguments: args }, 'callSaga'), 'stateless round 1', { stateless: true });
    assert.deepEqual(s1.steps, [targetStep('edge', '7.0.0')]);
    checkToken(s1.sagaToken, { tool: 'deploy', args, steps: ['target'] });
    const target = { stepId: 'target', result: pick('staging') };
    const s2 = suspended(await sreq('tools/resumeSaga', { sagaToken: s1.sagaToken, completedSteps: [target] }, 'resume 1'), 'stateless round 2', { stateless: true });
    assert.deepEqual(s2.steps, [safetyStep('edge', '7.0.0', 'staging')]);
    assert.equal(acts('edge').length, 0);
    const safety = { stepId: 'safety', result: says('SAFE to go.') };
    const done = final(await sreq('tools/resumeSaga', { sagaToken: s2.sagaToken, completedSteps: [target, safety] }, 'resume 2'), 'stateless round 3');
    assert.deepEqual(done, { ...deployed('edge', '7.0.0', 'staging', 'SAFE to go.'), resultType: 'complete' });
    assert.equal(acts('edge').length, 1);
    refused(await sreq('tools/resumeSaga', { sagaToken: s2.sagaToken, completedSteps: [target, safety] }, 'replay'), 'Invalid sagaToken: it was already resumed', 'stateless replay');

    // A proxied legacy upstream, asking mid-call, for a client without the elicitation capability.
    const ps = suspended(await sreq('tools/callSaga', { name: 'stateless:ask', arguments: { question: 'Stateless?', key: 'sk' } }, 'talker callSaga'), 'talker', { stateless: true });
    assert.deepEqual(ps.steps.map((st) => [st.type, st.stepId, st.params.message]), [['elicitation', 'sk', 'Stateless?']]);
    const answer = { action: 'accept', content: { answer: 'yes' } };
    const pd = final(await sreq('tools/resumeSaga', { sagaToken: ps.sagaToken, completedSteps: [{ stepId: 'sk', result: answer }] }, 'talker resume'), 'talker done');
    assert.deepEqual(pd, { content: [{ type: 'text', text: `answered: ${JSON.stringify(answer)}` }], resultType: 'complete' });
    assert.equal(talkerCalls('stateless', 'ask').length, 1);
    assert.deepEqual(saw('stateless').filter(isResponse).map((m) => m.result), [answer]);

    // A tool without input: the CallToolResult at once.
    const now = final(await sreq('tools/callSaga', { name: 'toolbox:echo', arguments: { text: 'stateless at once' } }, 'echo'), 'echo');
    assert.deepEqual(now, { content: [{ type: 'text', text: 'stateless at once' }], resultType: 'complete' });
  }),
);

test(
  'a saga started in a session resumes in a stateless request and vice versa (same principal, same gateway)',
  withDiagnostics(async () => {
    const c = await session(gw);
    const s = await confSaga(c, 'cross-era');
    const r = await srpc(gw.url, 'tools/resumeSaga', { sagaToken: s.sagaToken, completedSteps: [{ stepId: 'user_details', result: confAnswer('crosser') }] }, { caps: {} });
    assert.deepEqual(final(r.message, 'stateless resume of a session saga'), { ...confResult('crosser'), resultType: 'complete' });

    const st = await srpc(gw.url, 'tools/callSaga', { name: 'conf:test_elicitation', arguments: { message: 'cross-era-2' } }, { caps: {} });
    const ss = suspended(st.message, 'stateless callSaga', { stateless: true });
    assert.deepEqual(ss.steps, [confStep('cross-era-2')]);
    assert.deepEqual(final(await resumeSaga(c, ss.sagaToken, [{ stepId: 'user_details', result: confAnswer('crosser2') }]), 'session resume of a stateless saga'), confResult('crosser2'));
    assert.equal(confCalls('test_elicitation', 'message', 'cross-era').length, 1);
    assert.equal(confCalls('test_elicitation', 'message', 'cross-era-2').length, 1);
  }),
);
