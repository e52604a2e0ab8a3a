// MCP 2026-07-28 (stateless) on the gateway's HTTP endpoint, with raw fetch:
// which POST is stateless, the envelope and header checks in the revision's
// order with their HTTP statuses (400 -32020 / -32602 / -32022, 404 -32601),
// error ids echoing the request's, batches refused, removed methods gone,
// server/discover (versions, capabilities, configured + welcome
// instructions, serverInfo in _meta), resultType on every result and
// ttlMs/cacheScope on lists and reads ("private" under auth), handler
// errors in-band, the per-request log level, progress as SSE events on the
// POST, subscriptions/listen (acknowledgement, subscriptionId tagging, the
// filter honoured, a real list change and resource update, the stream kept
// open, upstream unsubscribed on close), stateful sessions working beside
// it on the same endpoint, and hostile input refused before anything runs.
//
// The upstream is talker-fixture.mjs over stdio (it logs every message it
// receives to a file the tests poll), plus a toolbox with a welcome tool.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SUPPORTED_VERSIONS,
  TOOLBOX,
  connectHttp,
  httpGet,
  openGetStream,
  pollUntil,
  rawHttp,
  requireBinaries,
  rpc,
  startGateway,
  tempDir,
  textOf,
  toolboxStdio,
  withDiagnostics,
  readJsonLines,
} from './harness.mjs';
import { META_SERVER, META_SUB, MODERN, headerValue, notificationsOf, openPost, srpc, statelessRequest } from './stateless.mjs';

const TALKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'talker-fixture.mjs');
const CONFIGURED = 'Configured instructions for stateless clients.';
const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  experimental: { 'mcpgw/sagas': { methods: ['tools/callSaga', 'tools/resumeSaga'], stepTypes: ['elicitation', 'sampling', 'roots'] } },
};

let gw; // talker (fx) + toolbox alpha with a welcome tool; no auth
let authGw; // bearer auth
let talkerLog; // every message gw's talker received, one JSON per line

/** The main gateway's configuration, its talker logging to `log`. */
function mainConfig(log) {
  return {
    instructions: CONFIGURED,
    welcome: { strategy: 'first' },
    // A closed stream is noticed at the next write: write often.
    listen: { heartbeat_ms: 200 },
    servers: [
      { name: 'fx', transport: 'stdio', command: process.execPath, args: [TALKER, log, '--name', 'fx'], timeout_ms: 20000 },
      { name: 'alpha', transport: 'stdio', command: TOOLBOX, args: ['--name', 'alpha', '--welcome-tool', 'hello'] },
    ],
  };
}

before(async () => {
  requireBinaries();
  const dir = tempDir('mcpgw-stateless-');
  talkerLog = path.join(dir, 'talker.jsonl');
  gw = await startGateway(mainConfig(talkerLog), { dir });
  authGw = await startGateway(
    { auth: { bearer_tokens: [{ token: 's3cret', name: 'ci' }] }, servers: [toolboxStdio()] },
    { label: 'mcpgw-auth' },
  );
});

/** Every message a talker upstream has received so far. */
function talkerSaw(log = talkerLog) {
  return readLog(log);
}

const readLog = readJsonLines;

/** Asserts an envelope-stage refusal: HTTP `status`, JSON body, the request's id, `code`. */
function assertRefused(r, status, code, what) {
  const detail = `${what}: HTTP ${r.status} ${r.contentType} ${r.text}`;
  assert.equal(r.status, status, detail);
  assert.match(r.contentType, /^application\/json/, detail);
  assert.ok(r.message, `${detail}: no JSON-RPC response`);
  assert.equal(r.message.jsonrpc, '2.0', detail);
  assert.deepEqual(r.message.id, r.request.id, `${detail}: the error does not echo the request id`);
  assert.equal(r.message.result, undefined, detail);
  assert.equal(r.message.error?.code, code, detail);
  assert.equal(typeof r.message.error.message, 'string', detail);
  assert.equal(r.headers.get('mcp-session-id'), null, `${detail}: a stateless answer carries Mcp-Session-Id`);
}

/** Asserts a 200 answer with a result; returns the result. */
function assertResult(r, what) {
  const detail = `${what}: HTTP ${r.status} ${r.text.slice(0, 2000)}`;
  assert.equal(r.status, 200, detail);
  assert.ok(r.message, `${detail}: no response`);
  assert.deepEqual(r.message.id, r.request.id, detail);
  assert.equal(r.message.error, undefined, detail);
  assert.equal(r.headers.get('mcp-session-id'), null, `${detail}: a stateless answer carries Mcp-Session-Id`);
  return r.message.result;
}

// ---------------------------------------------------------------------------
// which POST is stateless, and the checks in order

test(
  'a body claiming 2026-07-28 without the MCP-Protocol-Version header → 400 -32020, before any other check',
  withDiagnostics(async () => {
    const noHeader = { 'mcp-protocol-version': null };
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 101, headers: noHeader }), 400, -32020, 'discover, no header');
    assertRefused(await srpc(gw.url, 'tools/list', {}, { id: 'req-α', headers: noHeader }), 400, -32020, 'tools/list, no header, string id');
    // Even a request that would fail every later check gets the header error first.
    assertRefused(
      await srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text: 'x' } }, { id: 103, headers: { ...noHeader, 'mcp-method': null, 'mcp-name': null }, meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } }),
      400,
      -32020,
      'tools/call, no header, no Mcp-Method, no clientCapabilities',
    );
  }),
);

test(
  '_meta missing, or lacking protocolVersion or clientCapabilities → 400 -32602; clientInfo is optional',
  withDiagnostics(async () => {
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 201, meta: null }), 400, -32602, 'no _meta');
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 202, raw: { jsonrpc: '2.0', id: 202, method: 'server/discover' } }), 400, -32602, 'no params at all');
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 203, meta: { 'io.modelcontextprotocol/protocolVersion': undefined } }), 400, -32602, 'no protocolVersion');
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 204, meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } }), 400, -32602, 'no clientCapabilities');
    // Missing keys are reported before the version mismatch.
    assertRefused(
      await srpc(gw.url, 'server/discover', {}, { id: 205, meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0', 'io.modelcontextprotocol/clientCapabilities': undefined } }),
      400,
      -32602,
      'no clientCapabilities and a mismatched version',
    );
    const r = await srpc(gw.url, 'server/discover', {}, { id: 206, meta: { 'io.modelcontextprotocol/clientInfo': undefined } });
    assert.ok(assertResult(r, 'no clientInfo').supportedVersions.includes(MODERN));
  }),
);

test(
  'the header and _meta disagreeing on the version → 400 -32020, checked before whether the version is supported',
  withDiagnostics(async () => {
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 301, meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } }), 400, -32020, 'header 2026-07-28, _meta v999.0.0');
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 302, version: 'v999.0.0' }), 400, -32020, 'header v999.0.0, _meta 2026-07-28');
    // A stateful revision in the header does not make a request without a
    // session stateful when its body claims 2026-07-28: the two disagree.
    assertRefused(await srpc(gw.url, 'tools/list', {}, { id: 303, version: '2025-11-25' }), 400, -32020, 'header 2025-11-25, _meta 2026-07-28, no session');
  }),
);

test(
  'an unsupported version (header and _meta agreeing) → 400 -32022 with data {supported, requested}',
  withDiagnostics(async () => {
    for (const [id, v] of [
      [401, '2099-01-01'],
      [402, 'v999.0.0'],
    ]) {
      const r = await srpc(gw.url, 'server/discover', {}, { id, version: v, meta: { 'io.modelcontextprotocol/protocolVersion': v } });
      assertRefused(r, 400, -32022, `version ${v}`);
      const data = r.message.error.data;
      assert.equal(data?.requested, v, JSON.stringify(r.message));
      assert.ok(Array.isArray(data.supported), JSON.stringify(r.message));
      assert.deepEqual([...data.supported].sort(), [...SUPPORTED_VERSIONS].sort(), JSON.stringify(data));
      assert.deepEqual(Object.keys(data).sort(), ['requested', 'supported']);
    }
  }),
);

test(
  'Mcp-Method missing or different from the body → 400 -32020; header names are case-insensitive, values are not',
  withDiagnostics(async () => {
    assertRefused(await srpc(gw.url, 'tools/list', {}, { id: 501, headers: { 'mcp-method': null } }), 400, -32020, 'no Mcp-Method');
    assertRefused(await srpc(gw.url, 'tools/list', {}, { id: 502, headers: { 'mcp-method': 'prompts/list' } }), 400, -32020, 'Mcp-Method prompts/list');
    assertRefused(await srpc(gw.url, 'tools/list', {}, { id: 503, headers: { 'mcp-method': 'TOOLS/LIST' } }), 400, -32020, 'Mcp-Method TOOLS/LIST');
    assertRefused(await srpc(gw.url, 'server/discover', {}, { id: 504, headers: { 'mcp-method': '' } }), 400, -32020, 'empty Mcp-Method');
    // Header names in any case (node:http sends them as written).
    for (const names of [
      ['MCP-PROTOCOL-VERSION', 'MCP-METHOD'],
      ['mcp-protocol-version', 'mcp-method'],
    ]) {
      const { body } = statelessRequest('tools/list', {}, { id: 505 });
      const r = await rawHttp(gw.url, {
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', [names[0]]: MODERN, [names[1]]: 'tools/list' },
        body: JSON.stringify(body),
      });
      assert.equal(r.status, 200, `${names}: ${r.body}`);
      const m = JSON.parse(r.body);
      assert.equal(m.id, 505);
      assert.ok(Array.isArray(m.result?.tools), r.body);
    }
  }),
);

test(
  'Mcp-Name (tools/call, prompts/get: params.name; resources/read: params.uri) missing or different → 400 -32020; spaces trimmed, =?base64?...?= decoded',
  withDiagnostics(async () => {
    const call = (id, headers) => srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text: `name-${id}` } }, { id, headers });
    assertRefused(await call(601, { 'mcp-name': null }), 400, -32020, 'tools/call without Mcp-Name');
    assertRefused(await call(602, { 'mcp-name': 'fx:other' }), 400, -32020, 'tools/call, Mcp-Name fx:other');
    assertRefused(await call(603, { 'mcp-name': 'FX:ECHO' }), 400, -32020, 'tools/call, Mcp-Name in another case');
    assertRefused(await call(604, { 'mcp-name': '=?base64?!!notbase64!!?=' }), 400, -32020, 'tools/call, Mcp-Name bad base64');
    assertRefused(await call(605, { 'mcp-name': `=?base64?${Buffer.from('fx:other').toString('base64')}?=` }), 400, -32020, 'tools/call, base64 of another name');
    // None of the refused calls reached the upstream.
    assert.deepEqual(talkerSaw().filter((m) => m.method === 'tools/call' && /^name-60[1-5]$/.test(m.params?.arguments?.text)), []);

    for (const [id, value] of [
      [611, ' \tfx:echo \t'],
      [612, `=?base64?${Buffer.from('fx:echo').toString('base64')}?=`],
      [613, `  =?base64?${Buffer.from('fx:echo').toString('base64')}?=  `],
    ]) {
      const r = await call(id, { 'mcp-name': value });
      assert.deepEqual(assertResult(r, `Mcp-Name ${JSON.stringify(value)}`), { content: [{ type: 'text', text: `name-${id}` }], resultType: 'complete' });
    }

    const prompt = (id, headers) => srpc(gw.url, 'prompts/get', { name: 'fx:p0', arguments: { who: 'Ann' } }, { id, headers });
    assertRefused(await prompt(621, { 'mcp-name': null }), 400, -32020, 'prompts/get without Mcp-Name');
    assertRefused(await prompt(622, { 'mcp-name': 'fx:p1' }), 400, -32020, 'prompts/get, Mcp-Name fx:p1');
    assert.equal(assertResult(await prompt(623), 'prompts/get').messages[0].content.text, 'prompt p0 for Ann');

    const read = (id, uri, headers) => srpc(gw.url, 'resources/read', { uri }, { id, headers });
    assertRefused(await read(631, 'fx+fx://item/0', { 'mcp-name': null }), 400, -32020, 'resources/read without Mcp-Name');
    assertRefused(await read(632, 'fx+fx://item/0', { 'mcp-name': 'fx+fx://item/1' }), 400, -32020, 'resources/read, Mcp-Name of another URI');
    // The name of the tool is not the URI: resources/read compares the uri.
    assertRefused(await read(633, 'fx+fx://item/0', { 'mcp-name': 'fx:echo' }), 400, -32020, 'resources/read, Mcp-Name a tool name');
    // A URI that is not plain ASCII travels base64-encoded (UTF-8).
    const uri = 'fx+fx://item/é-✓';
    assert.match(headerValue(uri), /^=\?base64\?.*\?=$/);
    const r = assertResult(await read(634, uri), 'resources/read of a non-ASCII URI');
    assert.deepEqual(r.contents, [{ uri, mimeType: 'text/plain', text: 'content of fx://item/é-✓' }]);
    assertRefused(await read(635, uri, { 'mcp-name': `=?base64?${Buffer.from('fx+fx://item/e-✓').toString('base64')}?=` }), 400, -32020, 'resources/read, base64 of another URI');
  }),
);

test(
  'JSON-RPC batches are refused with 400 on the stateless path',
  withDiagnostics(async () => {
    const a = statelessRequest('tools/list', {}, { id: 701 });
    const b = statelessRequest('prompts/list', {}, { id: 702 });
    for (const headers of [a.headers, { ...a.headers, 'mcp-protocol-version': undefined }]) {
      const h = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined));
      const r = await rpc(gw.url, [a.body, b.body], { headers: h });
      assert.equal(r.status, 400, `batch with headers ${JSON.stringify(h)}: ${r.text}`);
      assert.equal(r.json?.error?.code, -32600, r.text);
      assert.equal(r.headers.get('mcp-session-id'), null);
    }
  }),
);

test(
  'initialize, ping, logging/setLevel, resources/subscribe, resources/unsubscribe and unknown methods → HTTP 404 -32601',
  withDiagnostics(async () => {
    const probes = [
      ['initialize', { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'x', version: '1' } }],
      ['ping', {}],
      ['logging/setLevel', { level: 'info' }],
      ['resources/subscribe', { uri: 'fx+fx://item/0' }],
      ['resources/unsubscribe', { uri: 'fx+fx://item/0' }],
      ['tools/nonexistent', {}],
      ['roots/list', {}],
    ];
    let id = 800;
    for (const [method, params] of probes) {
      assertRefused(await srpc(gw.url, method, params, { id: ++id }), 404, -32601, method);
    }
    // String ids are echoed verbatim too.
    assertRefused(await srpc(gw.url, 'ping', {}, { id: 'ping-ß' }), 404, -32601, 'ping with a string id');
    // No subscription was made upstream by the refused resources/subscribe.
    assert.equal(talkerSaw().filter((m) => m.method === 'resources/subscribe').length, 0);
  }),
);

test(
  'a stateless notification is accepted with 202 and no body',
  withDiagnostics(async () => {
    const { headers } = statelessRequest('notifications/cancelled', {});
    const r = await rpc(gw.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }, { headers });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.text, '');
  }),
);

// ---------------------------------------------------------------------------
// server/discover, resultType, caching hints

test(
  'server/discover: supportedVersions, capabilities, configured + welcome instructions, serverInfo in _meta, resultType, ttlMs 0, cacheScope public',
  withDiagnostics(async () => {
    const r = await srpc(gw.url, 'server/discover', {}, { id: 'discover-1' });
    assert.match(r.contentType, /^application\/json/);
    const result = assertResult(r, 'server/discover');
    const info = result._meta?.[META_SERVER];
    assert.equal(typeof info?.version, 'string', JSON.stringify(result));
    assert.deepEqual(result, {
      supportedVersions: result.supportedVersions,
      capabilities: SERVER_CAPABILITIES,
      instructions: `${CONFIGURED}\n\nwelcome from alpha`,
      _meta: { [META_SERVER]: { name: 'mcpgw', title: 'mcpgw MCP gateway', version: info.version } },
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'public',
    });
    assert.equal(result.supportedVersions[0], MODERN, 'the stateless revision is not listed first');
    assert.deepEqual([...result.supportedVersions].sort(), [...SUPPORTED_VERSIONS].sort());
    assert.equal(result.serverInfo, undefined, 'serverInfo belongs in _meta since spec PR #3002');
    // A legacy initialize gives the same instructions.
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, `${CONFIGURED}\n\nwelcome from alpha`);
    await c.close();
  }),
);

test(
  'every stateless result carries resultType; lists and reads carry ttlMs 0 and cacheScope public, other results no cache fields',
  withDiagnostics(async () => {
    const list = assertResult(await srpc(gw.url, 'tools/list', {}), 'tools/list');
    assert.equal(list.resultType, 'complete');
    assert.equal(list.ttlMs, 0);
    assert.equal(list.cacheScope, 'public');
    const names = list.tools.map((t) => t.name);
    for (const n of ['fx:echo', 'fx:grow', 'fx:log', 'fx:progress', 'fx:ask', 'alpha:echo', 'alpha:hello']) assert.ok(names.includes(n), `${n} missing from ${names}`);

    const expectCache = { resultType: 'complete', ttlMs: 0, cacheScope: 'public' };
    const prompts = assertResult(await srpc(gw.url, 'prompts/list', {}), 'prompts/list');
    assert.deepEqual({ resultType: prompts.resultType, ttlMs: prompts.ttlMs, cacheScope: prompts.cacheScope }, expectCache);
    assert.ok(prompts.prompts.some((p) => p.name === 'fx:p0'), JSON.stringify(prompts));
    const resources = assertResult(await srpc(gw.url, 'resources/list', {}), 'resources/list');
    assert.deepEqual({ resultType: resources.resultType, ttlMs: resources.ttlMs, cacheScope: resources.cacheScope }, expectCache);
    assert.ok(resources.resources.some((x) => x.uri === 'fx+fx://item/0'), JSON.stringify(resources));
    const templates = assertResult(await srpc(gw.url, 'resources/templates/list', {}), 'resources/templates/list');
    assert.deepEqual(templates, { resourceTemplates: [{ uriTemplate: 'fx+fx://tmpl/{id}', name: 'template' }], ...expectCache });
    const read = assertResult(await srpc(gw.url, 'resources/read', { uri: 'fx+fx://item/1' }), 'resources/read');
    assert.deepEqual(read, { contents: [{ uri: 'fx+fx://item/1', mimeType: 'text/plain', text: 'content of fx://item/1' }], ...expectCache });

    // Not cacheable: resultType only.
    const call = assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text: 'typed' } }), 'tools/call');
    assert.deepEqual(call, { content: [{ type: 'text', text: 'typed' }], resultType: 'complete' });
    const got = assertResult(await srpc(gw.url, 'prompts/get', { name: 'fx:p0', arguments: { who: 'Bo' } }), 'prompts/get');
    assert.deepEqual(got, { description: 'got p0', messages: [{ role: 'user', content: { type: 'text', text: 'prompt p0 for Bo' } }], resultType: 'complete' });
    const comp = assertResult(
      await srpc(gw.url, 'completion/complete', { ref: { type: 'ref/prompt', name: 'fx:p0' }, argument: { name: 'who', value: 'A' } }),
      'completion/complete',
    );
    assert.deepEqual(comp, { completion: { values: ['A-completed'] }, resultType: 'complete' });
    // An isError tool result is still a complete result.
    const welcome = assertResult(await srpc(gw.url, 'tools/call', { name: 'alpha:fail', arguments: { message: 'it broke' } }), 'alpha:fail');
    assert.deepEqual(welcome, { content: [{ type: 'text', text: 'it broke' }], isError: true, resultType: 'complete' });
  }),
);

test(
  'with auth: lists, reads and discover are cacheScope private; the bearer token is still required',
  withDiagnostics(async () => {
    const auth = { authorization: 'Bearer s3cret' };
    const list = assertResult(await srpc(authGw.url, 'tools/list', {}, { headers: auth }), 'tools/list under auth');
    assert.deepEqual([list.resultType, list.ttlMs, list.cacheScope], ['complete', 0, 'private']);
    assert.ok(list.tools.some((t) => t.name === 'toolbox:echo'));
    const d = assertResult(await srpc(authGw.url, 'server/discover', {}, { headers: auth }), 'discover under auth');
    assert.deepEqual([d.resultType, d.ttlMs, d.cacheScope], ['complete', 0, 'private']);
    const call = assertResult(await srpc(authGw.url, 'tools/call', { name: 'toolbox:echo', arguments: { text: 'authed' } }, { headers: auth }), 'tools/call under auth');
    assert.deepEqual(call, { content: [{ type: 'text', text: 'authed' }], resultType: 'complete' });
    for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
      const r = await srpc(authGw.url, 'tools/list', {}, { headers });
      assert.equal(r.status, 401, `no/wrong token: ${r.status} ${r.text}`);
      assert.match(r.headers.get('www-authenticate') || '', /^Bearer\b/);
    }
  }),
);

test(
  'errors a handler decides are in-band: HTTP 200 with the JSON-RPC error and the request id',
  withDiagnostics(async () => {
    const inBand = async (method, params, code, what, id) => {
      const r = await srpc(gw.url, method, params, { id });
      assert.equal(r.status, 200, `${what}: ${r.text}`);
      assert.deepEqual(r.message?.id, r.request.id, `${what}: ${r.text}`);
      assert.equal(r.message.error?.code, code, `${what}: ${r.text}`);
      return r.message.error;
    };
    await inBand('tools/call', { name: 'fx:nope', arguments: {} }, -32602, 'unknown tool', 901);
    await inBand('tools/call', { name: 'fx:echo', arguments: 'not an object' }, -32602, 'arguments not an object', 'call-902');
    const notFound = await inBand('resources/read', { uri: 'nope://nothing' }, -32602, 'unknown resource (2026: -32602, not -32002)', 903);
    assert.deepEqual(notFound.data, { uri: 'nope://nothing' });
    await inBand('prompts/get', { name: 'fx:nope' }, -32602, 'unknown prompt', 904);
    await inBand('tools/list', { cursor: 'not-a-cursor' }, -32602, 'bad cursor', 905);
    await inBand('subscriptions/listen', {}, -32602, 'listen without notifications', 906);
    await inBand('subscriptions/listen', { notifications: 'tools' }, -32602, 'listen with notifications not an object', 907);
  }),
);

// ---------------------------------------------------------------------------
// log level, progress

test(
  'log messages reach a stateless client only when its _meta asks for them, at or above the level it names',
  withDiagnostics(async () => {
    const logs = async (logLevel) => {
      const r = await srpc(gw.url, 'tools/call', { name: 'fx:log', arguments: {} }, { logLevel });
      assert.deepEqual(assertResult(r, `log level ${logLevel}`), { content: [{ type: 'text', text: 'logged' }], resultType: 'complete' });
      const notes = notificationsOf(r);
      for (const n of notes) assert.equal(n.method, 'notifications/message', JSON.stringify(n));
      return notes.map((n) => n.params);
    };
    const msg = (level) => ({ level, logger: 'fx', data: `${level} message` });
    assert.deepEqual(await logs(undefined), [], 'no logLevel: no log messages');
    assert.deepEqual(await logs('warning'), ['warning', 'error', 'critical'].map(msg));
    assert.deepEqual(await logs('debug'), ['debug', 'info', 'notice', 'warning', 'error', 'critical'].map(msg));
    assert.deepEqual(await logs('critical'), [msg('critical')]);
    assert.deepEqual(await logs('emergency'), []);
    // A level that is not one is an envelope error.
    assertRefused(await srpc(gw.url, 'tools/call', { name: 'fx:log', arguments: {} }, { id: 1001, logLevel: 'verbose' }), 400, -32602, 'logLevel verbose');
    assertRefused(await srpc(gw.url, 'tools/call', { name: 'fx:log', arguments: {} }, { id: 1002, logLevel: 3 }), 400, -32602, 'logLevel 3');
  }),
);

test(
  'progress (a _meta.progressToken) arrives as SSE events on the POST answer, before the result, under the client\'s token',
  withDiagnostics(async () => {
    for (const token of ['tok-7', 42]) {
      const r = await srpc(gw.url, 'tools/call', { name: 'fx:progress', arguments: { steps: 3 } }, { progressToken: token });
      assert.match(r.contentType, /^text\/event-stream/, `token ${token}: ${r.contentType} ${r.text}`);
      const result = assertResult(r, `progress ${token}`);
      assert.deepEqual(result, { content: [{ type: 'text', text: 'progressed 3' }], resultType: 'complete' });
      const notes = notificationsOf(r);
      assert.deepEqual(
        notes.map((n) => [n.method, n.params]),
        [1, 2, 3].map((i) => ['notifications/progress', { progressToken: token, progress: i, total: 3, message: `step ${i}` }]),
      );
      assert.equal(r.messages.at(-1), r.message, 'the result is not the last event');
    }
    // Without a token: no progress reaches the client.
    const plain = await srpc(gw.url, 'tools/call', { name: 'fx:progress', arguments: { steps: 3 } });
    assertResult(plain, 'progress without a token');
    assert.deepEqual(notificationsOf(plain), []);
  }),
);

// ---------------------------------------------------------------------------
// subscriptions/listen

/** Opens a subscriptions/listen stream; resolves once the answer started. */
async function listen(url, id, filter, opts = {}) {
  const req = statelessRequest('subscriptions/listen', { notifications: filter }, { id, ...opts });
  return openPost(url, req.body, req.headers, { id, timeoutMs: 60000 });
}

const ofMethod = (method) => (m) => m.method === method;

test(
  'subscriptions/listen: acknowledgement first with the honoured filter, notifications tagged with the listen id, only the kinds asked for, open until the client closes it',
  withDiagnostics(async () => {
    // A gateway of its own, so that whatever closing the streams does to it
    // (ef12c32 aborted with a double free) stays within this test.
    const dir = tempDir('mcpgw-listen-');
    const log = path.join(dir, 'talker.jsonl');
    // The exact sequence of notifications is the point here: a server still
    // connecting would add a list_changed of its own (start-up is tested in
    // startup*.test.mjs).
    const gw = await startGateway(mainConfig(log), { dir, label: 'mcpgw-listen', waitUpstreams: true });
    const talkerSaw = () => readLog(log);
    const a = await listen(gw.url, 'listen-A', { toolsListChanged: true, resourceSubscriptions: ['fx+fx://item/0', 'nope://unknown'] });
    const b = await listen(gw.url, 77, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    for (const s of [a, b]) {
      assert.equal(s.status, 200, s.text);
      assert.match(s.contentType, /^text\/event-stream/);
      assert.equal(s.headers.get('mcp-session-id'), null);
    }
    const ackA = await a.waitFor(() => true);
    assert.deepEqual(ackA, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['fx+fx://item/0'] }, _meta: { [META_SUB]: 'listen-A' } },
    });
    const ackB = await b.waitFor(() => true);
    assert.deepEqual(ackB, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, _meta: { [META_SUB]: 77 } },
    });
    // The resource subscription reached the upstream.
    await pollUntil(() => talkerSaw().some((m) => m.method === 'resources/subscribe' && m.params?.uri === 'fx://item/0'), { what: 'resources/subscribe fx://item/0 upstream' });

    // A stateful session beside them, with its GET stream.
    const legacy = await connectHttp(gw.url);
    const get = await openGetStream(legacy);
    assert.equal(get.status, 200);

    // A resource update: only the subscribed URI, only to A.
    assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:touch', arguments: { uri: 'fx://item/1' } }), 'touch item/1');
    assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:touch', arguments: { uri: 'fx://item/0' } }), 'touch item/0');
    const updated = await a.waitFor(ofMethod('notifications/resources/updated'));
    assert.deepEqual(updated, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'fx+fx://item/0', _meta: { [META_SUB]: 'listen-A' } } });

    // A real list change upstream.
    assert.equal(textOf(assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:grow', arguments: {} }), 'grow')), 'grown to 1');
    const toolsA = await a.waitFor(ofMethod('notifications/tools/list_changed'));
    assert.deepEqual(toolsA, { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [META_SUB]: 'listen-A' } } });
    for (const what of ['tools', 'resources', 'prompts']) {
      const n = await b.waitFor(ofMethod(`notifications/${what}/list_changed`));
      assert.deepEqual(n, { jsonrpc: '2.0', method: `notifications/${what}/list_changed`, params: { _meta: { [META_SUB]: 77 } } });
    }
    const legacyNote = await get.waitFor(ofMethod('notifications/tools/list_changed'));
    assert.equal(legacyNote.params?._meta?.[META_SUB], undefined, 'a stateful session got a subscriptionId');

    // A second change: once A has its second tools/list_changed, everything
    // of the first change has been delivered to it too.
    assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:grow', arguments: {} }), 'grow again');
    await pollUntil(() => a.messages.filter(ofMethod('notifications/tools/list_changed')).length === 2, { what: 'A: the second tools/list_changed' });
    assert.deepEqual(
      a.messages.map((m) => m.method),
      ['notifications/subscriptions/acknowledged', 'notifications/resources/updated', 'notifications/tools/list_changed', 'notifications/tools/list_changed'],
      'A got notifications it did not ask for',
    );
    await pollUntil(() => b.messages.filter(ofMethod('notifications/prompts/list_changed')).length === 2, { what: 'B: the second prompts/list_changed' });
    assert.equal(b.messages.filter(ofMethod('notifications/resources/updated')).length, 0, 'B got a resource update it did not subscribe to');
    for (const m of [...a.messages, ...b.messages]) {
      assert.equal(m.id, undefined, `a request or response on a listen stream: ${JSON.stringify(m)}`);
      assert.ok(!['notifications/progress', 'notifications/message'].includes(m.method), JSON.stringify(m));
    }
    // The lists show the change.
    const names = assertResult(await srpc(gw.url, 'tools/list', {}), 'tools/list after grow').tools.map((t) => t.name);
    assert.ok(names.includes('fx:grown0') && names.includes('fx:grown1'), names.join(','));

    // The streams stay open until the client closes them.
    assert.equal(a.ended, false);
    assert.equal(b.ended, false);
    assert.equal(a.final, undefined);
    const died = gw.proc.exited.then((info) => {
      throw new Error(`the gateway died (${JSON.stringify(info)}) once the listen streams were closed\n${gw.proc.diagnostics()}`);
    });
    died.catch(() => {});
    a.close();
    b.close();
    get.close();
    // The upstream subscription ends with the last listener of that URI.
    await Promise.race([
      died,
      pollUntil(() => talkerSaw().some((m) => m.method === 'resources/unsubscribe' && m.params?.uri === 'fx://item/0'), { what: 'resources/unsubscribe fx://item/0 upstream after the listen stream closed' }),
    ]);
    await legacy.close();
    // The gateway is fine after the streams closed.
    const after = await srpc(gw.url, 'tools/list', {}).catch((e) => ({ status: String(e), text: '' }));
    assert.equal(after.status, 200, `tools/list after the listen streams closed: ${after.status} ${after.text}`);
    await gw.proc.stop({ signal: 'SIGTERM' });
    assert.deepEqual(gw.proc.exitInfo, { code: 0, signal: null }, `the gateway did not survive closing listen streams\n${gw.proc.diagnostics()}`);
  }),
);

// ---------------------------------------------------------------------------
// side by side with sessions

test(
  'stateful sessions keep working on the same endpoint, interleaved with stateless requests, which open no session',
  withDiagnostics(async () => {
    const sessionsGauge = async () => {
      const m = await httpGet(`${gw.base}/metrics`);
      const line = m.text.split('\n').find((l) => l.startsWith('mcpgw_sessions'));
      return Number(line?.split(' ').at(-1));
    };
    const c = await connectHttp(gw.url, {});
    const before = await sessionsGauge();
    for (let i = 0; i < 5; i++) {
      const s = assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text: `stateless ${i}` } }), `stateless ${i}`);
      assert.deepEqual(s, { content: [{ type: 'text', text: `stateless ${i}` }], resultType: 'complete' });
      const legacy = await c.callTool('fx:echo', { text: `session ${i}` });
      // Stateful results are as the upstream gave them: no resultType.
      assert.deepEqual(legacy, { content: [{ type: 'text', text: `session ${i}` }] });
    }
    assert.equal(await sessionsGauge(), before, 'stateless requests changed the number of open sessions');
    assert.deepEqual(await c.result('ping'), {});
    // The session's own log level (default info) still applies to its calls.
    await c.result('logging/setLevel', { level: 'error' });
    const res = await c.send('tools/call', { name: 'fx:log', arguments: {} });
    assert.deepEqual(
      res.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.level),
      ['error', 'critical'],
    );
    // A session's request never gets stateless treatment: no resultType.
    const list = await c.result('tools/list', {});
    assert.equal(list.resultType, undefined);
    assert.equal(list.ttlMs, undefined);
    // server/discover is not a method of the stateful revisions.
    const d = await c.request('server/discover', {});
    assert.equal(d.error?.code, -32601, JSON.stringify(d));
    assert.equal(await c.close(), 200);
    // Stateless requests are unaffected by the session's end.
    assertResult(await srpc(gw.url, 'tools/list', {}), 'tools/list after the session ended');
  }),
);

// ---------------------------------------------------------------------------
// hostile input

test(
  'hostile envelopes: a non-object _meta, wrongly typed keys → 400 -32602 with the request id',
  withDiagnostics(async () => {
    let id = 1100;
    for (const meta of ['x', [], 5, null, true]) {
      const { body, headers } = statelessRequest('tools/list', {}, { id: ++id });
      body.params._meta = meta;
      const r = await openPost(gw.url, body, headers, { id });
      await r.done;
      assert.equal(r.status, 400, `_meta ${JSON.stringify(meta)}: ${r.text}`);
      assert.equal(r.json?.id, id, r.text);
      assert.equal(r.json?.error?.code, -32602, r.text);
    }
    for (const [what, meta] of [
      ['protocolVersion a number', { 'io.modelcontextprotocol/protocolVersion': 20260728 }],
      ['clientCapabilities a string', { 'io.modelcontextprotocol/clientCapabilities': 'all' }],
      ['clientCapabilities an array', { 'io.modelcontextprotocol/clientCapabilities': ['sampling'] }],
      ['clientCapabilities null', { 'io.modelcontextprotocol/clientCapabilities': null }],
    ]) {
      const r = await srpc(gw.url, 'tools/list', {}, { id: ++id, meta });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.message?.id, id, r.text);
      // A numeric version claim is not 2026-07-28: a mismatch or an invalid envelope, never served.
      assert.ok([-32602, -32020].includes(r.message?.error?.code), `${what}: ${r.text}`);
    }
  }),
);

test(
  'hostile continuation input: garbage, huge or wrongly typed requestState and inputResponses → -32602, nothing executed',
  withDiagnostics(async () => {
    const probes = [
      ['requestState garbage', { requestState: 'garbage' }, /Invalid requestState/],
      ['requestState empty', { requestState: '' }, /Invalid requestState/],
      ['requestState mcpgw-shaped', { requestState: 'mcpgw1.e30.AAAA' }, /Invalid requestState/],
      ['requestState 100 KB', { requestState: `mcpgw1.${'A'.repeat(100 * 1024)}.sig` }, /Invalid requestState/],
      ['requestState a number', { requestState: 42 }, /requestState/],
      ['requestState an object', { requestState: { park: 'x' } }, /requestState/],
      ['inputResponses an array', { inputResponses: [{ action: 'accept' }] }, /inputResponses/],
      ['inputResponses a string', { inputResponses: 'yes' }, /inputResponses/],
      ['inputResponses null', { inputResponses: null }, /inputResponses/],
      ['an inputResponses entry a number', { inputResponses: { user_name: 12345 } }, /inputResponses/],
      ['an inputResponses entry null', { inputResponses: { k: null } }, /inputResponses/],
      ['an inputResponses entry a string', { inputResponses: { k: 'accept' } }, /inputResponses/],
    ];
    let i = 0;
    for (const [what, extra, message] of probes) {
      const text = `hostile-${++i}`;
      const r = await srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text }, ...extra }, { id: `h-${i}` });
      assert.equal(r.status, 200, `${what}: ${r.text.slice(0, 500)}`);
      assert.equal(r.message?.id, `h-${i}`, `${what}: ${r.text.slice(0, 500)}`);
      assert.equal(r.message.error?.code, -32602, `${what}: ${r.text.slice(0, 500)}`);
      assert.match(r.message.error.message, message, what);
      assert.ok(r.text.length < 4096, `${what}: the error echoes the input (${r.text.length} bytes)`);
    }
    // None of them reached the upstream.
    assert.deepEqual(talkerSaw().filter((m) => m.method === 'tools/call' && /^hostile-/.test(m.params?.arguments?.text ?? '')), []);
    // The gateway is fine afterwards.
    assert.deepEqual(assertResult(await srpc(gw.url, 'tools/call', { name: 'fx:echo', arguments: { text: 'after' } }), 'after'), { content: [{ type: 'text', text: 'after' }], resultType: 'complete' });
  }),
);
