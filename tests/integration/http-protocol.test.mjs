// Streamable HTTP basics against the real gateway: initialize and version
// negotiation, session ids, notifications, ping, tools/list pass-through and
// tools/call across two upstreams (bank over stdio, toolbox over HTTP),
// compared with what the upstreams themselves answer.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BANK,
  SUPPORTED_VERSIONS,
  TOOLBOX,
  bankStdio,
  connectHttp,
  directStdio,
  httpGet,
  httpServer,
  requireBinaries,
  rpc,
  startGateway,
  startUpstreamHttp,
  textOf,
  toolByName,
  withDiagnostics,
} from './harness.mjs';

let gw; // {proc, url, base, port}
let bankRef; // StdioClient straight to a bank-server
let toolboxRef; // HttpClient straight to the toolbox upstream
let bankTools; // upstream tool lists, for comparison
let toolboxTools;

before(async () => {
  requireBinaries();
  const toolbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  gw = await startGateway({ servers: [bankStdio(), httpServer('toolbox', toolbox.url)] });
  bankRef = await directStdio(BANK);
  toolboxRef = await connectHttp(toolbox.url);
  bankTools = (await bankRef.listAllTools()).tools;
  toolboxTools = (await toolboxRef.listAllTools()).tools;
});

function initBody(protocolVersion, id = 1) {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } } };
}

test(
  'initialize negotiates 2025-06-18 and returns a 128-bit hex Mcp-Session-Id',
  withDiagnostics(async () => {
    const res = await rpc(gw.url, initBody('2025-06-18'));
    assert.equal(res.status, 200);
    assert.ok(res.message, `no initialize response: ${res.text}`);
    assert.equal(res.message.jsonrpc, '2.0');
    assert.equal(res.message.id, 1);
    assert.equal(res.message.error, undefined);
    const r = res.message.result;
    assert.equal(r.protocolVersion, '2025-06-18');
    assert.equal(typeof r.serverInfo?.name, 'string');
    assert.ok(r.serverInfo.name.length > 0);
    assert.equal(typeof r.serverInfo.version, 'string');
    assert.ok(r.capabilities && typeof r.capabilities.tools === 'object', `capabilities.tools missing: ${JSON.stringify(r.capabilities)}`);
    const sid = res.headers.get('mcp-session-id');
    assert.match(sid ?? '', /^[0-9a-fA-F]{32}$/, `Mcp-Session-Id is not 32 hex chars: ${sid}`);
  }),
);

test(
  'an unknown requested version gets a supported one; session ids differ between sessions',
  withDiagnostics(async () => {
    const a = await rpc(gw.url, initBody('1999-01-01', 7));
    assert.equal(a.status, 200);
    assert.equal(a.message?.error, undefined, JSON.stringify(a.message));
    const v = a.message.result.protocolVersion;
    assert.ok(SUPPORTED_VERSIONS.includes(v), `negotiated ${v}`);
    assert.notEqual(v, '1999-01-01');
    const b = await rpc(gw.url, initBody('2025-06-18', 8));
    const c = await rpc(gw.url, initBody('2025-03-26', 9));
    assert.equal(c.message.result.protocolVersion, '2025-03-26');
    const ids = [a, b, c].map((r) => r.headers.get('mcp-session-id'));
    for (const id of ids) assert.match(id ?? '', /^[0-9a-fA-F]{32}$/);
    assert.equal(new Set(ids).size, 3, `session ids not distinct: ${ids}`);
    // The session negotiated from an unknown version is usable with that version.
    const ping = await rpc(gw.url, { jsonrpc: '2.0', id: 10, method: 'ping' }, { session: ids[0], protocolVersion: v });
    assert.equal(ping.status, 200);
    assert.deepEqual(ping.message.result, {});
  }),
);

test(
  'notifications/initialized is accepted with 202 and no body; ping returns {}',
  withDiagnostics(async () => {
    const init = await rpc(gw.url, initBody('2025-06-18', 20));
    const session = init.headers.get('mcp-session-id');
    const n = await rpc(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session, protocolVersion: '2025-06-18' });
    assert.equal(n.status, 202);
    assert.equal(n.text, '');
    const ping = await rpc(gw.url, { jsonrpc: '2.0', id: 21, method: 'ping' }, { session, protocolVersion: '2025-06-18' });
    assert.equal(ping.status, 200);
    assert.equal(ping.message.id, 21);
    assert.deepEqual(ping.message.result, {});
  }),
);

test(
  'tools/list exposes both upstreams prefixed, with schemas, titles, annotations and _meta unchanged',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    const names = tools.map((t) => t.name).sort();
    const expected = [...bankTools.map((t) => `bank:${t.name}`), ...toolboxTools.map((t) => `toolbox:${t.name}`)].sort();
    assert.deepEqual(names, expected);

    const pmt = toolByName(tools, 'bank:prepare_money_transfer');
    const pmtRef = toolByName(bankTools, 'prepare_money_transfer');
    assert.ok(pmt, 'bank:prepare_money_transfer missing');
    assert.equal(pmt.description, `[Proxied from bank] ${pmtRef.description}`);
    assert.deepEqual(pmt.inputSchema, pmtRef.inputSchema);
    for (const p of ['fromAccountId', 'toAccountId', 'amount', 'memo']) assert.ok(pmt.inputSchema.properties[p], `inputSchema lacks ${p}`);
    assert.equal(pmt.inputSchema.type, 'object');

    // Every field of every tool passes through, apart from name and
    // description, and the optional mcpgw/hops an object outputSchema
    // declares for chains (README, "nextTool chains").
    const withoutHops = (schema) => {
      if (!schema?.properties?.['mcpgw/hops']) return schema;
      const { 'mcpgw/hops': hops, ...properties } = schema.properties;
      assert.equal(hops.type, 'array');
      return { ...schema, properties };
    };
    for (const [server, refs] of [['toolbox', toolboxTools], ['bank', bankTools]]) {
      for (const ref of refs) {
        const t = toolByName(tools, `${server}:${ref.name}`);
        assert.equal(t.description, `[Proxied from ${server}] ${ref.description}`);
        for (const k of ['title', 'inputSchema', 'annotations', '_meta']) assert.deepEqual(t[k], ref[k], `${server}:${ref.name} ${k}`);
        assert.deepEqual(withoutHops(t.outputSchema), ref.outputSchema, `${server}:${ref.name} outputSchema`);
      }
    }

    const meta = toolByName(tools, 'toolbox:meta');
    assert.equal(meta.title, 'Meta');
    assert.deepEqual(meta.annotations, { readOnlyHint: true, openWorldHint: false });
    assert.deepEqual(meta._meta, { 'example/owner': 'toolbox' });

    const welcome = toolByName(tools, 'bank:welcome_customer');
    assert.equal(welcome._meta?.welcomeTool, true);

    const add = toolByName(tools, 'toolbox:add');
    assert.deepEqual(withoutHops(add.outputSchema), { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] });
    await c.close();
  }),
);

test(
  'tools/call on both upstreams returns the upstream results unchanged',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);

    // bank over stdio
    const accounts = await c.callTool('bank:list_accounts');
    assert.deepEqual(accounts, await bankRef.callTool('list_accounts'));
    assert.deepEqual(
      accounts.structuredContent.accounts.map((a) => a.accountId),
      ['acc_checking_001', 'acc_savings_001', 'acc_credit_001'],
    );
    const bal = await c.callTool('bank:get_account_balance', { accountId: 'acc_savings_001' });
    assert.deepEqual(bal, await bankRef.callTool('get_account_balance', { accountId: 'acc_savings_001' }));
    assert.deepEqual(bal.structuredContent, { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' });
    const missing = await c.callTool('bank:get_account_balance', { accountId: 'acc_nope' });
    assert.equal(missing.isError, true);
    assert.equal(textOf(missing), 'Account not found: acc_nope');

    // toolbox over HTTP
    const echo = await c.callTool('toolbox:echo', { text: 'héllo, gateway ✓' });
    assert.deepEqual(echo, { content: [{ type: 'text', text: 'héllo, gateway ✓' }] });
    const add = await c.callTool('toolbox:add', { a: 2, b: 3 });
    assert.deepEqual(add.structuredContent, { sum: 5 });
    assert.equal(textOf(add), '5');
    assert.deepEqual(add, await toolboxRef.callTool('add', { a: 2, b: 3 }));
    const meta = await c.callTool('toolbox:meta');
    const metaRef = await toolboxRef.callTool('meta');
    assert.deepEqual(meta._meta, { 'example/trace': 't-1' });
    assert.deepEqual(meta.structuredContent, { k: 1 });
    assert.deepEqual(meta, metaRef);
    const fail = await c.callTool('toolbox:fail', { message: 'it broke' });
    assert.equal(fail.isError, true);
    assert.equal(textOf(fail), 'it broke');
    assert.deepEqual(fail, await toolboxRef.callTool('fail', { message: 'it broke' }));
    await c.close();
  }),
);

test(
  'a 1 MB tool result from the HTTP upstream arrives intact',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('toolbox:big', { bytes: 1_000_000 });
    assert.equal(r.isError, undefined);
    const text = textOf(r);
    assert.equal(text.length, 1_000_000);
    assert.match(text, /^x+$/);
    await c.close();
  }),
);

test(
  '/healthz, /readyz (all upstreams up) and /metrics',
  withDiagnostics(async () => {
    const h = await httpGet(`${gw.base}/healthz`);
    assert.equal(h.status, 200);
    const r = await httpGet(`${gw.base}/readyz`);
    assert.equal(r.status, 200, `readyz: ${r.text}`);
    const m = await httpGet(`${gw.base}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.headers.get('content-type') || '', /^text\/plain/);
    assert.match(m.text, /^# (TYPE|HELP) \w+/m, 'no Prometheus TYPE/HELP line');
    // Every non-comment line is `name{labels} value`.
    for (const line of m.text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? [-+0-9.eEinfNa]+( \d+)?$/, `bad metrics line: ${line}`);
    }
  }),
);
