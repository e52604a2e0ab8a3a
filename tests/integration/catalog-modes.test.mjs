// Modes: named tool sets applied after the filters, selected by URL
// (/mcp/<mode>), by `--stdio --mode NAME`, or by default_mode. A tool hidden by
// the mode is not listed and calling it is -32602 like an unknown tool; an
// unknown mode is HTTP 404 listing the modes; auth.bearer_tokens[].modes
// restricts which modes a principal may use (403 on initialize).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HttpClient,
  MCPGW,
  Proc,
  bankStdio,
  connectHttp,
  newId,
  openGetStream,
  requireBinaries,
  rpc,
  startGateway,
  startGatewayStdio,
  tempDir,
  textOf,
  toolboxStdio,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const MODES_CONFIG = {
  // Global filter: bank:request_agent_handoff is gone in every mode, even one that includes it by name.
  filters: { exclude_tools: ['bank:request_agent_handoff'] },
  modes: {
    readonly: { description: 'Read-only tools', include_slices: ['read'] },
    ops: { description: 'Toolbox without crash, plus the handoff', include_tools: ['toolbox:*', 'bank:request_agent_handoff'], exclude_tools: ['toolbox:crash'] },
    money: { description: 'Money moves', include_slices: ['money'] },
  },
  servers: [bankStdio({ slices: { money: ['prepare_*'] } }), toolboxStdio()],
};

const ALL = [
  'bank:get_account_balance',
  'bank:list_accounts',
  'bank:prepare_money_transfer',
  'bank:welcome_customer',
  ...['add', 'big', 'crash', 'echo', 'fail', 'garbage', 'meta', 'pid', 'rpc_error', 'sleep'].map((n) => `toolbox:${n}`),
].sort();
const READONLY = ['bank:get_account_balance', 'bank:list_accounts', 'bank:welcome_customer', 'toolbox:meta', 'toolbox:pid'];
const OPS = ['add', 'big', 'echo', 'fail', 'garbage', 'meta', 'pid', 'rpc_error', 'sleep'].map((n) => `toolbox:${n}`);
const MONEY = ['bank:prepare_money_transfer'];

const sorted = (a) => [...a].sort();
const namesOf = (tools) => sorted(tools.map((t) => t.name));

let gw;
before(async () => {
  requireBinaries();
  gw = await startGateway({ ...MODES_CONFIG, default_mode: 'readonly' });
});

/** The JSON-RPC error of calling `name`, asserted to be the unknown-tool error. */
async function assertHidden(client, name) {
  const r = await client.request('tools/call', { name, arguments: {} });
  assert.equal(r.result, undefined, `${name} callable: ${JSON.stringify(r)}`);
  assert.equal(r.error?.code, -32602, `${name}: ${JSON.stringify(r)}`);
  const ref = await client.request('tools/call', { name: 'nope:nothing', arguments: {} });
  assert.equal(r.error.message, ref.error.message.replace('nope:nothing', name), 'a hidden tool is refused differently from an unknown one');
}

test(
  '/mcp/<mode>: each mode lists and allows only its tools; /mcp uses default_mode; hidden tools are -32602',
  withDiagnostics(async () => {
    const all = await connectHttp(`${gw.url}/all`);
    const readonly = await connectHttp(`${gw.url}/readonly`);
    const ops = await connectHttp(`${gw.url}/ops`);
    const money = await connectHttp(`${gw.url}/money`);
    const dflt = await connectHttp(gw.url);

    assert.deepEqual(namesOf((await all.listAllTools()).tools), ALL);
    assert.deepEqual(namesOf((await readonly.listAllTools()).tools), READONLY);
    assert.deepEqual(namesOf((await ops.listAllTools()).tools), OPS);
    assert.deepEqual(namesOf((await money.listAllTools()).tools), MONEY);
    assert.deepEqual(namesOf((await dflt.listAllTools()).tools), READONLY, 'default_mode: readonly');

    // Allowed calls reach the upstream.
    assert.equal((await readonly.callTool('bank:list_accounts')).structuredContent.accounts.length, 3);
    assert.equal(textOf(await ops.callTool('toolbox:echo', { text: 'ops' })), 'ops');
    assert.equal(textOf(await all.callTool('toolbox:echo', { text: 'all' })), 'all');
    const pmt = await money.callTool('bank:prepare_money_transfer', { fromAccountId: 'acc_savings_001', toAccountId: 'acc_credit_001', amount: 1 });
    assert.notEqual(pmt.isError, true, JSON.stringify(pmt));

    // Hidden by the mode: same error as an unknown tool.
    await assertHidden(readonly, 'toolbox:echo');
    await assertHidden(readonly, 'bank:prepare_money_transfer');
    await assertHidden(dflt, 'toolbox:echo');
    await assertHidden(ops, 'toolbox:crash');
    await assertHidden(ops, 'bank:list_accounts');
    await assertHidden(money, 'bank:list_accounts');
    // Filtered out before the mode: no mode brings it back.
    await assertHidden(ops, 'bank:request_agent_handoff');
    await assertHidden(all, 'bank:request_agent_handoff');

    // GET and DELETE work on the mode URL too.
    const stream = await openGetStream(readonly);
    assert.equal(stream.status, 200);
    stream.close();

    // A session belongs to the mode it was created in.
    const crossed = await rpc(`${gw.url}/all`, { jsonrpc: '2.0', id: newId(), method: 'tools/list', params: {} }, readonly.opts());
    assert.equal(crossed.status, 404, `a readonly session used on /mcp/all: HTTP ${crossed.status} ${crossed.text}`);
    for (const c of [all, ops, money, dflt]) await c.close();
    assert.ok([200, 202, 204].includes(await readonly.close()), 'DELETE on /mcp/readonly');
    const gone = await rpc(`${gw.url}/readonly`, { jsonrpc: '2.0', id: newId(), method: 'tools/list', params: {} }, readonly.opts());
    assert.equal(gone.status, 404);
  }),
);

test(
  'an unknown mode is HTTP 404 whose body lists every mode, all included',
  withDiagnostics(async () => {
    const res = await rpc(`${gw.url}/nosuchmode`, {
      jsonrpc: '2.0',
      id: newId(),
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.headers.get('mcp-session-id'), null);
    for (const m of ['all', 'readonly', 'ops', 'money']) assert.ok(res.text.includes(m), `mode ${m} not named in: ${res.text}`);
    assert.match(res.text, /nosuchmode/);
    const get = await fetch(`${gw.url}/nosuchmode`, { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 404);
    assert.match(await get.text(), /readonly/);
  }),
);

test(
  'mcpgw --stdio --mode NAME serves that mode; an unknown --mode is refused naming the modes',
  withDiagnostics(async () => {
    const ro = startGatewayStdio(MODES_CONFIG, { extraArgs: ['--mode', 'readonly'], label: 'mcpgw-stdio-readonly' });
    const ops = startGatewayStdio(MODES_CONFIG, { extraArgs: ['--mode', 'ops'], label: 'mcpgw-stdio-ops' });
    const plain = startGatewayStdio(MODES_CONFIG, { label: 'mcpgw-stdio-default' });
    const dflt = startGatewayStdio({ ...MODES_CONFIG, default_mode: 'money' }, { label: 'mcpgw-stdio-default-mode' });
    const all = startGatewayStdio({ ...MODES_CONFIG, default_mode: 'money' }, { extraArgs: ['--mode', 'all'], label: 'mcpgw-stdio-all' });
    await Promise.all([ro, ops, plain, dflt, all].map((g) => g.client.initialize()));

    assert.deepEqual(namesOf((await ro.client.listAllTools()).tools), READONLY);
    assert.deepEqual(namesOf((await ops.client.listAllTools()).tools), OPS);
    // No default_mode in this file: all.
    assert.deepEqual(namesOf((await plain.client.listAllTools()).tools), ALL);
    // default_mode applies to stdio without --mode; --mode all overrides it.
    assert.deepEqual(namesOf((await dflt.client.listAllTools()).tools), MONEY);
    assert.deepEqual(namesOf((await all.client.listAllTools()).tools), ALL);

    assert.equal((await ro.client.callTool('bank:get_account_balance', { accountId: 'acc_savings_001' })).structuredContent.balance, 15020.5);
    assert.equal(textOf(await ops.client.callTool('toolbox:echo', { text: 'stdio ops' })), 'stdio ops');
    for (const [client, name] of [
      [ro.client, 'toolbox:echo'],
      [ops.client, 'toolbox:crash'],
      [ops.client, 'bank:list_accounts'],
    ]) {
      const r = await client.request('tools/call', { name, arguments: {} });
      assert.equal(r.error?.code, -32602, `${name}: ${JSON.stringify(r)}`);
    }

    const bad = startGatewayStdio(MODES_CONFIG, { extraArgs: ['--mode', 'bogus'], label: 'mcpgw-stdio-bogus' });
    const exit = await bad.proc.waitExit(20000);
    assert.notEqual(exit.code, 0, bad.proc.diagnostics());
    assert.match(bad.proc.stderrText, /bogus/);
    assert.match(bad.proc.stderrText, /readonly/);
    assert.equal(bad.client.messages.filter((m) => m.result).length, 0);

    // --mode without --stdio is a usage error.
    const noStdio = new Proc('mcpgw-mode-http', MCPGW, ['--config', ro.configPath, '--mode', 'readonly']);
    assert.equal((await noStdio.waitExit()).code, 2, noStdio.diagnostics());
    for (const g of [ro, ops, plain, dflt, all]) g.client.closeStdin();
    for (const g of [ro, ops, plain, dflt, all]) assert.equal((await g.proc.waitExit()).code, 0, g.proc.diagnostics());
  }),
);

test(
  'auth.bearer_tokens[].modes: a principal may initialize only in its modes (403 otherwise)',
  withDiagnostics(async () => {
    const auth = await startGateway(
      {
        ...MODES_CONFIG,
        auth: {
          bearer_tokens: [
            { token: 'tok-reader', name: 'reader', modes: ['readonly'] },
            { token: 'tok-ops', name: 'operator', modes: ['ops', 'all'] },
            { token: 'tok-admin', name: 'admin' },
          ],
        },
      },
      { label: 'mcpgw-auth' },
    );
    const init = (url, token) =>
      rpc(
        url,
        { jsonrpc: '2.0', id: newId(), method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
        { headers: { authorization: `Bearer ${token}` } },
      );
    const cases = [
      ['tok-reader', '/readonly', 200],
      ['tok-reader', '', 403], // default mode all
      ['tok-reader', '/all', 403],
      ['tok-reader', '/ops', 403],
      ['tok-ops', '/ops', 200],
      ['tok-ops', '', 200],
      ['tok-ops', '/readonly', 403],
      ['tok-admin', '/readonly', 200],
      ['tok-admin', '/money', 200],
      ['tok-admin', '', 200],
    ];
    for (const [token, suffix, status] of cases) {
      const res = await init(`${auth.url}${suffix}`, token);
      assert.equal(res.status, status, `${token} on /mcp${suffix}: HTTP ${res.status} ${res.text}`);
      if (status === 200) assert.ok(res.headers.get('mcp-session-id'));
      else assert.equal(res.headers.get('mcp-session-id'), null);
    }
    // The permitted session works and is limited to its mode.
    const reader = new HttpClient(`${auth.url}/readonly`, { headers: { authorization: 'Bearer tok-reader' } });
    await reader.initialize();
    assert.deepEqual(namesOf((await reader.listAllTools()).tools), READONLY);
    await assertHidden(reader, 'toolbox:echo');
    // An unknown mode is still 404 (not 403) for an authenticated caller; no token is 401.
    assert.equal((await init(`${auth.url}/nosuchmode`, 'tok-reader')).status, 404);
    const anon = await rpc(`${auth.url}/readonly`, { jsonrpc: '2.0', id: newId(), method: 'ping' });
    assert.equal(anon.status, 401);
    await reader.close();
  }),
);

test(
  'invalid mode settings are refused at load: exit 2 and one line naming file, line and key',
  withDiagnostics(async () => {
    const bank = bankStdio();
    const cases = [
      [{ default_mode: 'nope', modes: { readonly: { include_slices: ['read'] } }, servers: [bank] }, /default_mode/],
      [{ modes: { all: { include_slices: ['read'] } }, servers: [bank] }, /modes\.all|"all"/],
      [{ modes: { readonly: { include_slices: ['read'] } }, auth: { bearer_tokens: [{ token: 't', name: 'n', modes: ['ro'] }] }, servers: [bank] }, /modes/],
      [{ modes: { readonly: { include_slices: ['read'], bogus_key: [] } }, servers: [bank] }, /bogus_key/],
    ];
    for (const [config, re] of cases) {
      const file = writeConfig(tempDir(), config);
      const proc = new Proc('mcpgw-invalid-mode', MCPGW, ['--config', file]);
      const exit = await proc.waitExit(10000);
      assert.equal(exit.code, 2, proc.diagnostics());
      const lines = proc.stderrText.split('\n').filter((l) => l.trim());
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.ok(lines[0].includes(`${file}:`), lines[0]);
      assert.match(lines[0], re);
    }
  }),
);
