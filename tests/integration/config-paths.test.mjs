// Paths in the configuration are relative to the file's directory (docs/configuration.md,
// "General rules"): commands with a slash, `cwd` (default: the file's
// directory) and plugin paths. So `mcpgw --config /abs/gateway.yaml --stdio`
// behaves the same from any working directory, which is how MCP hosts
// (Claude Desktop) launch it: the README's snippet with the bundled example
// as it stands, run here from a directory that is not the repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import {
  BUILD,
  MCPGW,
  Proc,
  REPO,
  StdioClient,
  TOOLBOX,
  pidFromResult,
  requireBinaries,
  tempDir,
  textOf,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const EXAMPLE = path.join(REPO, 'gateway.yaml.example');
// The example names its binaries as ./build/...: the default build.
const EXAMPLE_BUILD = path.join(REPO, 'build');
const EXAMPLE_BINARIES = [
  ...['bank-server', 'rates-server', 'toolbox-server'].map((b) => path.join(EXAMPLE_BUILD, 'examples', b)),
  ...['banking_composites', 'deploy_flow'].map((p) => path.join(EXAMPLE_BUILD, 'plugins', `lib${p}.so`)),
];

/** `mcpgw --config FILE --stdio` started in `cwd`, initialised. */
async function stdioGateway(configPath, cwd) {
  const proc = new Proc('mcpgw-elsewhere', MCPGW, ['--config', configPath, '--stdio', '--log-level', 'debug'], { cwd });
  const client = new StdioClient(proc);
  await client.initialize();
  return { proc, client };
}

async function stop({ proc, client }) {
  client.closeStdin();
  const exit = await proc.waitExit(10000);
  assert.equal(exit.code, 0, proc.diagnostics());
}

test(
  'the README\'s stdio launch with gateway.yaml.example, from another working directory, serves the example tools',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, ...EXAMPLE_BINARIES);
    const elsewhere = tempDir('mcpgw-cwd-');
    const gw = await stdioGateway(EXAMPLE, elsewhere);
    // The bank's welcome tool ran: its upstream started.
    assert.match(gw.client.initResult.instructions, /Welcome to Example Bank!/);
    const names = (await gw.client.listAllTools()).tools.map((t) => t.name);
    for (const n of ['bank:list_accounts', 'bank:transfer_money', 'rates:get_exchange_rates', 'toolbox:echo', 'get_chained_info', 'account_overview', 'safe_transfer', 'deploy'])
      assert.ok(names.includes(n), `${n} missing from ${names.join(', ')}`);

    const accounts = await gw.client.callTool('bank:list_accounts');
    assert.ok(!accounts.isError, JSON.stringify(accounts));
    assert.match(textOf(accounts), /^You have 3 accounts:/);
    // A plugin (loaded by a relative path) reaching two upstreams (started by relative commands).
    const overview = await gw.client.callTool('account_overview', {});
    assert.ok(!overview.isError, JSON.stringify(overview));
    // The upstreams run in the file's directory, not in mcpgw's.
    const pid = pidFromResult(await gw.client.callTool('toolbox:pid'));
    assert.equal(readlinkSync(`/proc/${pid}/cwd`), REPO);
    await stop(gw);
  }),
);

test(
  'mcpgw check, from another working directory, shows the absolute paths the example resolves to',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, ...EXAMPLE_BINARIES);
    const proc = new Proc('mcpgw-check-elsewhere', MCPGW, ['check', '--config', EXAMPLE, '--json'], { cwd: tempDir('mcpgw-cwd-') });
    const exit = await proc.waitExit(30000);
    assert.equal(exit.code, 0, proc.diagnostics());
    const doc = JSON.parse(proc.stdoutText);
    assert.equal(doc.valid, true, JSON.stringify(doc.errors));
    assert.deepEqual(
      doc.servers.map((s) => [s.name, s.command, s.cwd]),
      ['bank', 'rates', 'toolbox'].map((n) => [n, path.join(EXAMPLE_BUILD, 'examples', `${n}-server`), REPO]),
    );
    assert.deepEqual(
      doc.plugins.map((p) => p.path),
      ['banking_composites', 'deploy_flow'].map((p) => path.join(EXAMPLE_BUILD, 'plugins', `lib${p}.so`)),
    );

    const text = new Proc('mcpgw-check-text', MCPGW, ['check', '--config', EXAMPLE], { cwd: tempDir('mcpgw-cwd-') });
    assert.equal((await text.waitExit(30000)).code, 0, text.diagnostics());
    assert.ok(
      text.stdoutText.includes(`    command: ${path.join(EXAMPLE_BUILD, 'examples', 'bank-server')} (in ${REPO})\n`),
      text.stdoutText,
    );
  }),
);

test(
  'a command, a cwd and a plugin path relative to the file, started from a third directory',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, TOOLBOX);
    const dir = tempDir('mcpgw-relative-');
    mkdirSync(path.join(dir, 'conf', 'bin'), { recursive: true });
    mkdirSync(path.join(dir, 'conf', 'lib'));
    mkdirSync(path.join(dir, 'work'));
    symlinkSync(TOOLBOX, path.join(dir, 'conf', 'bin', 'toolbox'));
    symlinkSync(path.join(BUILD, 'plugins', 'libdeploy_flow.so'), path.join(dir, 'conf', 'lib', 'libdeploy_flow.so'));
    const config = writeConfig(path.join(dir, 'conf'), {
      welcome: { strategy: 'none' },
      servers: [
        // The command is relative to the file even when cwd is set.
        { name: 'here', transport: 'stdio', command: './bin/toolbox', cwd: '../work' },
        { name: 'default', transport: 'stdio', command: 'bin/toolbox' },
      ],
      plugins: [{ path: './lib/libdeploy_flow.so', config: { server: 'here' } }],
    });
    const gw = await stdioGateway(config, tempDir('mcpgw-cwd-'));
    const names = (await gw.client.listAllTools()).tools.map((t) => t.name);
    for (const n of ['here:echo', 'default:echo', 'deploy']) assert.ok(names.includes(n), `${n} missing from ${names.join(', ')}`);
    const cwdOf = async (server) => readlinkSync(`/proc/${pidFromResult(await gw.client.callTool(`${server}:pid`))}/cwd`);
    assert.equal(await cwdOf('here'), path.join(dir, 'work'));
    assert.equal(await cwdOf('default'), path.join(dir, 'conf'));
    await stop(gw);
  }),
);
