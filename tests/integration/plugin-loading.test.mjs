// Composite plugins as the gateway loads them (gateway/plugin/plugin.cpp,
// catalog collision rules in gateway/catalog/catalog.cpp):
// - every kind of bad plugin (no entry point, another ABI version, an init
//   that refuses its config, a tool declared twice, a file that is not
//   there) is refused with an error line naming the file and the cause, and
//   the gateway starts anyway and serves the good plugin and the upstreams;
// - the `config` mapping of an entry reaches the plugin's init;
// - `mcpgw check` reports the refused plugins as errors (exit 1) and lists
//   the loaded ones, as text and as JSON;
// - name collisions: the first plugin to declare a name keeps it, a later
//   plugin's tool and a proxied tool of that exposed name are left out, with
//   a warning naming both sides and their files;
// - a handler that throws gives the client an isError result, and the
//   gateway keeps serving;
// - SIGHUP keeps a plugin whose entry is unchanged (same instance), loads a
//   changed one anew (its new config takes effect; the old one is unloaded)
//   and unloads a removed one (its tools leave the catalog);
// - SIGTERM unloads every plugin before the gateway exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  BUILD,
  MCPGW,
  Proc,
  bankStdio,
  connectHttp,
  openGetStream,
  pollUntil,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  toolboxStdio,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const RATES = path.join(BUILD, 'examples', 'rates-server');
const plugin = (name) => path.join(BUILD, 'plugins', `lib${name}.so`);
const BANKING = plugin('banking_composites');
const listen = { host: '127.0.0.1', port: 0, path: '/mcp' };

function ratesStdio() {
  return { name: 'rates', transport: 'stdio', command: RATES, args: [] };
}

const upstreams = () => [bankStdio(), ratesStdio(), toolboxStdio()];

/** Every kind of plugin the loader must refuse, with the cause it must name. */
function badPlugins(dir) {
  return [
    { path: plugin('test_no_entry'), cause: 'no entry point mcpgw_plugin_v1' },
    { path: plugin('test_abi_mismatch'), cause: 'built for plugin ABI version 99, this mcpgw speaks version 1' },
    { path: plugin('test_init_fails'), cause: 'init failed: the setting "region" is required' },
    { path: plugin('test_duplicate_tool'), cause: 'tool "twice" is declared twice' },
    { path: path.join(dir, 'libnot_there.so'), cause: 'cannot load' },
  ];
}

const BANKING_TOOLS = ['account_overview', 'get_chained_info', 'safe_transfer'];

function stderrLines(proc) {
  return proc.stderrText.split('\n');
}

function count(proc, pred) {
  return stderrLines(proc).filter(pred).length;
}

/** Waits (deadline) until `n` stderr lines satisfy `pred`; returns them. */
async function waitForLines(proc, pred, n, what, timeoutMs = 10000) {
  return pollUntil(
    () => {
      const hits = stderrLines(proc).filter(pred);
      return hits.length >= n && hits;
    },
    { timeoutMs, what: `${n} stderr line(s) of ${proc.label}: ${what}` },
  );
}

const isLoaded = (name) => (l) => l.includes(`plugin ${name} `) && / loaded from .*: \d+ tools$/.test(l);
const isUnloaded = (name) => (l) => l.endsWith(`plugin ${name} unloaded`);
const isReloaded = (l) => / reloaded .*: \d+ upstreams kept, \d+ started, \d+ stopped$/.test(l);

/** Rewrites the gateway's config file, sends SIGHUP and waits for the "reloaded" log line. */
async function reload(gw, config) {
  const before = count(gw.proc, isReloaded);
  writeConfig(path.dirname(gw.configPath), config, path.basename(gw.configPath));
  gw.proc.child.kill('SIGHUP');
  await waitForLines(gw.proc, isReloaded, before + 1, 'the reload to finish');
}

async function runCheck(config, extra = []) {
  const file = writeConfig(tempDir(), config);
  const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, ...extra]);
  const exit = await proc.waitExit(30000);
  return { exit, stdout: proc.stdoutText, stderr: proc.stderrText };
}

test(
  'bad plugins are refused with the file and the cause; the gateway serves the good plugin and the upstreams',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, RATES, BANKING);
    const dir = tempDir();
    const bad = badPlugins(dir);
    const gw = await startGateway(
      { servers: upstreams(), plugins: [{ path: BANKING, config: {} }, ...bad.map((b) => ({ path: b.path, config: {} }))] },
      { dir, label: 'mcpgw-bad-plugins' },
    );
    const lines = stderrLines(gw.proc);
    for (const b of bad) {
      const line = lines.find((l) => l.includes(`plugin ${b.path}`) && l.includes(b.cause));
      assert.ok(line, `no log line naming ${b.path} with "${b.cause}"`);
      assert.match(line, /\[error\]/, line);
      assert.ok(line.endsWith('; serving without it'), line);
    }
    assert.equal(count(gw.proc, (l) => l.includes('; serving without it')), bad.length);
    assert.equal(count(gw.proc, isLoaded('banking_composites')), 1);
    for (const name of ['from_the_future', 'init_fails', 'duplicate_tool'])
      assert.equal(count(gw.proc, isLoaded(name)), 0, `plugin ${name} logged as loaded`);

    const c = await connectHttp(gw.url);
    const names = (await c.listAllTools()).tools.map((t) => t.name);
    // Composite tools are unprefixed: exactly the good plugin's.
    assert.deepEqual(names.filter((n) => !n.includes(':')).sort(), BANKING_TOOLS, names.join(','));
    for (const n of ['bank:list_accounts', 'bank:get_account_balance', 'rates:get_exchange_rates', 'toolbox:echo'])
      assert.ok(names.includes(n), `${n} missing: ${names.join(',')}`);
    for (const n of ['twice', 'never_listed']) assert.ok(!names.includes(n), `${n} is listed: ${names.join(',')}`);

    const info = await c.callTool('get_chained_info');
    assert.equal(info.isError, undefined, JSON.stringify(info));
    assert.equal(info.structuredContent.source, 'bank:list_accounts');
    assert.deepEqual(info.structuredContent.data.accounts.map((a) => a.accountId).sort(), ['acc_checking_001', 'acc_credit_001', 'acc_savings_001']);
    // The good plugin reaches both of its upstreams.
    const overview = await c.callTool('account_overview', { currency: 'EUR' });
    assert.equal(overview.isError, undefined, JSON.stringify(overview));
    assert.equal(overview.structuredContent?.partial, false, JSON.stringify(overview));
    assert.ok(overview.structuredContent.fx && overview.structuredContent.bank, JSON.stringify(overview));
    assert.equal(textOf(await c.callTool('toolbox:echo', { text: 'still proxied' })), 'still proxied');
    const twice = await c.request('tools/call', { name: 'twice', arguments: {} });
    assert.equal(twice.error?.code, -32602, JSON.stringify(twice));
    await c.close();
  }),
);

test(
  'the entry\'s config reaches init: init_fails with {region: eu} loads and serves its tool',
  withDiagnostics(async () => {
    requireBinaries();
    const lib = plugin('test_init_fails');
    const gw = await startGateway({ servers: [bankStdio()], plugins: [{ path: lib, config: { region: 'eu' } }] }, { label: 'mcpgw-init-config' });
    const [line] = await waitForLines(gw.proc, isLoaded('init_fails'), 1, 'init_fails loaded');
    assert.ok(line.includes(`plugin init_fails 1.0.0 loaded from ${lib}: 1 tools`), line);
    assert.equal(count(gw.proc, (l) => l.includes('serving without it')), 0);
    const c = await connectHttp(gw.url);
    const names = (await c.listAllTools()).tools.map((t) => t.name);
    assert.ok(names.includes('never_listed'), names.join(','));
    const r = await c.callTool('never_listed');
    assert.deepEqual(r, { content: [{ type: 'text', text: '' }] });
    await c.close();
  }),
);

test(
  'mcpgw check: an error line per refused plugin and exit 1; the loaded ones under "plugins:"; --json alike; good plugins only: exit 0',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, RATES, BANKING);
    const dir = tempDir();
    const bad = badPlugins(dir);
    const C_PLUGIN = plugin('test_c_plugin');
    const good = [
      { path: BANKING, config: {} },
      { path: C_PLUGIN, config: { server: 'toolbox' } },
    ];
    const withBad = { servers: upstreams(), plugins: [good[0], ...bad.map((b) => ({ path: b.path, config: {} })), good[1]] };

    const text = await runCheck(withBad);
    assert.deepEqual(text.exit, { code: 1, signal: null }, `${text.stdout}\n${text.stderr}`);
    const out = text.stdout.split('\n');
    const errors = out.filter((l) => l.startsWith('error: '));
    for (const b of bad)
      assert.equal(errors.filter((l) => l.includes(`plugin ${b.path}`) && l.includes(b.cause)).length, 1, `no single error line for ${b.path} ("${b.cause}"):\n${text.stdout}`);
    assert.equal(errors.length, bad.length, text.stdout);
    const at = out.indexOf('plugins:');
    assert.ok(at >= 0, `no plugins: section:\n${text.stdout}`);
    const section = [];
    for (const l of out.slice(at + 1)) {
      if (!l.trim()) break;
      section.push(l.trim());
    }
    assert.deepEqual(section, [`banking_composites 1.0.0: ${BANKING} (3 tools)`, `test_c_plugin 0.1.0: ${C_PLUGIN} (4 tools)`], text.stdout);
    assert.equal(out.at(-2), 'invalid', text.stdout);

    const json = await runCheck(withBad, ['--json']);
    assert.equal(json.exit.code, 1, json.stdout);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.valid, false);
    assert.deepEqual(doc.plugins, [
      { name: 'banking_composites', version: '1.0.0', path: BANKING, tools: 3 },
      { name: 'test_c_plugin', version: '0.1.0', path: C_PLUGIN, tools: 4 },
    ]);
    for (const b of bad)
      assert.ok(doc.errors.some((e) => e.includes(`plugin ${b.path}`) && e.includes(b.cause)), `no error for ${b.path}: ${JSON.stringify(doc.errors)}`);
    assert.equal(doc.errors.length, bad.length, JSON.stringify(doc.errors));
    for (const n of BANKING_TOOLS) assert.deepEqual(doc.tools.filter((t) => t.name === n).map((t) => t.plugin), ['banking_composites'], n);
    assert.ok(!doc.tools.some((t) => ['twice', 'never_listed'].includes(t.name)));

    const ok = await runCheck({ servers: upstreams(), plugins: good });
    assert.deepEqual(ok.exit, { code: 0, signal: null }, `${ok.stdout}\n${ok.stderr}`);
    const rows = ok.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    const serverOf = (name) => rows.find((r) => r[0] === name)?.[1];
    for (const n of BANKING_TOOLS) assert.equal(serverOf(n), 'plugin banking_composites', `${n}:\n${ok.stdout}`);
    for (const n of ['c_echo', 'c_parallel']) assert.equal(serverOf(n), 'plugin test_c_plugin', `${n}:\n${ok.stdout}`);
    assert.equal(serverOf('bank:list_accounts'), 'bank', ok.stdout);
    assert.ok(!ok.stdout.split('\n').some((l) => l.startsWith('error:')), ok.stdout);
    assert.equal(ok.stdout.split('\n').at(-2), 'valid', ok.stdout);
  }),
);

test(
  'collisions: the first plugin keeps a name, a proxied tool yields to a plugin tool; warnings name both sides and files',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, BANKING);
    const CLASH = plugin('test_clash');
    const config = { servers: [bankStdio(), toolboxStdio()], plugins: [{ path: BANKING, config: {} }, { path: CLASH, config: {} }] };
    const gw = await startGateway(config, { label: 'mcpgw-clash' });

    const [pluginWarning] = await waitForLines(
      gw.proc,
      (l) => l.includes(`tool "get_chained_info" of plugin clash (${CLASH}) is left out: plugin banking_composites (${BANKING}) already declares a tool of that name`),
      1,
      'the plugin/plugin collision warning',
    );
    assert.match(pluginWarning, /\[warning\]/, pluginWarning);
    const [serverWarning] = await waitForLines(
      gw.proc,
      (l) => l.includes(`tool "toolbox:echo" of server toolbox (echo) is left out: plugin clash (${CLASH}) already declares a tool of that name`),
      1,
      'the server/plugin collision warning',
    );
    assert.match(serverWarning, /\[warning\]/, serverWarning);

    const c = await connectHttp(gw.url);
    const tools = (await c.listAllTools()).tools;
    const named = (n) => tools.filter((t) => t.name === n);
    assert.equal(named('get_chained_info').length, 1);
    assert.equal(named('get_chained_info')[0].title, 'Get Chained Info', JSON.stringify(named('get_chained_info')));
    assert.equal(named('clash_only').length, 1);
    assert.equal(named('toolbox:echo').length, 1);
    // The plugin's definition (no schema of its own), not the proxied one.
    assert.deepEqual(named('toolbox:echo')[0].inputSchema, { type: 'object' }, JSON.stringify(named('toolbox:echo')));

    const info = await c.callTool('get_chained_info');
    assert.equal(info.isError, undefined, JSON.stringify(info));
    assert.deepEqual(Object.keys(info.structuredContent).sort(), ['data', 'source']);
    assert.equal(info.structuredContent.source, 'bank:list_accounts');
    assert.ok(!textOf(info).includes('clash'), textOf(info));
    assert.deepEqual(await c.callTool('clash_only'), { content: [{ type: 'text', text: 'from the clash plugin: clash_only' }] });
    assert.deepEqual(await c.callTool('toolbox:echo', { text: 'hi' }), { content: [{ type: 'text', text: 'from the clash plugin: toolbox:echo' }] });
    // The rest of toolbox is still proxied.
    assert.ok(tools.some((t) => t.name === 'toolbox:pid'));
    const pid = await c.callTool('toolbox:pid');
    assert.equal(pid.isError, undefined, JSON.stringify(pid));
    await c.close();

    // The order in the file decides: clash first keeps get_chained_info.
    const swapped = await runCheck({ ...config, plugins: [...config.plugins].reverse() }, ['--json']);
    const doc = JSON.parse(swapped.stdout);
    assert.deepEqual(doc.tools.filter((t) => t.name === 'get_chained_info').map((t) => t.plugin), ['clash'], swapped.stdout);
    assert.ok(
      doc.warnings.some((w) => w.includes(`tool "get_chained_info" of plugin banking_composites (${BANKING}) is left out: plugin clash (${CLASH})`)),
      JSON.stringify(doc.warnings),
    );
  }),
);

test(
  'a throwing handler gives an isError result saying the tool failed; the gateway keeps serving',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway(
      { servers: [toolboxStdio()], plugins: [{ path: plugin('test_composites'), config: { server: 'toolbox' } }] },
      { label: 'mcpgw-throws' },
    );
    const c = await connectHttp(gw.url);
    const r = await c.callTool('throws');
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /tool throws failed/, JSON.stringify(r));
    assert.match(textOf(r), /the handler broke/, JSON.stringify(r));
    const i = await c.callTool('throws_int');
    assert.equal(i.isError, true, JSON.stringify(i));
    assert.match(textOf(i), /tool throws_int failed/, JSON.stringify(i));
    await waitForLines(gw.proc, (l) => l.includes('plugin test_composites: tool throws threw: the handler broke'), 1, 'the handler error log line');

    // Many at once, mixed with good calls: every one answered, none lost.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, k) => (k % 3 === 0 ? c.callTool('whoami') : c.callTool(k % 3 === 1 ? 'throws' : 'throws_int'))),
    );
    results.forEach((res, k) => {
      if (k % 3 === 0) assert.deepEqual(res.structuredContent, { principal: '', mode: 'all' }, JSON.stringify(res));
      else assert.equal(res.isError, true, JSON.stringify(res));
    });
    assert.ok(gw.proc.alive, 'the gateway died');
    assert.deepEqual(await c.callTool('whoami').then((x) => x.structuredContent), { principal: '', mode: 'all' });
    assert.equal(textOf(await c.callTool('from_own_thread')), 'from a plugin thread');
    await c.close();
  }),
);

test(
  'SIGHUP: an unchanged plugin is kept, a changed one is loaded anew with its new config, a removed one is unloaded',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, BANKING);
    const withLimit = (max_amount) => ({
      listen,
      servers: [bankStdio()],
      plugins: [{ path: BANKING, config: { safe_transfer: { max_amount } } }],
    });
    const gw = await startGateway(withLimit(10000), { label: 'mcpgw-plugin-reload', logLevel: 'info' });
    const loaded = () => count(gw.proc, isLoaded('banking_composites'));
    const unloaded = () => count(gw.proc, isUnloaded('banking_composites'));
    assert.equal(loaded(), 1);
    assert.equal(unloaded(), 0);

    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    assert.equal(stream.status, 200);
    // USD 5000 from savings (unlocked, USD 15,020.50) to checking.
    const transfer = { fromAccountId: 'acc_savings_001', toAccountId: 'acc_checking_001', amount: 5000 };
    const prepared = async () => {
      const r = await c.callTool('safe_transfer', transfer);
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(r.structuredContent?.status, 'prepared', JSON.stringify(r));
      assert.equal(r.structuredContent.amount, 5000);
    };
    await prepared();

    // (a) The same file again: the instance is kept, nothing loads or unloads.
    await reload(gw, withLimit(10000));
    assert.equal(loaded(), 1, 'an unchanged plugin was loaded again');
    assert.equal(unloaded(), 0, 'an unchanged plugin was unloaded');
    await prepared();

    // (b) A changed config: loaded anew; the old instance unloads.
    await reload(gw, withLimit(1000));
    assert.equal(loaded(), 2, 'the changed plugin was not loaded again');
    await waitForLines(gw.proc, isUnloaded('banking_composites'), 1, 'the old instance to unload');
    const handoff = await c.callTool('safe_transfer', transfer);
    assert.notEqual(handoff.structuredContent?.status, 'prepared', `the new limit is not applied: ${JSON.stringify(handoff)}`);
    assert.match(textOf(handoff), /Transfers over USD 1000 need a customer service agent\./, JSON.stringify(handoff));
    assert.match(textOf(handoff), /requested a handoff to a customer service agent/, JSON.stringify(handoff));
    const small = await c.callTool('safe_transfer', { ...transfer, amount: 500 });
    assert.equal(small.structuredContent?.status, 'prepared', JSON.stringify(small));

    // (c) Removed: unloaded, its tools leave the catalog, clients are told.
    const changes = () => stream.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
    const before = changes();
    await reload(gw, { listen, servers: [bankStdio()] });
    await waitForLines(gw.proc, isUnloaded('banking_composites'), 2, 'the removed plugin to unload');
    assert.equal(loaded(), 2);
    await pollUntil(() => changes() > before, { timeoutMs: 10000, what: 'notifications/tools/list_changed after the plugin was removed' });
    const names = (await c.listAllTools()).tools.map((t) => t.name);
    for (const n of BANKING_TOOLS) assert.ok(!names.includes(n), `${n} still listed: ${names.join(',')}`);
    assert.ok(names.includes('bank:list_accounts'), names.join(','));
    const gone = await c.request('tools/call', { name: 'safe_transfer', arguments: transfer });
    assert.equal(gone.error?.code, -32602, JSON.stringify(gone));
    assert.equal((await c.callTool('bank:list_accounts')).structuredContent.accounts.length, 3);
    stream.close();
    await c.close();
  }),
);

test(
  'SIGTERM: every loaded plugin is unloaded before the gateway exits 0',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, BANKING);
    const gw = await startGateway(
      {
        servers: [bankStdio(), toolboxStdio()],
        plugins: [
          { path: BANKING, config: {} },
          { path: plugin('test_composites'), config: { server: 'toolbox' } },
        ],
      },
      { label: 'mcpgw-plugin-shutdown', logLevel: 'info' },
    );
    const c = await connectHttp(gw.url);
    assert.equal((await c.callTool('get_chained_info')).structuredContent.source, 'bank:list_accounts');
    assert.equal(textOf(await c.callTool('from_own_thread')), 'from a plugin thread');
    await c.close();
    assert.equal(count(gw.proc, isUnloaded('banking_composites')) + count(gw.proc, isUnloaded('test_composites')), 0);

    const exit = await gw.proc.stop({ signal: 'SIGTERM' });
    assert.deepEqual(exit, { code: 0, signal: null, killed: false });
    const lines = stderrLines(gw.proc);
    for (const name of ['banking_composites', 'test_composites']) {
      assert.equal(lines.filter(isUnloaded(name)).length, 1, `plugin ${name} unloaded not logged once`);
      assert.ok(lines.findIndex(isUnloaded(name)) > lines.findIndex(isLoaded(name)));
    }
  }),
);
