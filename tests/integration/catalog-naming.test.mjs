// Naming of the catalog: naming.max_length shortens longer exposed names
// deterministically (readable prefix, "-", 10 hex digits; exactly max_length
// characters) and the shortened names route to the right upstream tool; two
// servers exposing the same name stop the gateway (exit 2, both named); names
// that clients may reject produce one warning with the fix.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MCPGW,
  Proc,
  bankStdio,
  connectHttp,
  requireBinaries,
  startGateway,
  startGatewayStdio,
  tempDir,
  textOf,
  toolboxStdio,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

before(() => requireBinaries());

const sorted = (a) => [...a].sort();

/** Lines of `text` that are naming warnings (they name the fix). */
function namingWarnings(text) {
  return text.split('\n').filter((l) => /naming\.separator|naming\.max_length|A-Za-z0-9/.test(l));
}

/** Starts mcpgw with `config` and awaits its exit (it is expected to refuse to start). */
async function runToExit(config, extraArgs = []) {
  const file = writeConfig(tempDir(), config);
  const proc = new Proc('mcpgw-refused', MCPGW, ['--config', file, ...extraArgs]);
  const exit = await proc.waitExit(30000);
  return { exit, proc, file };
}

const MAXLEN_CONFIG = {
  naming: { separator: '__', max_length: 16 },
  servers: [
    toolboxStdio({ name: 'tb' }), // every name fits in 16
    toolboxStdio({ name: 'exactly16', args: ['--tools', '3'] }), // exactly16__crash is 16: kept
    bankStdio(), // every bank name is longer than 16
  ],
};

test(
  'naming.max_length: longer names become prefix-hash of exactly max_length chars, route to their tools, and are stable across runs',
  withDiagnostics(async () => {
    const gw1 = await startGateway(MAXLEN_CONFIG, { label: 'mcpgw-run1' });
    const c1 = await connectHttp(gw1.url);
    const { tools } = await c1.listAllTools();
    const names = tools.map((t) => t.name);
    assert.equal(new Set(names).size, names.length, `duplicate names: ${names}`);
    for (const n of names) assert.ok(n.length <= 16, `${n} is longer than max_length 16`);

    // Short names are unchanged, a name of exactly max_length too.
    for (const n of ['tb__echo', 'tb__rpc_error', 'tb__garbage', 'exactly16__crash', 'exactly16__sleep', 'exactly16__gen_0', 'exactly16__echo']) {
      assert.ok(names.includes(n), `${n} missing from ${names}`);
    }
    // Longer ones are shortened: readable prefix, "-", 10 hex digits, exactly 16 chars.
    const longFull = [
      'exactly16__garbage',
      'exactly16__rpc_error',
      'bank__welcome_customer',
      'bank__list_accounts',
      'bank__get_account_balance',
      'bank__prepare_money_transfer',
      'bank__request_agent_handoff',
    ];
    for (const full of longFull) assert.ok(!names.includes(full), `${full} was not shortened`);
    const shortened = names.filter((n) => !n.startsWith('tb__') && !/^exactly16__/.test(n));
    assert.equal(shortened.length, longFull.length, `shortened: ${shortened}`);
    for (const n of shortened) {
      assert.equal(n.length, 16, n);
      assert.match(n, /^.{5}-[0-9a-f]{10}$/, n);
      assert.ok(['exact', 'bank_'].includes(n.slice(0, 5)), `${n} does not start with the full name's prefix`);
    }
    assert.equal(shortened.filter((n) => n.startsWith('bank_')).length, 5);

    // Shortened names keep the upstream definition: identify them by description and call them.
    const byDesc = (re) => {
      const hits = tools.filter((t) => re.test(t.description));
      assert.equal(hits.length, 1, `${re}: ${hits.map((t) => t.name)}`);
      return hits[0].name;
    };
    const listAccounts = byDesc(/^\[Proxied from bank\] Lists the customer's accounts/);
    const balance = byDesc(/^\[Proxied from bank\] Returns the current balance of one account/);
    const rpcError = byDesc(/^\[Proxied from exactly16\] Answers with a JSON-RPC error/);
    const garbage = byDesc(/^\[Proxied from exactly16\] Over stdio, writes a line/);
    assert.ok(shortened.includes(listAccounts) && shortened.includes(rpcError) && shortened.includes(garbage));

    const accounts = await c1.callTool(listAccounts);
    assert.deepEqual(accounts.structuredContent.accounts.map((a) => a.accountId), ['acc_checking_001', 'acc_savings_001', 'acc_credit_001']);
    const bal = await c1.callTool(balance, { accountId: 'acc_savings_001' });
    assert.deepEqual(bal.structuredContent, { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' });
    const rpcErr = await c1.request('tools/call', { name: rpcError, arguments: {} });
    assert.equal(rpcErr.error?.code, -32000, `${rpcError} did not reach toolbox rpc_error: ${JSON.stringify(rpcErr)}`);
    assert.equal(textOf(await c1.callTool(garbage)), 'ok');
    assert.equal(textOf(await c1.callTool('exactly16__gen_0')), 'gen_0');
    // The long name itself is not callable.
    assert.equal((await c1.request('tools/call', { name: 'bank__list_accounts', arguments: {} })).error?.code, -32602);

    // Same configuration, second gateway: the same names.
    const gw2 = await startGateway(MAXLEN_CONFIG, { label: 'mcpgw-run2' });
    const c2 = await connectHttp(gw2.url);
    assert.deepEqual(sorted((await c2.listAllTools()).tools.map((t) => t.name)), sorted(names));
    assert.deepEqual((await c2.callTool(balance, { accountId: 'acc_credit_001' })).structuredContent.balance, -432.1);
    await c1.close();
    await c2.close();

    // check --json names the upstream tool behind every shortened name.
    const check = new Proc('mcpgw-check', MCPGW, ['check', '--config', gw1.configPath, '--json']);
    assert.equal((await check.waitExit(30000)).code, 0, check.diagnostics());
    const report = JSON.parse(check.stdoutText);
    const upstreamOf = Object.fromEntries(report.tools.map((t) => [t.name, `${t.server}/${t.upstream_name}`]));
    assert.deepEqual(sorted(Object.keys(upstreamOf)), sorted(names));
    assert.equal(upstreamOf[listAccounts], 'bank/list_accounts');
    assert.equal(upstreamOf[balance], 'bank/get_account_balance');
    assert.equal(upstreamOf[rpcError], 'exactly16/rpc_error');
    assert.equal(upstreamOf.tb__echo, 'tb/echo');
  }),
);

test(
  'two servers exposing the same name: the gateway refuses to go on once they are connected (exit 2, both servers named); check exits 1 naming both',
  withDiagnostics(async () => {
    const config = { servers: [toolboxStdio({ name: 'alpha', prefix: false }), bankStdio(), toolboxStdio({ name: 'beta', prefix: false })] };
    const http = await runToExit(config);
    assert.equal(http.exit.code, 2, http.proc.diagnostics());
    const line = http.proc.stderrText.split('\n').find((l) => /alpha/.test(l) && /beta/.test(l));
    assert.ok(line, `no stderr line names both alpha and beta:\n${http.proc.stderrText}`);
    // It serves while upstreams connect; the clash shows once both are listed.
    assert.match(http.proc.stderrText, /start-up: every upstream tried once \(3 of 3 connected\)/);

    const stdio = startGatewayStdio(config, { label: 'mcpgw-stdio-collision' });
    const sexit = await stdio.proc.waitExit(30000);
    assert.equal(sexit.code, 2, stdio.proc.diagnostics());
    assert.ok(stdio.proc.stderrText.split('\n').some((l) => /alpha/.test(l) && /beta/.test(l)), stdio.proc.stderrText);
    assert.equal(stdio.proc.stdoutText, '');

    const check = new Proc('mcpgw-check-collision', MCPGW, ['check', '--config', http.file]);
    assert.equal((await check.waitExit(30000)).code, 1, check.diagnostics());
    assert.ok(check.stdoutText.split('\n').some((l) => /alpha/.test(l) && /beta/.test(l)), `check output does not name both:\n${check.stdoutText}`);
    assert.match(check.stdoutText, /invalid/);

    const checkJson = new Proc('mcpgw-check-collision-json', MCPGW, ['check', '--config', http.file, '--json']);
    assert.equal((await checkJson.waitExit(30000)).code, 1, checkJson.diagnostics());
    const report = JSON.parse(checkJson.stdoutText);
    assert.equal(report.valid, false);
    assert.ok(report.errors.some((e) => e.includes('alpha') && e.includes('beta')), JSON.stringify(report.errors));
  }),
);

test(
  'filters that keep one of two colliding tools out resolve the collision',
  withDiagnostics(async () => {
    const gw = await startGateway({
      servers: [
        toolboxStdio({ name: 'alpha', prefix: false }),
        toolboxStdio({ name: 'beta', prefix: false, args: ['--tools', '2'], filters: { include_tools: ['gen_*'] } }),
      ],
    });
    const c = await connectHttp(gw.url);
    const names = (await c.listAllTools()).tools.map((t) => t.name);
    assert.deepEqual(sorted(names), sorted(['add', 'big', 'crash', 'echo', 'fail', 'garbage', 'meta', 'pid', 'rpc_error', 'sleep', 'gen_0', 'gen_1']));
    assert.equal(textOf(await c.callTool('gen_1')), 'gen_1');
    assert.equal(textOf(await c.callTool('echo', { text: 'alpha' })), 'alpha');
    await c.close();
  }),
);

test(
  'names outside [A-Za-z0-9_.-]{1,128} / [A-Za-z0-9_-]{1,64} warn once with the fix; separator "__" does not warn',
  withDiagnostics(async () => {
    const servers = [bankStdio(), toolboxStdio({ args: ['--tools', '20'] })];
    const colon = await startGateway({ servers }, { label: 'mcpgw-colon', logLevel: 'info', waitUpstreams: true });
    const under = await startGateway({ naming: { separator: '__' }, servers }, { label: 'mcpgw-underscores', logLevel: 'info', waitUpstreams: true });
    const long = 'x'.repeat(60);
    const tooLong = await startGateway({ naming: { separator: '__' }, servers: [toolboxStdio({ name: long })] }, { label: 'mcpgw-long', logLevel: 'info', waitUpstreams: true });
    const capped = await startGateway({ naming: { separator: '__', max_length: 64 }, servers: [toolboxStdio({ name: long })] }, { label: 'mcpgw-capped', logLevel: 'info', waitUpstreams: true });

    // 35 names contain ":"; the warning is given once per kind, not per tool.
    const w = namingWarnings(colon.proc.stderrText);
    assert.ok(w.length >= 1 && w.length <= 2, `expected one warning (per kind), got ${w.length}:\n${w.join('\n')}`);
    assert.equal(new Set(w).size, w.length, 'a warning is repeated');
    assert.ok(w.some((l) => l.includes('naming.separator: "__"')), `no warning names the fix naming.separator: "__":\n${w.join('\n')}`);
    assert.ok(w.some((l) => l.includes('[A-Za-z0-9_.-]{1,128}') || l.includes('[A-Za-z0-9_-]{1,64}')), w.join('\n'));

    assert.deepEqual(namingWarnings(under.proc.stderrText), [], 'separator "__" still warns');

    // "x"*60 + "__echo" is 66 chars: inside the MCP recommendation, outside the 64-char client limit.
    const lw = namingWarnings(tooLong.proc.stderrText);
    assert.equal(lw.length, 1, lw.join('\n'));
    assert.match(lw[0], /64/);
    assert.deepEqual(namingWarnings(capped.proc.stderrText), [], 'max_length 64 still warns');
    const c = await connectHttp(capped.url);
    const names = (await c.listAllTools()).tools.map((t) => t.name);
    assert.ok(names.every((n) => /^[A-Za-z0-9_-]{1,64}$/.test(n)), names.join(' '));
    await c.close();
  }),
);

test(
  'filters and modes written with the full exposed name still apply when naming.max_length shortens it',
  withDiagnostics(async () => {
    // bank__prepare_money_transfer (28), bank__get_account_balance (25),
    // bank__request_agent_handoff (27) and bank__welcome_customer (22) are
    // longer than 20 and get shortened; bank__list_accounts (19) is not.
    // An operator writes filters with the names the tools have without the
    // limit (the hash suffix is not something to put in a config).
    const gw = await startGateway({
      naming: { separator: '__', max_length: 20 },
      filters: { exclude_tools: ['bank__prepare_money_transfer', 'bank__request_*'] },
      modes: { balance: { description: 'balances only', include_tools: ['bank__get_account_balance', 'bank__list_*'] } },
      servers: [bankStdio()],
    });
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    const descs = tools.map((t) => t.description.replace(/^\[Proxied from bank\] /, '').slice(0, 30));
    assert.equal(tools.length, 3, `exclude_tools by full name did not apply; listed: ${tools.map((t) => t.name)} (${descs.join(' | ')})`);
    const m = await connectHttp(`${gw.url}/balance`);
    const inMode = (await m.listAllTools()).tools;
    assert.equal(inMode.length, 2, `mode include_tools by full name: ${inMode.map((t) => t.name)}`);
    await c.close();
    await m.close();
  }),
);

test(
  'naming.max_length below 16 is refused at load (exit 2, naming the key)',
  withDiagnostics(async () => {
    const { exit, proc, file } = await runToExit({ naming: { max_length: 10 }, servers: [bankStdio()] });
    assert.equal(exit.code, 2, proc.diagnostics());
    const lines = proc.stderrText.split('\n').filter((l) => l.trim());
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.ok(lines[0].includes(`${file}:`) && lines[0].includes('max_length'), lines[0]);
  }),
);
