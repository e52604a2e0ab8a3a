// Catalog: where a tool's slices come from (server globs, _meta.slices,
// readOnlyHint, destructiveHint, else "other") and the filter order (excluded
// tool, include_tools deciding alone, excluded slice, included slice), with
// servers[].filters replacing the global filters for that server only.
// A filtered-out tool is not listed and calling it is -32602, like a tool
// that does not exist.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  MCPGW,
  Proc,
  bankStdio,
  connectHttp,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  toolboxStdio,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

// A minimal stdio MCP server (newline-delimited JSON-RPC, tools only) whose
// tools carry the slice sources the example upstreams do not have:
// _meta.slices and destructiveHint.
const FIXTURE_SOURCE = `
import readline from 'node:readline';
const tools = JSON.parse(process.argv[2]);
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (!m || m.id === undefined || !m.method) return;
  if (m.method === 'initialize')
    return out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: 'fixture', version: '1.0.0' } } });
  if (m.method === 'ping') return out({ jsonrpc: '2.0', id: m.id, result: {} });
  if (m.method === 'tools/list') return out({ jsonrpc: '2.0', id: m.id, result: { tools } });
  if (m.method === 'tools/call')
    return out({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'fixture ran ' + m.params.name }] } });
  out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
});
`;

const schema = { type: 'object', properties: {} };
const FIXTURE_TOOLS = [
  // _meta.slices wins over the annotations.
  { name: 'meta_write', description: 'meta slices', inputSchema: schema, _meta: { slices: ['write', 'billing'] }, annotations: { readOnlyHint: true } },
  // An empty _meta.slices gives nothing: the annotations decide.
  { name: 'meta_empty', description: 'empty meta slices', inputSchema: schema, _meta: { slices: [] }, annotations: { readOnlyHint: true } },
  { name: 'ro', description: 'read only', inputSchema: schema, annotations: { readOnlyHint: true } },
  { name: 'destroy', description: 'destructive', inputSchema: schema, annotations: { destructiveHint: true } },
  // readOnlyHint is looked at first.
  { name: 'ro_destroy', description: 'both hints', inputSchema: schema, annotations: { readOnlyHint: true, destructiveHint: true } },
  { name: 'plain', description: 'nothing at all', inputSchema: schema },
  { name: 'explicit_false', description: 'hints false', inputSchema: schema, annotations: { readOnlyHint: false, destructiveHint: false } },
  { name: 'get_admin', description: 'meta admin', inputSchema: schema, _meta: { slices: ['admin'] } },
];

let fixturePath;

function fixture(name, extra = {}) {
  return { name, transport: 'stdio', command: process.execPath, args: [fixturePath, JSON.stringify(FIXTURE_TOOLS)], ...extra };
}

before(() => {
  requireBinaries();
  const dir = tempDir('mcpgw-fixture-');
  fixturePath = path.join(dir, 'fixture-upstream.mjs');
  writeFileSync(fixturePath, FIXTURE_SOURCE);
});

/** `mcpgw check --config FILE --json`: {exit, json, proc}. */
async function checkJson(config) {
  const file = writeConfig(tempDir(), config);
  const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, '--json']);
  const exit = await proc.waitExit(30000);
  let json;
  try {
    json = JSON.parse(proc.stdoutText);
  } catch (e) {
    throw new Error(`check --json printed no JSON (${e.message}):\n${proc.diagnostics()}`);
  }
  return { exit, json, proc };
}

const sorted = (a) => [...a].sort();
const namesOf = (tools) => sorted(tools.map((t) => t.name));

/** Asserts that a call of `name` is refused exactly like a tool that never existed. */
async function assertUnknownTool(client, name) {
  const r = await client.request('tools/call', { name, arguments: {} });
  assert.equal(r.result, undefined, `${name} was callable: ${JSON.stringify(r)}`);
  assert.equal(r.error?.code, -32602, `${name}: ${JSON.stringify(r)}`);
  const ref = await client.request('tools/call', { name: 'no-such-server:no_such_tool', arguments: {} });
  assert.equal(r.error.message, ref.error.message.replace('no-such-server:no_such_tool', name), `${name} is refused differently from an unknown tool`);
}

test(
  'slice sources in order: server slices globs, then _meta.slices, readOnlyHint → read, destructiveHint → delete, else other',
  withDiagnostics(async () => {
    const { exit, json, proc } = await checkJson({
      servers: [
        fixture('fx'),
        // Globs match the upstream tool name; a tool no glob matches falls through to the next source.
        fixture('fxs', { slices: { read: ['get_*', 'plain'], list: ['get_*'] } }),
        bankStdio({ slices: { money: ['prepare_*'], read: ['list_*'] } }),
      ],
    });
    assert.equal(exit.code, 0, proc.diagnostics());
    assert.equal(json.valid, true);
    const slices = Object.fromEntries(json.tools.map((t) => [t.name, sorted(t.slices)]));
    assert.deepEqual(
      {
        meta_write: slices['fx:meta_write'],
        meta_empty: slices['fx:meta_empty'],
        ro: slices['fx:ro'],
        destroy: slices['fx:destroy'],
        ro_destroy: slices['fx:ro_destroy'],
        plain: slices['fx:plain'],
        explicit_false: slices['fx:explicit_false'],
        get_admin: slices['fx:get_admin'],
      },
      {
        meta_write: ['billing', 'write'],
        meta_empty: ['read'],
        ro: ['read'],
        destroy: ['delete'],
        ro_destroy: ['read'],
        plain: ['other'],
        explicit_false: ['other'],
        get_admin: ['admin'],
      },
    );
    // Server globs first: every matching slice, and nothing from _meta or annotations.
    assert.deepEqual(slices['fxs:get_admin'], ['list', 'read']);
    assert.deepEqual(slices['fxs:plain'], ['read']);
    // No glob matches: the tool's own sources.
    assert.deepEqual(slices['fxs:meta_write'], ['billing', 'write']);
    assert.deepEqual(slices['fxs:destroy'], ['delete']);
    // bank: globs for two tools, readOnlyHint for the others, other for the rest.
    assert.deepEqual(slices['bank:prepare_money_transfer'], ['money']);
    assert.deepEqual(slices['bank:list_accounts'], ['read']);
    assert.deepEqual(slices['bank:get_account_balance'], ['read']);
    assert.deepEqual(slices['bank:request_agent_handoff'], ['other']);
    for (const t of json.tools) assert.equal(t.upstream_name, t.name.slice(t.server.length + 1), JSON.stringify(t));
  }),
);

test(
  'include_tools decides alone over an excluded slice; an excluded tool beats include_tools; global globs match exposed names only',
  withDiagnostics(async () => {
    const gw = await startGateway({
      filters: {
        exclude_slices: ['read'],
        // bank:list_accounts and fx:ro are read tools: included anyway.
        // "echo" is the upstream name of toolbox:echo: a global glob does not match it.
        include_tools: ['bank:list_accounts', 'fx:ro', 'fx:meta_*', 'toolbox:ad?', 'echo', 'toolbox:pid'],
        exclude_tools: ['fx:meta_empty', 'toolbox:p*'],
      },
      servers: [bankStdio(), toolboxStdio(), fixture('fx')],
    });
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    assert.deepEqual(namesOf(tools), ['bank:list_accounts', 'fx:meta_write', 'fx:ro', 'toolbox:add']);

    const accounts = await c.callTool('bank:list_accounts');
    assert.equal(accounts.structuredContent.accounts.length, 3);
    assert.equal(textOf(await c.callTool('fx:ro')), 'fixture ran ro');
    assert.deepEqual((await c.callTool('toolbox:add', { a: 2, b: 3 })).structuredContent, { sum: 5 });

    // Not included (bank:get_account_balance is read, toolbox:echo is other), or excluded by name.
    for (const name of ['bank:get_account_balance', 'bank:prepare_money_transfer', 'toolbox:echo', 'echo', 'toolbox:pid', 'fx:meta_empty', 'fx:destroy']) {
      await assertUnknownTool(c, name);
    }
    await c.close();
  }),
);

test(
  'include_slices: a tool whose only slice is other passes only when other is included',
  withDiagnostics(async () => {
    const readOnly = await startGateway({ filters: { include_slices: ['read'] }, servers: [bankStdio(), toolboxStdio(), fixture('fx')] }, { label: 'mcpgw-read' });
    const readOther = await startGateway(
      { filters: { include_slices: ['read', 'other'], exclude_slices: ['billing'] }, servers: [bankStdio(), toolboxStdio(), fixture('fx')] },
      { label: 'mcpgw-read-other' },
    );
    const a = await connectHttp(readOnly.url);
    const b = await connectHttp(readOther.url);
    const readNames = [
      'bank:get_account_balance',
      'bank:list_accounts',
      'bank:welcome_customer',
      'fx:meta_empty',
      'fx:ro',
      'fx:ro_destroy',
      'toolbox:meta',
      'toolbox:pid',
    ];
    assert.deepEqual(namesOf((await a.listAllTools()).tools), readNames);
    const otherNames = [
      'bank:prepare_money_transfer',
      'bank:request_agent_handoff',
      'fx:explicit_false',
      'fx:plain',
      ...['add', 'big', 'crash', 'echo', 'fail', 'garbage', 'rpc_error', 'sleep'].map((n) => `toolbox:${n}`),
    ];
    // fx:meta_write (write, billing), fx:destroy (delete) and fx:get_admin (admin) are in neither.
    assert.deepEqual(namesOf((await b.listAllTools()).tools), sorted([...readNames, ...otherNames]));

    await assertUnknownTool(a, 'toolbox:echo');
    await assertUnknownTool(a, 'fx:plain');
    await assertUnknownTool(b, 'fx:meta_write');
    await assertUnknownTool(b, 'fx:destroy');
    assert.equal(textOf(await b.callTool('toolbox:echo', { text: 'other passes' })), 'other passes');
    assert.equal(textOf(await b.callTool('fx:plain')), 'fixture ran plain');
    await a.close();
    await b.close();
  }),
);

test(
  'servers[].filters replace the global filters for that server only, and match upstream names too',
  withDiagnostics(async () => {
    const gw = await startGateway({
      filters: { include_slices: ['read'], exclude_tools: ['bank:welcome_*'] },
      servers: [
        // No filters of its own: the global ones (read only, no welcome tool).
        bankStdio(),
        // Own filters: the global include_slices [read] no longer applies; "crash"
        // and "g*" are upstream names.
        toolboxStdio({ filters: { exclude_tools: ['crash', 'g*', 'toolbox:big'] } }),
        // Own filters: include_tools decides alone, even over its own excluded slice.
        fixture('fx', { filters: { exclude_slices: ['read'], include_tools: ['ro', 'fx:plain'] } }),
        // Own filters: slice order; delete excluded, other not included.
        fixture('fy', { filters: { exclude_slices: ['delete'], include_slices: ['write', 'read'] } }),
        // A second bank with its own filters: the global exclude_tools no longer applies to it.
        bankStdio({ name: 'bank2', filters: { include_slices: ['read'] } }),
      ],
    });
    const c = await connectHttp(gw.url);
    const names = namesOf((await c.listAllTools()).tools);
    const expected = [
      'bank2:get_account_balance',
      'bank2:list_accounts',
      'bank2:welcome_customer',
      'bank:get_account_balance',
      'bank:list_accounts',
      'fx:plain',
      'fx:ro',
      'fy:meta_empty',
      'fy:meta_write',
      'fy:ro',
      'fy:ro_destroy',
      ...['add', 'echo', 'fail', 'meta', 'pid', 'rpc_error', 'sleep'].map((n) => `toolbox:${n}`),
    ];
    assert.deepEqual(names, sorted(expected));

    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'own filters' })), 'own filters');
    assert.equal(textOf(await c.callTool('fx:plain')), 'fixture ran plain');
    assert.equal(textOf(await c.callTool('fy:meta_write')), 'fixture ran meta_write');
    const welcome = await c.callTool('bank2:welcome_customer');
    assert.notEqual(welcome.isError, true, JSON.stringify(welcome));
    for (const name of ['toolbox:crash', 'toolbox:garbage', 'toolbox:big', 'bank:welcome_customer', 'bank:prepare_money_transfer', 'fx:meta_write', 'fy:destroy', 'fy:plain', 'fy:get_admin']) {
      await assertUnknownTool(c, name);
    }
    await c.close();
  }),
);
