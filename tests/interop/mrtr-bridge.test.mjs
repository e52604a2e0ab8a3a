// Bridging a new client to old servers: a client of MCP 2026-07-28 (raw
// HTTP, no session) calls tools of stateful-era upstreams that ask their
// client something in the middle of the call (elicitation/create,
// sampling/createMessage, roots/list). The gateway suspends the call and
// answers `input_required` with the questions and a signed requestState;
// the client's retry (new id, same call, inputResponses + requestState)
// brings the answers to the waiting upstream and gets the final result.
//
// Upstreams: @modelcontextprotocol/server-everything (stdio), our
// conformance server (stateful, Streamable HTTP, behind a tap that shows
// what reaches it) and talker-fixture.mjs (stdio; logs what it receives).
// Covered: the three kinds of question, keys (derived, or the upstream's
// mcpgw/inputKey), several questions at once and several rounds, tampered
// and misapplied state refused with nothing executed, other secrets
// refused, key rotation, a retry on another gateway process replaying the
// call, a retry without state replaying it, a missing capability reaching
// the upstream as -32021, cancellation by closing the retry, and 5 clients
// x 10 concurrent bridged calls each answered by its own client.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  BUILD,
  EVERYTHING,
  REPO,
  pollUntil,
  requireBinaries,
  startGateway,
  startTap,
  startUpstreamHttp,
  tempDir,
  withDiagnostics,
  readJsonLines,
} from '../integration/harness.mjs';
import { notificationsOf, openPost, srpc, statelessRequest } from '../integration/stateless.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const TALKER = path.join(REPO, 'tests', 'integration', 'talker-fixture.mjs');
const OLD = 'old-secret-0123456789';
const NEW = 'new-secret-9876543210';

const everything = (name) => ({ name, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 });
const talker = (name, log) => ({ name, transport: 'stdio', command: process.execPath, args: [TALKER, log], timeout_ms: 60000 });

// Each test that suspends calls of a stdio upstream has an upstream of its
// own: a stdio upstream can route a question only while the calls in flight
// on it are one client's, so a call a failed test leaves suspended must not
// disturb the next test.
let gw; // the main gateway: secret OLD; server-everything x3, conf (via tap), talkers
let tap; // in front of gw's conformance server
let same; // another process with the same secret; conf via tap2, talkers
let tap2;
let other; // secret "other"
let rotated; // secrets [NEW, OLD]
let authGw; // bearer auth, secret OLD
const logs = {};

/** Waits until server-everything `name` has made (and failed) its start-up roots/list, which comes outside any call. */
function rootsSettled(g, name) {
  return g.proc.waitForLine('stderr', new RegExp(`upstream ${name} stderr: Failed to request roots`), 20000);
}

before(async () => {
  requireBinaries();
  const dir = tempDir('mcpgw-mrtr-');
  const talkers = ['keys', 'rounds', 'captalk', 'waiter', 'waiter2', 'waiter3', 'waiter4'];
  for (const n of talkers) logs[n] = path.join(dir, `${n}.jsonl`);
  for (const n of ['rounds', 'waiter3', 'waiter4']) logs[`same:${n}`] = path.join(dir, `same-${n}.jsonl`);
  const conf = await startUpstreamHttp(CONFORMANCE, ['--watch-interval-ms', '0'], { label: 'conformance-http' });
  tap = await startTap(conf.url);
  tap2 = await startTap(conf.url);
  const listen = { heartbeat_ms: 200 };
  [gw, same, other, rotated, authGw] = await Promise.all([
    startGateway(
      {
        listen,
        sagas: { secret: OLD },
        welcome: { strategy: 'none' },
        servers: [
          everything('everything'),
          everything('sampler'),
          everything('roots'),
          { name: 'conf', transport: 'http', url: tap.url, timeout_ms: 60000 },
          ...talkers.map((n) => talker(n, logs[n])),
        ],
      },
      { label: 'mcpgw-main' },
    ),
    startGateway(
      {
        listen,
        sagas: { secret: [OLD] },
        welcome: { strategy: 'none' },
        servers: [
          { name: 'conf', transport: 'http', url: tap2.url, timeout_ms: 60000 },
          ...['rounds', 'waiter3', 'waiter4'].map((n) => talker(n, logs[`same:${n}`])),
        ],
      },
      { label: 'mcpgw-same-secret' },
    ),
    startGateway({ listen, sagas: { secret: 'other-secret' }, welcome: { strategy: 'none' }, servers: [{ name: 'conf', transport: 'http', url: conf.url }] }, { label: 'mcpgw-other-secret' }),
    startGateway({ listen, sagas: { secret: [NEW, OLD] }, welcome: { strategy: 'none' }, servers: [{ name: 'conf', transport: 'http', url: conf.url }] }, { label: 'mcpgw-rotated' }),
    startGateway(
      {
        listen,
        sagas: { secret: OLD },
        welcome: { strategy: 'none' },
        auth: { bearer_tokens: [{ token: 'tok-ci', name: 'ci' }, { token: 'tok-second', name: 'second' }] },
        servers: [{ name: 'conf', transport: 'http', url: conf.url }],
      },
      { label: 'mcpgw-auth' },
    ),
  ]);
  await Promise.all(['everything', 'sampler', 'roots'].map((n) => rootsSettled(gw, n)));
});

// ---------------------------------------------------------------------------
// helpers

const ELICIT = { elicitation: {} };

/** A stateless tools/call: `extra` goes into params (inputResponses, requestState). */
function call(g, name, args, { caps = ELICIT, extra = {}, id, client, headers, logLevel, progressToken } = {}) {
  return srpc(g.url, 'tools/call', { name, arguments: args, ...extra }, { caps, id, name: client, headers, logLevel, progressToken, timeoutMs: 60000 });
}

/** The input_required result of `r`, checked for shape. */
function inputRequired(r, what) {
  const detail = `${what}: HTTP ${r.status} ${r.text.slice(0, 3000)}`;
  assert.equal(r.status, 200, detail);
  assert.deepEqual(r.message?.id, r.request.id, detail);
  assert.equal(r.message.error, undefined, detail);
  const res = r.message.result;
  assert.equal(res.resultType, 'input_required', detail);
  assert.deepEqual(Object.keys(res).sort(), ['inputRequests', 'requestState', 'resultType'], `${detail}: input_required carries other fields (no cache fields allowed)`);
  assert.equal(typeof res.requestState, 'string', detail);
  assert.match(res.requestState, /^mcpgw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, detail);
  assert.ok(res.inputRequests && typeof res.inputRequests === 'object' && Object.keys(res.inputRequests).length > 0, detail);
  for (const [k, q] of Object.entries(res.inputRequests)) {
    assert.deepEqual(Object.keys(q).sort(), ['method', 'params'], `${detail}: ${k}`);
    assert.equal(q.params?._meta?.['mcpgw/inputKey'], undefined, `${detail}: the gateway's own _meta leaked`);
    assert.equal(q.params?._meta?.['mcpgw/inputBatch'], undefined, `${detail}: the gateway's own _meta leaked`);
  }
  return res;
}

/** The complete result of `r`. */
function complete(r, what) {
  const detail = `${what}: HTTP ${r.status} ${r.text.slice(0, 3000)}`;
  assert.equal(r.status, 200, detail);
  assert.deepEqual(r.message?.id, r.request.id, detail);
  assert.equal(r.message.error, undefined, detail);
  assert.equal(r.message.result.resultType, 'complete', detail);
  return r.message.result;
}

/** The JSON-RPC error of `r` (in-band, HTTP 200). */
function rpcError(r, code, what) {
  const detail = `${what}: HTTP ${r.status} ${r.text.slice(0, 3000)}`;
  assert.equal(r.status, 200, detail);
  assert.deepEqual(r.message?.id, r.request.id, detail);
  assert.equal(r.message.result, undefined, detail);
  assert.equal(r.message.error?.code, code, detail);
  return r.message.error;
}

/** The single input request of `ir`: [key, {method, params}]. */
function onlyRequest(ir) {
  const entries = Object.entries(ir.inputRequests);
  assert.equal(entries.length, 1, JSON.stringify(ir.inputRequests));
  return entries[0];
}

/** The gateway's key for a question without mcpgw/inputKey: method prefix + 12 hex of SHA-256(method + params JSON without _meta). */
function derivedKey(method, params) {
  let text = method;
  if (params !== undefined) {
    const { _meta, ...rest } = params;
    text += JSON.stringify(rest);
  }
  return `${method.split('/')[0]}-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
}

const text = (result) => (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/** Every message `name` (a talker) has received. */
function saw(name) {
  return readJsonLines(logs[name]);
}

const isResponse = (b) => b && typeof b === 'object' && !Array.isArray(b) && !('method' in b) && ('result' in b || 'error' in b);
const confCalls = (t, message) => t.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'test_elicitation' && b.params?.arguments?.message === message);

const CONF_SCHEMA = {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
};
const confAnswer = (username, email) => ({ action: 'accept', content: { username, email } });
const confText = (a) => `User response: action=accept, content=${JSON.stringify(a.content)}`;

/**
 * First round of conf:test_elicitation {message} on `g`: returns {ir, key,
 * q}. The key is the one the conformance server gives in
 * `_meta["mcpgw/inputKey"]` (which the client does not see), or else the
 * derived one.
 */
async function askConf(g, message, opts = {}) {
  const r = await call(g, 'conf:test_elicitation', { message }, opts);
  const ir = inputRequired(r, `conf:test_elicitation ${message}`);
  const [key, q] = onlyRequest(ir);
  assert.deepEqual(q, { method: 'elicitation/create', params: { message, requestedSchema: CONF_SCHEMA } });
  assert.ok(key === derivedKey(q.method, q.params) || !/^elicitation-[0-9a-f]{12}$/.test(key), `key ${key}: neither derived nor the upstream's own`);
  return { ir, key, q };
}

// ---------------------------------------------------------------------------
// the three kinds of question, server-everything (stdio)

test(
  'elicitation: server-everything asks mid-call → input_required with a derived key; the retry with the answer completes (accept, then decline)',
  withDiagnostics(async () => {
    const first = await call(gw, 'everything:trigger-elicitation-request', {}, { id: 'elicit-1' });
    const ir = inputRequired(first, 'first round');
    const [key, q] = onlyRequest(ir);
    assert.match(key, /^elicitation-[0-9a-f]{12}$/);
    assert.equal(key, derivedKey(q.method, q.params));
    assert.equal(q.method, 'elicitation/create');
    assert.equal(q.params.message, 'Please provide inputs for the following fields:');
    assert.equal(q.params.requestedSchema.type, 'object');
    assert.deepEqual(q.params.requestedSchema.required, ['name']);
    assert.equal(q.params.requestedSchema.properties.integer.default, 42);

    const answer = { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.org' } };
    const second = await call(gw, 'everything:trigger-elicitation-request', {}, { id: 'elicit-2', extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } });
    const done = complete(second, 'retry');
    assert.deepEqual(done.content.slice(0, 2), [
      { type: 'text', text: '✅ User provided the requested information!' },
      { type: 'text', text: 'User inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n- Email: ada@example.org' },
    ]);
    assert.deepEqual(JSON.parse(done.content[2].text.replace(/^\nRaw result: /, '')), answer);

    // The same question asked again gets the same key; a decline passes through.
    const again = inputRequired(await call(gw, 'everything:trigger-elicitation-request', {}), 'decline round');
    assert.deepEqual(Object.keys(again.inputRequests), [key]);
    assert.notEqual(again.requestState, ir.requestState);
    const declined = complete(await call(gw, 'everything:trigger-elicitation-request', {}, { extra: { inputResponses: { [key]: { action: 'decline' } }, requestState: again.requestState } }), 'decline');
    assert.equal(declined.content[0].text, '❌ User declined to provide the requested information.');
  }),
);

test(
  'sampling: server-everything asks for a completion mid-call; the client\'s CreateMessageResult reaches it',
  withDiagnostics(async () => {
    const args = { prompt: 'two plus two', maxTokens: 20 };
    const ir = inputRequired(await call(gw, 'sampler:trigger-sampling-request', args, { caps: { sampling: {} } }), 'sampling round 1');
    const [key, q] = onlyRequest(ir);
    assert.match(key, /^sampling-[0-9a-f]{12}$/);
    assert.equal(key, derivedKey(q.method, q.params));
    assert.deepEqual(q, {
      method: 'sampling/createMessage',
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: two plus two' } }],
        systemPrompt: 'You are a helpful test server.',
        maxTokens: 20,
        temperature: 0.7,
      },
    });
    const answer = { role: 'assistant', content: { type: 'text', text: 'four' }, model: 'test-model', stopReason: 'endTurn' };
    const done = complete(await call(gw, 'sampler:trigger-sampling-request', args, { caps: { sampling: {} }, extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } }), 'sampling retry');
    assert.match(done.content[0].text, /^LLM sampling result: \n/);
    assert.deepEqual(JSON.parse(done.content[0].text.replace(/^LLM sampling result: \n/, '')), answer);
  }),
);

test(
  'roots: server-everything asks roots/list mid-call; the roots reach it, and its log message about them reaches the client that asked for logs',
  withDiagnostics(async () => {
    const caps = { roots: {} };
    const ir = inputRequired(await call(gw, 'roots:get-roots-list', {}, { caps }), 'roots round 1');
    const [key, q] = onlyRequest(ir);
    assert.equal(q.method, 'roots/list');
    assert.deepEqual(q.params, {});
    // server-everything sends roots/list without params.
    assert.equal(key, derivedKey('roots/list', undefined));
    const roots = { roots: [{ uri: 'file:///work/project', name: 'project' }] };
    const r = await call(gw, 'roots:get-roots-list', {}, { caps, logLevel: 'info', extra: { inputResponses: { [key]: roots }, requestState: ir.requestState } });
    const done = complete(r, 'roots retry');
    assert.match(done.content[0].text, /^Current MCP Roots \(1 total\):\n\n1\. project\n {3}URI: file:\/\/\/work\/project\n/);
    assert.deepEqual(
      notificationsOf(r).filter((n) => n.method === 'notifications/message').map((n) => n.params.data),
      ['Roots updated: 1 root(s) received from client'],
    );
  }),
);

// ---------------------------------------------------------------------------
// keys, several questions, several rounds (talker)

test(
  'the upstream\'s mcpgw/inputKey names the question (and is not shown); two questions asked at once are handed out together',
  withDiagnostics(async () => {
    const ir = inputRequired(await call(gw, 'keys:ask', { question: 'Best number?', key: 'favourite' }), 'ask');
    assert.deepEqual(ir.inputRequests, {
      favourite: { method: 'elicitation/create', params: { message: 'Best number?', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } },
    });
    const done = complete(
      await call(gw, 'keys:ask', { question: 'Best number?', key: 'favourite' }, { extra: { inputResponses: { favourite: { action: 'accept', content: { answer: '42' } } }, requestState: ir.requestState } }),
      'ask retry',
    );
    assert.equal(text(done), 'answered: {"action":"accept","content":{"answer":"42"}}');

    const caps = { elicitation: {}, sampling: {} };
    const two = inputRequired(await call(gw, 'keys:ask_two', {}, { caps }), 'ask_two');
    assert.deepEqual(two.inputRequests, {
      first: { method: 'elicitation/create', params: { message: 'first question', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } },
      second: { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'second question' } }], maxTokens: 10 } },
    });
    const a = { action: 'accept', content: { answer: 'one' } };
    const b = { role: 'assistant', content: { type: 'text', text: 'two' }, model: 'm' };
    const both = complete(await call(gw, 'keys:ask_two', {}, { caps, extra: { inputResponses: { first: a, second: b }, requestState: two.requestState } }), 'ask_two retry');
    assert.equal(text(both), `first=${JSON.stringify(a)} second=${JSON.stringify(b)}`);
  }),
);

test(
  'several rounds: each answer can bring another input_required with a new requestState; the last retry completes',
  withDiagnostics(async () => {
    const r1 = inputRequired(await call(gw, 'rounds:ask_twice', {}), 'round 1');
    assert.deepEqual(Object.keys(r1.inputRequests), ['step1']);
    const step1 = { action: 'accept', content: { answer: 'Ada' } };
    const r2 = inputRequired(await call(gw, 'rounds:ask_twice', {}, { extra: { inputResponses: { step1 }, requestState: r1.requestState } }), 'round 2');
    assert.deepEqual(Object.keys(r2.inputRequests), ['step2']);
    assert.equal(r2.inputRequests.step2.params.message, 'step 2: your colour, Ada?');
    assert.notEqual(r2.requestState, r1.requestState);
    const step2 = { action: 'accept', content: { answer: 'blue' } };
    const done = complete(await call(gw, 'rounds:ask_twice', {}, { extra: { inputResponses: { step2 }, requestState: r2.requestState } }), 'round 3');
    assert.equal(text(done), `step1=${JSON.stringify(step1)} step2=${JSON.stringify(step2)}`);

    // Round 2's state carries round 1's answer: another process replays the
    // call with it and needs only step2 from the client.
    const r1b = inputRequired(await call(gw, 'rounds:ask_twice', {}), 'round 1 (b)');
    const r2b = inputRequired(await call(gw, 'rounds:ask_twice', {}, { extra: { inputResponses: { step1 }, requestState: r1b.requestState } }), 'round 2 (b)');
    const before = saw('same:rounds').filter((m) => m.method === 'tools/call' && m.params?.name === 'ask_twice').length;
    const replayed = complete(await call(same, 'rounds:ask_twice', {}, { extra: { inputResponses: { step2 }, requestState: r2b.requestState } }), 'round 3 on another process');
    assert.equal(text(replayed), `step1=${JSON.stringify(step1)} step2=${JSON.stringify(step2)}`);
    assert.equal(saw('same:rounds').filter((m) => m.method === 'tools/call' && m.params?.name === 'ask_twice').length, before + 1, 'the other process did not replay the call upstream');
    // Finish the call still suspended on the first process.
    complete(await call(gw, 'rounds:ask_twice', {}, { extra: { inputResponses: { step2 }, requestState: r2b.requestState } }), 'round 3 (b)');
  }),
);

// ---------------------------------------------------------------------------
// requestState integrity

test(
  'a tampered requestState (a byte flipped, "-TAMPERED" appended, truncated, claims rewritten) → -32602 "Invalid requestState", nothing reaches the upstream; the genuine one still completes',
  withDiagnostics(async () => {
    const { ir, key } = await askConf(gw, 'tamper-me');
    const otherToken = await askConf(gw, 'other-token');
    const answer = confAnswer('mallory', 'mallory@example.org');
    const state = ir.requestState;
    const [prefix, payload, sig] = state.split('.');
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const rewritten = Buffer.from(JSON.stringify({ ...claims, e: claims.e + 3600 })).toString('base64url');
    const variants = {
      'a payload byte flipped': `${prefix}.${flip(payload, payload.length >> 1)}.${sig}`,
      'a signature byte flipped': `${prefix}.${payload}.${flip(sig, 3)}`,
      '-TAMPERED appended': `${state}-TAMPERED`,
      'the last character dropped': state.slice(0, -1),
      'the expiry rewritten, old signature': `${prefix}.${rewritten}.${sig}`,
      'the signature of another token': `${prefix}.${payload}.${otherToken.ir.requestState.split('.')[2]}`,
    };
    const responsesBefore = tap.seen.filter(isResponse).length;
    for (const [what, bad] of Object.entries(variants)) {
      const err = rpcError(await call(gw, 'conf:test_elicitation', { message: 'tamper-me' }, { extra: { inputResponses: { [key]: answer }, requestState: bad } }), -32602, what);
      assert.match(err.message, /^Invalid requestState: /, what);
    }
    assert.equal(confCalls(tap, 'tamper-me').length, 1, 'a refused retry ran the call again upstream');
    assert.equal(tap.seen.filter(isResponse).length, responsesBefore, 'a refused retry answered the upstream');
    const done = complete(await call(gw, 'conf:test_elicitation', { message: 'tamper-me' }, { extra: { inputResponses: { [key]: answer }, requestState: state } }), 'the genuine retry');
    assert.equal(text(done), confText(answer));
    // Finish the other suspended call.
    complete(await call(gw, 'conf:test_elicitation', { message: 'other-token' }, { extra: { inputResponses: { [otherToken.key]: answer }, requestState: otherToken.ir.requestState } }), 'other-token');
  }),
);

test(
  'a requestState presented for other arguments, another tool or another method → -32602, nothing executed',
  withDiagnostics(async () => {
    const { ir, key } = await askConf(gw, 'mine');
    const answer = confAnswer('me', 'me@example.org');
    const extra = { inputResponses: { [key]: answer }, requestState: ir.requestState };
    let err = rpcError(await call(gw, 'conf:test_elicitation', { message: 'yours' }, { extra }), -32602, 'other arguments');
    assert.match(err.message, /^Invalid requestState: .*other arguments/, err.message);
    err = rpcError(await call(gw, 'conf:test_sampling', { prompt: 'mine' }, { caps: { sampling: {} }, extra }), -32602, 'another tool');
    assert.match(err.message, /^Invalid requestState: .*tools\/call conf:test_elicitation/, err.message);
    err = rpcError(await srpc(gw.url, 'prompts/get', { name: 'conf:test_simple_prompt', ...extra }, { caps: ELICIT }), -32602, 'prompts/get');
    assert.match(err.message, /^Invalid requestState: /, err.message);
    assert.equal(confCalls(tap, 'yours').length, 0);
    assert.equal(tap.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'test_sampling' && b.params?.arguments?.prompt === 'mine').length, 0);
    assert.equal(tap.seen.filter((b) => b?.method === 'prompts/get').length, 0);
    assert.equal(text(complete(await call(gw, 'conf:test_elicitation', { message: 'mine' }, { extra }), 'the right call')), confText(answer));
  }),
);

test(
  'a requestState issued to one principal is refused to another',
  withDiagnostics(async () => {
    const ci = { authorization: 'Bearer tok-ci' };
    const second = { authorization: 'Bearer tok-second' };
    const { ir, key } = await askConf(authGw, 'for-ci', { headers: ci });
    const answer = confAnswer('ci', 'ci@example.org');
    const extra = { inputResponses: { [key]: answer }, requestState: ir.requestState };
    const err = rpcError(await call(authGw, 'conf:test_elicitation', { message: 'for-ci' }, { headers: second, extra }), -32602, 'another principal');
    assert.match(err.message, /^Invalid requestState: .*another principal/, err.message);
    assert.equal(text(complete(await call(authGw, 'conf:test_elicitation', { message: 'for-ci' }, { headers: ci, extra }), 'the right principal')), confText(answer));
  }),
);

test(
  'sagas.secret: another secret refuses the state; a rotated keyring [new, old] accepts states signed with old, and old refuses states signed with new',
  withDiagnostics(async () => {
    const answer = confAnswer('rot', 'rot@example.org');
    const { ir, key } = await askConf(gw, 'signed-old');
    const extra = { inputResponses: { [key]: answer }, requestState: ir.requestState };
    const err = rpcError(await call(other, 'conf:test_elicitation', { message: 'signed-old' }, { extra }), -32602, 'another secret');
    assert.match(err.message, /^Invalid requestState: .*signature/, err.message);
    // The rotated process has not seen the call: it replays it with the answer.
    assert.equal(text(complete(await call(rotated, 'conf:test_elicitation', { message: 'signed-old' }, { extra }), 'rotated keyring, old state')), confText(answer));
    // And the original process still completes its own suspended call.
    assert.equal(text(complete(await call(gw, 'conf:test_elicitation', { message: 'signed-old' }, { extra }), 'old state at home')), confText(answer));

    const n = await askConf(rotated, 'signed-new');
    const extraNew = { inputResponses: { [n.key]: answer }, requestState: n.ir.requestState };
    const err2 = rpcError(await call(gw, 'conf:test_elicitation', { message: 'signed-new' }, { extra: extraNew }), -32602, 'old keyring, new state');
    assert.match(err2.message, /^Invalid requestState: .*signature/, err2.message);
    assert.equal(text(complete(await call(rotated, 'conf:test_elicitation', { message: 'signed-new' }, { extra: extraNew }), 'new state at home')), confText(answer));
  }),
);

test(
  'a retry landing on another gateway process with the same secret completes by replaying the call there, answered from inputResponses',
  withDiagnostics(async () => {
    const { ir, key } = await askConf(gw, 'roaming');
    const answer = confAnswer('roamer', 'roamer@example.org');
    const r = await call(same, 'conf:test_elicitation', { message: 'roaming' }, { extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } });
    assert.equal(text(complete(r, 'retry on the second process')), confText(answer));
    // The second process ran the call upstream itself and answered the
    // upstream's question from the retry, without asking the client again.
    assert.equal(confCalls(tap2, 'roaming').length, 1);
    const answered = tap2.seen.filter((b) => isResponse(b) && b.result?.content?.username === 'roamer');
    assert.equal(answered.length, 1, JSON.stringify(tap2.seen.filter(isResponse)));
    assert.deepEqual(answered[0].result, answer);
    // Finish the call suspended on the first process.
    complete(await call(gw, 'conf:test_elicitation', { message: 'roaming' }, { extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } }), 'home');
  }),
);

test(
  'a retry without requestState replays the call, answering its question from inputResponses by key; a wrong key gets the question again',
  withDiagnostics(async () => {
    const { ir, key } = await askConf(gw, 'stateless-replay');
    const answer = confAnswer('replayer', 'replayer@example.org');
    const wrong = inputRequired(await call(gw, 'conf:test_elicitation', { message: 'stateless-replay' }, { extra: { inputResponses: { 'elicitation-000000000000': answer } } }), 'wrong key');
    assert.deepEqual(Object.keys(wrong.inputRequests), [key]);
    const done = complete(await call(gw, 'conf:test_elicitation', { message: 'stateless-replay' }, { extra: { inputResponses: { [key]: answer } } }), 'replay');
    assert.equal(text(done), confText(answer));
    assert.equal(confCalls(tap, 'stateless-replay').length, 3);
    // Finish the suspended ones.
    complete(await call(gw, 'conf:test_elicitation', { message: 'stateless-replay' }, { extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } }), 'home');
    complete(await call(gw, 'conf:test_elicitation', { message: 'stateless-replay' }, { extra: { inputResponses: { [key]: answer }, requestState: wrong.requestState } }), 'wrong-key call');
  }),
);

// ---------------------------------------------------------------------------
// capabilities, cancellation, concurrency

test(
  'a client without the capability is never asked: the upstream gets -32021 {requiredCapabilities}, which reaches the client in the tool result',
  withDiagnostics(async () => {
    const before = tap.seen.filter(isResponse).length;
    const r = complete(await call(gw, 'conf:test_elicitation', { message: 'no-caps' }, { caps: {}, client: 'capless' }), 'no elicitation capability');
    // What the upstream got: the error, with the capability it needs.
    const sent = tap.seen.filter(isResponse).slice(before);
    assert.equal(sent.length, 1, JSON.stringify(sent));
    assert.equal(sent[0].error?.code, -32021, JSON.stringify(sent[0]));
    assert.equal(sent[0].error.message, 'mcpgw: the client (capless) did not declare the elicitation capability, so it cannot take elicitation/create');
    assert.deepEqual(sent[0].error.data, { requiredCapabilities: { elicitation: {} } });
    // What the client got: the upstream's tool result telling of it.
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(text(r), /^elicitation\/create failed: .*mcpgw: the client \(capless\) did not declare the elicitation capability, so it cannot take elicitation\/create/);

    const before2 = tap.seen.filter(isResponse).length;
    const s = complete(await call(gw, 'conf:test_sampling', { prompt: 'hello' }, { caps: { elicitation: {} }, client: 'no-sampling' }), 'no sampling capability');
    const sent2 = tap.seen.filter(isResponse).slice(before2);
    assert.equal(sent2.length, 1, JSON.stringify(sent2));
    assert.equal(sent2[0].error?.code, -32021, JSON.stringify(sent2[0]));
    assert.deepEqual(sent2[0].error.data, { requiredCapabilities: { sampling: {} } });
    assert.equal(s.isError, true);
    assert.match(text(s), /mcpgw: the client \(no-sampling\) did not declare the sampling capability, so it cannot take sampling\/createMessage/);
    const e = complete(await call(gw, 'everything:trigger-sampling-request', { prompt: 'p' }, { caps: { elicitation: {} } }), 'server-everything without sampling');
    assert.equal(e.isError, true, JSON.stringify(e));
    assert.match(text(e), /-32021/);
    const t = complete(await call(gw, 'captalk:ask', { question: 'q' }, { caps: { sampling: {} } }), 'talker without elicitation');
    assert.equal(t.isError, true);
    assert.match(text(t), /"code":-32021.*"data":\{"requiredCapabilities":\{"elicitation":\{\}\}\}/);
  }),
);

/**
 * Cancellation of a bridged call by its retry: the first round of
 * `<upstream>:ask_then_wait` on gw, then the retry with the answer sent to
 * `retryOn` (gw: the call is suspended there; the other process: it replays
 * the call) and its HTTP request aborted, once its answer streams (the
 * upstream reports progress after the answer) or before any byte of it.
 * Resolves once the upstream running the call saw notifications/cancelled
 * for it.
 */
async function abortRetry(upstream, retryOn, log, { streaming }) {
  const ir = inputRequired(await call(gw, `${upstream}:ask_then_wait`, {}, { progressToken: 'first' }), 'ask_then_wait');
  assert.deepEqual(Object.keys(ir.inputRequests), ['confirm']);
  const req = statelessRequest(
    'tools/call',
    { name: `${upstream}:ask_then_wait`, arguments: {}, inputResponses: { confirm: { action: 'accept', content: { answer: 'yes' } } }, requestState: ir.requestState },
    { caps: ELICIT, progressToken: streaming ? 'retry-token' : undefined },
  );
  const answered = () => saw(log).some((m) => isResponse(m) && m.result?.content?.answer === 'yes');
  let close;
  let progress;
  if (streaming) {
    const s = await openPost(retryOn.url, req.body, req.headers, { id: req.id });
    assert.match(s.contentType, /^text\/event-stream/, `the retry was answered at once: ${s.text.slice(0, 1500)}`);
    progress = await s.waitFor((m) => m.method === 'notifications/progress');
    close = () => s.close();
  } else {
    const ac = new AbortController();
    let settled;
    const pending = fetch(retryOn.url, { method: 'POST', headers: req.headers, body: JSON.stringify(req.body), signal: ac.signal }).then(
      async (r) => {
        settled = `HTTP ${r.status} ${await r.text()}`;
      },
      (e) => {
        settled = e;
      },
    );
    await pollUntil(() => answered() || typeof settled === 'string', { what: 'the answer to reach the upstream' });
    assert.equal(typeof settled === 'string' ? settled : undefined, undefined, 'the retry was answered before the upstream finished');
    close = async () => {
      ac.abort();
      await pending;
      assert.equal(settled?.name, 'AbortError');
    };
  }
  assert.ok(answered(), 'the answer did not reach the upstream');
  const upstreamCall = saw(log).filter((m) => m.method === 'tools/call' && m.params?.name === 'ask_then_wait').at(-1);
  await close();
  await pollUntil(
    () => saw(log).find((m) => m.method === 'notifications/cancelled' && JSON.stringify(m.params?.requestId) === JSON.stringify(upstreamCall.id)),
    { timeoutMs: 10000, what: `notifications/cancelled upstream for ${JSON.stringify(upstreamCall.id)}` },
  );
  // The progress the upstream reported after the answer went to the retry
  // under the retry's own token.
  if (streaming) assert.deepEqual(progress.params, { progressToken: 'retry-token', progress: 1, message: 'answer received' });
}

test(
  'closing the retry\'s stream while the upstream works on the answer cancels the suspended upstream call (notifications/cancelled)',
  withDiagnostics(async () => {
    await abortRetry('waiter', gw, 'waiter', { streaming: true });
    // The call is over: the next one on that upstream asks its own client.
    const next = inputRequired(await call(gw, 'waiter:ask', { question: 'still there?', key: 'k' }), 'next call');
    assert.deepEqual(Object.keys(next.inputRequests), ['k']);
  }),
);

test(
  'closing the stream of a retry replayed on another process cancels the replayed upstream call',
  withDiagnostics(async () => {
    await abortRetry('waiter3', same, 'same:waiter3', { streaming: true });
  }),
);

test(
  'aborting the retry before any byte of its answer cancels the suspended upstream call',
  withDiagnostics(async () => {
    await abortRetry('waiter2', gw, 'waiter2', { streaming: false });
  }),
);

test(
  'aborting a retry replayed on another process before any byte of its answer cancels the replayed upstream call',
  withDiagnostics(async () => {
    await abortRetry('waiter4', same, 'same:waiter4', { streaming: false });
  }),
);

test(
  '5 stateless clients x 10 concurrent bridged calls through one upstream: every question goes to the call that caused it, every answer to its call',
  withDiagnostics(async () => {
    const one = async (i, k) => {
      const message = `call-${i}-${k}`;
      const client = `client-${i}`;
      const first = await call(gw, 'conf:test_elicitation', { message }, { client });
      const ir = inputRequired(first, message);
      const [key, q] = onlyRequest(ir);
      assert.equal(q.params.message, message, `${client} got another call's question`);
      const answer = confAnswer(client, `${message}@example.org`);
      const done = complete(await call(gw, 'conf:test_elicitation', { message }, { client, extra: { inputResponses: { [key]: answer }, requestState: ir.requestState } }), message);
      assert.equal(text(done), confText(answer), message);
    };
    const all = [];
    for (let i = 0; i < 5; i++) for (let k = 0; k < 10; k++) all.push(one(i, k));
    await Promise.all(all);
  }),
);
