// Tool search (`discovery: search`): a mode whose tools/list is the two meta
// tools search_tools and call_tool, in front of the example servers and a
// generated 5,000-tool upstream (many-tools-fixture.mjs).
//   - tools/list is exactly the two meta tools; mode all still lists all;
//   - "account balance" finds bank:get_account_balance first among them all;
//   - limit (default 8, at most 50), an empty or useless query (overview),
//     bad arguments (-32602);
//   - a tool the mode hides is never found and cannot be called through
//     call_tool; call_tool of a chaining tool returns the whole chain; a
//     direct tools/call still works; cancellation reaches a call_tool;
//   - a tool the upstream adds is found after its list_changed;
//   - stateless 2026-07-28 requests and stdio work the same;
//   - mcpgw check shows each mode's discovery and what --search finds, and
//     reports an upstream tool named search_tools as hidden in search modes.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  MCPGW,
  Proc,
  REPO,
  bankStdio,
  connectHttp,
  newId,
  openGetStream,
  pidFromResult,
  pollUntil,
  requireBinaries,
  rpc,
  startGateway,
  startGatewayStdio,
  tempDir,
  textOf,
  threadSleeping,
  toYaml,
  toolboxStdio,
  waitSleeping,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';
import { srpc, sresult } from './stateless.mjs';

const FIXTURE = path.join(REPO, 'tests', 'integration', 'many-tools-fixture.mjs');
const META = ['search_tools', 'call_tool'];

const config = {
  welcome: { strategy: 'none' },
  modes: {
    assistant: { description: 'search, without toolbox:pid', discovery: 'search', exclude_tools: ['toolbox:pid'] },
    finder: { description: 'search over everything', discovery: 'search' },
  },
  servers: [
    bankStdio(),
    toolboxStdio({ args: ['--chain-tool', 'chain'] }),
    { name: 'gen', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--tools', '5000'], timeout_ms: 30000 },
  ],
};

let gw;
before(async () => {
  requireBinaries();
  gw = await startGateway(config);
});

const session = (mode) => connectHttp(mode ? `${gw.url}/${mode}` : gw.url);
const search = (c, query, extra = {}) => c.callTool('search_tools', { query, ...extra });
const names = (r) => r.structuredContent.tools.map((t) => t.name);

test(
  'tools/list in a search mode is exactly search_tools and call_tool; mode all still lists every tool',
  withDiagnostics(async () => {
    const c = await session('assistant');
    const { tools } = await c.listAllTools();
    assert.deepEqual(tools.map((t) => t.name), META);
    const [s, call] = tools;
    assert.deepEqual(s.inputSchema.required, ['query']);
    assert.equal(s.inputSchema.properties.query.type, 'string');
    assert.deepEqual([s.inputSchema.properties.limit.default, s.inputSchema.properties.limit.maximum], [8, 50]);
    assert.equal(s.annotations.readOnlyHint, true);
    assert.deepEqual(call.inputSchema.required, ['name']);
    assert.equal(call.inputSchema.properties.arguments.type, 'object');
    const all = await (await session()).listAllTools();
    assert.equal(all.tools.length, 5001 + 5 + all.tools.filter((t) => t.name.startsWith('toolbox:')).length);
    assert.ok(!all.tools.some((t) => META.includes(t.name)));
  }),
);

test(
  '"account balance" finds bank:get_account_balance first among 5,000+ tools, with name, title, description, inputSchema and annotations',
  withDiagnostics(async () => {
    const c = await session('assistant');
    const r = await search(c, 'account balance');
    assert.equal(r.isError, undefined);
    assert.equal(names(r)[0], 'bank:get_account_balance', names(r).join(', '));
    assert.ok(names(r).length >= 4 && names(r).length <= 8, names(r).join(', '));
    const listed = (await (await session()).listAllTools()).tools.find((t) => t.name === 'bank:get_account_balance');
    assert.deepEqual(r.structuredContent.tools[0], {
      name: listed.name,
      title: listed.title,
      description: listed.description,
      inputSchema: listed.inputSchema,
      annotations: listed.annotations,
    });
    assert.ok(textOf(r).startsWith(`${names(r).length} tools for "account balance"; call one with call_tool {name, arguments}:`), textOf(r));
    assert.match(textOf(r), /\n- bank:get_account_balance: \[Proxied from bank\] Returns the current balance of one account\.\n  inputSchema: \{/);
    // A generated tool is found by its words, and an exact name first.
    assert.equal(names(await search(c, 'export payroll invoices'))[0], 'gen:payroll_export_invoice');
    assert.equal(names(await search(c, 'gen:hotel_sync_contact'))[0], 'gen:hotel_sync_contact');
    // server:NAME alone lists that server's tools in catalog order.
    assert.deepEqual(names(await search(c, 'server:bank', { limit: 50 })), [
      'bank:welcome_customer', 'bank:list_accounts', 'bank:get_account_balance', 'bank:prepare_money_transfer', 'bank:request_agent_handoff',
    ]);
    assert.deepEqual(names(await search(c, 'balance server:bank', { limit: 2 })), ['bank:get_account_balance', 'bank:list_accounts']);
  }),
);

test(
  'limit: default 8, at most 50; a bad query or limit is -32602',
  withDiagnostics(async () => {
    const c = await session('finder');
    assert.equal(names(await search(c, 'list records')).length, 8);
    assert.equal(names(await search(c, 'list records', { limit: 3 })).length, 3);
    assert.equal(names(await search(c, 'list records', { limit: 50 })).length, 50);
    assert.equal(names(await search(c, 'list records', { limit: 5000 })).length, 50);
    for (const [args, why] of [
      [{ query: 42 }, 'query must be a string'],
      [{ query: 'x', limit: 0 }, 'limit must be an integer from 1 to 50'],
      [{ query: 'x', limit: 2.5 }, 'limit must be an integer from 1 to 50'],
      [{ query: 'x', limit: '8' }, 'limit must be an integer from 1 to 50'],
    ]) {
      const m = await c.request('tools/call', { name: 'search_tools', arguments: args });
      assert.equal(m.error?.code, -32602, JSON.stringify(m));
      assert.equal(m.error.message, `Invalid params: search_tools: ${why}`);
    }
    // A huge query is answered (only its first words count).
    const huge = `${'zzz '.repeat(200000)}balance`;
    const r = await search(c, `account balance ${huge}`);
    assert.equal(names(r)[0], 'bank:get_account_balance');
  }),
);

test(
  'an empty or useless query gets the overview: every server with its tool count, and the search syntax',
  withDiagnostics(async () => {
    const c = await session('assistant');
    const servers = [
      { name: 'bank', tools: 5 },
      { name: 'toolbox', tools: (await (await session()).listAllTools()).tools.filter((t) => t.name.startsWith('toolbox:')).length - 1 },
      { name: 'gen', tools: 5001 },
    ];
    for (const [query, lead] of [
      ['', ''],
      ['the of and what', 'No tool matches "the of and what". '],
      ['xylophone quasar', 'No tool matches "xylophone quasar". '],
      ['server:nosuchserver', 'No tool matches "server:nosuchserver". '],
    ]) {
      const r = await search(c, query);
      assert.deepEqual(r.structuredContent.tools, []);
      assert.deepEqual(r.structuredContent.servers, servers, query);
      assert.match(r.structuredContent.syntax, /server:NAME/);
      assert.ok(textOf(r).startsWith(`${lead}${5006 + servers[1].tools} tools can be searched, from: bank (5 tools), toolbox (`), textOf(r));
    }
    // No query at all reads as the empty one.
    assert.deepEqual((await c.callTool('search_tools', {})).structuredContent.servers, servers);
  }),
);

test(
  'a tool the mode hides is never found and cannot be called, directly or through call_tool',
  withDiagnostics(async () => {
    const hidden = await session('assistant');
    const open = await session('finder');
    assert.equal(names(await search(open, 'process id'))[0], 'toolbox:pid');
    for (const q of ['process id', 'toolbox:pid', 'server:toolbox', 'pid']) {
      assert.ok(!names(await search(hidden, q, { limit: 50 })).includes('toolbox:pid'), q);
    }
    const through = await hidden.request('tools/call', { name: 'call_tool', arguments: { name: 'toolbox:pid', arguments: {} } });
    assert.deepEqual(through.error, { code: -32602, message: 'Unknown tool: toolbox:pid' });
    const direct = await hidden.request('tools/call', { name: 'toolbox:pid', arguments: {} });
    assert.deepEqual(direct.error, through.error);
    // The same call works where the tool is visible.
    assert.ok(pidFromResult(await open.callTool('call_tool', { name: 'toolbox:pid' })) > 0);
  }),
);

test(
  'call_tool returns what a direct tools/call returns, whole chains included; a direct call still works in a search mode',
  withDiagnostics(async () => {
    const c = await session('assistant');
    const args = { accountId: 'acc_savings_001' };
    const direct = await c.callTool('bank:get_account_balance', args);
    const through = await c.callTool('call_tool', { name: 'bank:get_account_balance', arguments: args });
    assert.deepEqual(through, direct);
    assert.equal(direct.structuredContent.balance, 15020.5);

    const chain = { text: 'first', next: 'toolbox:chain', next_arguments: { text: 'second', next: 'toolbox:echo', next_arguments: { text: 'third' } } };
    const r = await c.callTool('call_tool', { name: 'toolbox:chain', arguments: chain });
    assert.deepEqual(r.content.map((x) => x.text), ['first', 'second', 'third']);
    assert.deepEqual(r._meta['mcpgw/chain'].map((h) => h.tool), ['toolbox:chain', 'toolbox:chain', 'toolbox:echo']);
    assert.equal(r._meta.nextTool, undefined);
    // The same as the direct call, but for the hops' timings.
    const timeless = (x) => ({ ...x, _meta: { 'mcpgw/chain': x._meta['mcpgw/chain'].map(({ ms, ...hop }) => hop) } });
    assert.deepEqual(timeless(r), timeless(await c.callTool('toolbox:chain', chain)));
  }),
);

test(
  'call_tool with bad arguments is -32602 with a precise message',
  withDiagnostics(async () => {
    const c = await session('assistant');
    for (const [args, message] of [
      [{}, 'Invalid params: call_tool: name must be a string, the exact name of a tool search_tools found'],
      [{ name: 7 }, 'Invalid params: call_tool: name must be a string, the exact name of a tool search_tools found'],
      [{ name: 'toolbox:echo', arguments: [1] }, 'Invalid params: call_tool: arguments must be an object'],
      [{ name: 'toolbox:echo', arguments: 'text' }, 'Invalid params: call_tool: arguments must be an object'],
      [{ name: 'search_tools', arguments: { query: 'x' } }, 'Invalid params: call_tool: search_tools is called directly, not through call_tool'],
      [{ name: 'call_tool', arguments: { name: 'toolbox:echo' } }, 'Invalid params: call_tool: call_tool is called directly, not through call_tool'],
      [{ name: 'nope:nothing' }, 'Unknown tool: nope:nothing'],
    ]) {
      const m = await c.request('tools/call', { name: 'call_tool', arguments: args });
      assert.deepEqual(m.error, { code: -32602, message }, JSON.stringify(args));
    }
    // Outside a search mode the meta tools do not exist.
    const all = await session();
    const m = await all.request('tools/call', { name: 'search_tools', arguments: { query: 'x' } });
    assert.deepEqual(m.error, { code: -32602, message: 'Unknown tool: search_tools' });
  }),
);

test(
  'a tool the upstream adds is found as soon as its list_changed is in',
  withDiagnostics(async () => {
    const c = await session('finder');
    const before = await search(c, 'quasar flux capacitor');
    assert.deepEqual(before.structuredContent.tools, []);
    const added = await c.callTool('call_tool', { name: 'gen:add_tool', arguments: { name: 'calibrate_quasar_flux', description: 'Calibrates the flux capacitor of a quasar.' } });
    assert.equal(textOf(added), 'added calibrate_quasar_flux');
    const r = await pollUntil(
      async () => {
        const s = await search(c, 'quasar flux capacitor');
        return s.structuredContent.tools.length ? s : null;
      },
      { what: 'the added tool to be searchable' },
    );
    assert.equal(names(r)[0], 'gen:calibrate_quasar_flux');
    assert.equal(textOf(await c.callTool('call_tool', { name: 'gen:calibrate_quasar_flux', arguments: { x: 1 } })), 'calibrate_quasar_flux {"x":1}');
  }),
);

test(
  'notifications/cancelled ends a call made through call_tool, like a direct one',
  withDiagnostics(async () => {
    const c = await session('finder');
    const pid = pidFromResult(await c.callTool('call_tool', { name: 'toolbox:pid' }));
    const id = newId();
    const pending = rpc(c.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'toolbox:sleep', arguments: { ms: 20000 } } } }, c.opts());
    await waitSleeping(pid);
    const n = await c.notify('notifications/cancelled', { requestId: id, reason: 'stop' });
    assert.equal(n.status, 202, n.text);
    const res = await pending;
    // Cut short: toolbox ignores cancellation, so its sleep is still running.
    assert.ok(threadSleeping(pid), 'answered only after the upstream sleep ended');
    const m = res.message;
    assert.equal(m.id, id);
    if (m.error) {
      assert.match(m.error.message, /cancel/i, JSON.stringify(m));
    } else {
      assert.equal(m.result.isError, true, JSON.stringify(m));
      assert.match(textOf(m.result), /cancel/i, JSON.stringify(m));
    }
  }),
);

test(
  'stateless 2026-07-28 requests: the meta tools listed, search and call_tool answered',
  withDiagnostics(async () => {
    const url = `${gw.url}/assistant`;
    const listed = await sresult(url, 'tools/list', {});
    assert.deepEqual(listed.tools.map((t) => t.name), META);
    const found = await sresult(url, 'tools/call', { name: 'search_tools', arguments: { query: 'account balance' } });
    assert.equal(found.structuredContent.tools[0].name, 'bank:get_account_balance');
    assert.equal(found.resultType, 'complete');
    const r = await sresult(url, 'tools/call', { name: 'call_tool', arguments: { name: 'toolbox:echo', arguments: { text: 'stateless hi' } } });
    assert.equal(textOf(r), 'stateless hi');
    const hidden = await srpc(url, 'tools/call', { name: 'call_tool', arguments: { name: 'toolbox:pid' } });
    assert.deepEqual(hidden.message.error, { code: -32602, message: 'Unknown tool: toolbox:pid' });
  }),
);

test(
  'stdio (--stdio --mode assistant): the meta tools listed, search and call_tool answered',
  withDiagnostics(async () => {
    const { client, proc } = startGatewayStdio(config, { extraArgs: ['--mode', 'assistant'] });
    await client.initialize();
    const { tools } = await client.listAllTools();
    assert.deepEqual(tools.map((t) => t.name), META);
    const found = await client.callTool('search_tools', { query: 'move money between accounts', limit: 3 });
    assert.ok(found.structuredContent.tools.some((t) => t.name === 'bank:prepare_money_transfer'), JSON.stringify(found));
    const r = await client.callTool('call_tool', { name: 'toolbox:echo', arguments: { text: 'stdio hi' } });
    assert.equal(textOf(r), 'stdio hi');
    client.closeStdin();
    assert.equal((await proc.waitExit(10000)).code, 0);
  }),
);

async function runCheck(cfg, extra) {
  const file = writeConfig(tempDir(), cfg);
  const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, ...extra]);
  const exit = await proc.waitExit(30000);
  return { exit, stdout: proc.stdoutText };
}

test(
  'mcpgw check: each mode\'s discovery, what --search finds per mode, and an upstream search_tools hidden in search modes',
  withDiagnostics(async () => {
    const cfg = {
      welcome: { strategy: 'none' },
      discovery: 'search',
      modes: { plain: { discovery: 'all' }, nobank: { exclude_tools: ['bank:*'] } },
      servers: [bankStdio(), toolboxStdio({ name: 'raw', prefix: false, args: ['--chain-tool', 'search_tools'] })],
    };
    const text = await runCheck(cfg, ['--search', 'account balance']);
    assert.equal(text.exit.code, 0, text.stdout);
    assert.match(text.stdout, /\ndiscovery by mode:\n {2}all: search\n {2}plain: all\n {2}nobank: search\n/);
    assert.match(text.stdout, /\nsearch "account balance" \(best 8 per mode\):\n {2}all:\n {4}1\. bank:get_account_balance \(\d+\.\d\d\)\n/);
    assert.match(text.stdout, /\n {2}nobank: nothing matches \(search_tools answers with the overview\)\n/);
    assert.match(
      text.stdout,
      /warning: tool "search_tools" of server raw is hidden in search modes \(all, nobank\): search_tools is the gateway's meta tool there/,
    );
    const j = await runCheck(cfg, ['--json', '--search', 'account balance']);
    const d = JSON.parse(j.stdout);
    assert.deepEqual(d.discovery, [
      { mode: 'all', discovery: 'search' },
      { mode: 'plain', discovery: 'all' },
      { mode: 'nobank', discovery: 'search' },
    ]);
    assert.equal(d.search.query, 'account balance');
    assert.deepEqual(d.search.modes.map((m) => m.mode), ['all', 'plain', 'nobank']);
    assert.equal(d.search.modes[0].tools[0].name, 'bank:get_account_balance');
    assert.ok(d.search.modes[0].tools[0].score > 0);
    assert.deepEqual(d.search.modes[2].tools, []);
    // The hidden tool is listed in mode plain only.
    assert.deepEqual(d.tools.find((t) => t.name === 'search_tools').modes, ['plain']);
    // Without --search: the discovery only.
    const plain = JSON.parse((await runCheck(cfg, ['--json'])).stdout);
    assert.equal(plain.search, undefined);
    assert.equal(plain.discovery.length, 3);
  }),
);

test(
  'SIGHUP turning a mode to discovery: search tells its sessions tools/list_changed; the same session then lists the meta tools',
  withDiagnostics(async () => {
    const listen = { host: '127.0.0.1', path: '/mcp', port: 0 };
    const base = { listen, welcome: { strategy: 'none' }, modes: { helper: {} }, servers: [bankStdio()] };
    const g = await startGateway(base, { label: 'mcpgw-reload-search' });
    const c = await connectHttp(`${g.url}/helper`);
    assert.ok((await c.listAllTools()).tools.some((t) => t.name === 'bank:list_accounts'));
    const stream = await openGetStream(c);
    assert.equal(stream.status, 200);
    writeFileSync(g.configPath, toYaml({ ...base, listen: { ...listen, port: g.port }, modes: { helper: { discovery: 'search' } } }));
    g.proc.child.kill('SIGHUP');
    await stream.waitFor((m) => m.method === 'notifications/tools/list_changed', 10000);
    assert.deepEqual((await c.listAllTools()).tools.map((t) => t.name), META);
    stream.close();
  }),
);

test(
  'the welcome tool works as before in a search mode: its text is in the instructions, and it stays callable by name',
  withDiagnostics(async () => {
    const g = await startGateway(
      { welcome: { strategy: 'first' }, modes: { helper: { discovery: 'search' } }, servers: [toolboxStdio({ args: ['--welcome-tool', 'hello'] })] },
      { label: 'mcpgw-welcome-search' },
    );
    const searching = await connectHttp(`${g.url}/helper`);
    const listing = await connectHttp(g.url);
    assert.match(searching.initResult.instructions, /welcome from toolbox-server/);
    assert.equal(searching.initResult.instructions, listing.initResult.instructions);
    assert.deepEqual((await searching.listAllTools()).tools.map((t) => t.name), META);
    assert.equal(textOf(await searching.callTool('toolbox:hello')), 'welcome from toolbox-server');
  }),
);
