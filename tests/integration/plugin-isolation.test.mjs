// Plugins in host processes of their own (isolation: process, the default):
// a deliberately bad C plugin (tests/plugins/misbehaving.c), built here
// against the installed <mcpgw/plugin.h> as a user would build one, crashes,
// aborts, exits, is killed, spins past timeout_ms and leaks past memory_mb.
// Each failure costs only its own call: it answers with an isError naming
// the plugin and the cause (the signal's name; "may have run" once it had
// called an upstream), while another client's calls to an upstream and to
// a good plugin (the example banking_composites, isolated too) succeed, and
// the bad plugin's next call is served by a new host. Also: output of a
// plugin never reaches a --stdio client's stream; a plugin that keeps
// failing at start is down (status, /readyz, its calls) until it starts
// again; max_concurrency queues calls; SIGHUP loads a rebuilt library
// under either isolation; `mcpgw call` runs one call without a client.
// memory_mb is enforced by a cgroup v2 group per host where the gateway's
// cgroup offers the memory controller, else by RLIMIT_AS: the test checks
// that what the gateway reports is what /proc shows of its host.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertRan, run } from './plugin-build.mjs';
import {
  BUILD,
  MCPGW,
  REPO,
  bankStdio,
  connectHttp,
  httpGet,
  pollUntil,
  requireBinaries,
  startGateway,
  startGatewayStdio,
  tempDir,
  textOf,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const EXAMPLE = path.join(BUILD, 'plugins', 'libbanking_composites.so');
// In an AddressSanitizer build (scripts/test runs this file on one), the
// hosts leave SEGV and abort to the kernel, so that they end by the same
// signals as in a plain build (ASan would report them and exit 1).
process.env.ASAN_OPTIONS = [process.env.ASAN_OPTIONS, 'handle_segv=0', 'handle_abort=0'].filter(Boolean).join(':');
let dir;
let include;

/** Builds misbehaving.c as `file` (name and version tag as given) against the installed headers. */
async function buildBad(file, { name = 'bad', tag = '1' } = {}) {
  const src = path.join(REPO, 'tests', 'plugins', 'misbehaving.c');
  const r = await run('cc', ['-shared', '-fPIC', '-O1', '-std=c11', '-D_DEFAULT_SOURCE', `-I${include}`,
    `-DPLUGIN_NAME="${name}"`, `-DPLUGIN_TAG="${tag}"`, '-o', file, src]);
  assertRan(r, `cc ${src}`);
  return file;
}

before(async () => {
  requireBinaries();
  dir = tempDir('mcpgw-isolation-');
  const prefix = path.join(dir, 'prefix');
  assertRan(await run('cmake', ['--install', BUILD, '--prefix', prefix]), 'cmake --install');
  include = path.join(prefix, 'include');
  assert.ok(existsSync(path.join(include, 'mcpgw', 'plugin.h')));
  assert.ok(existsSync(path.join(prefix, 'lib', 'mcpgw', 'mcpgw-plugin-host')), 'mcpgw-plugin-host is installed in lib/mcpgw');
});

/**
 * Whether the cgroup v2 group of process `pid` offers the memory controller
 * (read here from /proc and the cgroup files, apart from the gateway's
 * reading): null when the process is in no mounted cgroup v2 hierarchy.
 */
function cgroupOffersMemory(pid) {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
  if (!line) return null;
  const mount = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' '))
    .find((f) => f[f.indexOf('-') + 1] === 'cgroup2' && f[3] === '/');
  if (!mount) return null;
  const groupDir = path.join(mount[4], line.slice(3));
  return { dir: groupDir, memory: readFileSync(path.join(groupDir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory') };
}

/**
 * How memory_mb 256 is enforced on plugin `name`'s host, as the status page
 * says, checked against /proc: its group's memory.max (cgroup) or its
 * address-space limit (RLIMIT_AS); "none" only in a sanitizer build, its
 * host then unlimited. Returns what the hog tool's call is then expected
 * to give (none for "none": a gigabyte there takes an instrumented host
 * longer than the test's timeout_ms).
 */
async function checkMemoryLimit(gw, name) {
  const entry = JSON.parse((await httpGet(`${gw.base}/status.json`)).text).plugins.find((p) => p.name === name);
  const limit = entry.memory_limit;
  const offered = cgroupOffersMemory(gw.proc.pid);
  assert.equal((gw.proc.stderrText.match(new RegExp(`plugin ${name}: memory_mb 256 enforced by `, 'g')) || []).length, 1);
  assert.ok(gw.proc.stderrText.includes(`plugin ${name}: memory_mb 256 enforced by ${limit}`), limit);
  if (limit.startsWith('cgroup v2')) {
    assert.ok(offered?.memory, `cgroup used, so the gateway's group offers memory: ${JSON.stringify(offered)}`);
    const own = readFileSync(`/proc/${entry.pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::')).slice(3);
    assert.equal(path.basename(own), `mcpgw-plugin-host-${entry.pid}`);
    assert.equal(readFileSync(path.join(offered.dir, path.basename(own), 'memory.max'), 'utf8').trim(), String(256 << 20));
    return { mb: 1024, expected: /^plugin bad: tool hog failed: its host process was killed by signal SIGKILL \(Killed\): it ran out of memory \(memory_mb: 256, cgroup memory.max\)/ };
  }
  // Not cgroup: the reason is given, and is true of the gateway's group.
  if (offered && !offered.memory) assert.match(limit, /\(no cgroup v2: the memory controller is not available in /);
  if (!offered) assert.match(limit, /\(no cgroup v2: /);
  if (limit.startsWith('RLIMIT_AS')) {
    assert.match(readFileSync(`/proc/${entry.pid}/limits`, 'utf8'), new RegExp(`^Max address space +${256 << 20} +${256 << 20} +bytes`, 'm'));
    // Asks for 1 GiB, four times memory_mb: the limit stops it first, at
    // an allocation (so nothing need be touched).
    return { mb: 1024, touch: false, expected: /^plugin bad: tool hog failed: its host process was killed by signal SIGSEGV/ };
  }
  assert.match(limit, /^none: a sanitizer build cannot limit its address space/);
  assert.match(readFileSync(path.join(BUILD, 'CMakeCache.txt'), 'utf8'), /^MCPGW_SANITIZE:\w+=(address|thread)$/m);
  assert.match(readFileSync(`/proc/${entry.pid}/limits`, 'utf8'), /^Max address space +unlimited +unlimited +bytes/m);
  return {};
}

/** The other client's work: an upstream call and a good plugin's composite, both must succeed. */
async function othersSucceed(c) {
  const [bal, chained] = await Promise.all([
    c.callTool('bank:get_account_balance', { accountId: 'acc_checking_001' }),
    c.callTool('get_chained_info', {}),
  ]);
  assert.equal(bal.structuredContent.balance, 2543.17, JSON.stringify(bal));
  assert.ok(!chained.isError, JSON.stringify(chained));
  assert.equal(chained.structuredContent.source, 'bank:list_accounts');
}

test(
  'each failure of a bad plugin costs only its own call; other clients, upstreams and plugins go on; the next call gets a new host',
  { timeout: 240000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'libbad.so'));
    const gw = await startGateway(
      {
        servers: [bankStdio()],
        plugins: [
          { path: EXAMPLE, config: {} },
          { path: bad, config: {}, timeout_ms: 1500, memory_mb: 256 },
        ],
      },
      { label: 'mcpgw-isolation', logLevel: 'info' },
    );
    const mine = await connectHttp(gw.url);
    const other = await connectHttp(gw.url);
    const hog = await checkMemoryLimit(gw, 'bad');
    const cases = [
      ['crash', /^plugin bad: tool crash failed: its host process was killed by signal SIGSEGV/],
      ['abort', /^plugin bad: tool abort failed: its host process was killed by signal SIGABRT/],
      ['exit', /^plugin bad: tool exit failed: its host process exited with status 3/],
      ['kill', /^plugin bad: tool kill failed: its host process was killed by signal SIGKILL/],
      ['spin', /^plugin bad: tool spin failed: it ran past timeout_ms \(1500 ms\); its host process is replaced/],
      ...(hog.expected ? [['hog', hog.expected, { mb: hog.mb, touch: hog.touch ?? true }]] : []),
    ];
    for (const [tool, expected, args = {}] of cases) {
      const [r] = await Promise.all([mine.callTool(tool, args), othersSucceed(other)]);
      assert.equal(r.isError, true, `${tool}: ${JSON.stringify(r)}`);
      assert.match(textOf(r), expected, tool);
      assert.doesNotMatch(textOf(r), /may have run/, tool);
      // The plugin is served again, by a new host.
      const ok = await mine.callTool('ok', {});
      assert.equal(textOf(ok), 'fine', `after ${tool}: ${JSON.stringify(ok)}`);
      await othersSucceed(other);
    }

    // A call that had called an upstream before its host died may have run.
    const [r] = await Promise.all([mine.callTool('call_then_crash', {}), othersSucceed(other)]);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /^plugin bad: tool call_then_crash failed: its host process was killed by signal SIGSEGV.*; it had called server bank, so it may have run \(it is not run again\)$/);

    // The host functions across the boundary: principal, mode, log.
    const who = await mine.callTool('whoami', {});
    assert.equal(textOf(who), 'principal= mode=all');
    await gw.proc.waitForLine('stderr', /plugin bad: whoami was asked/, 10000);
    // The gateway never died, and logged each host's end.
    assert.equal(gw.proc.exitInfo, null);
    assert.match(gw.proc.stderrText, /plugin bad: its host process was killed by signal SIGSEGV \(Segmentation fault\); starting it again in \d+ ms/);
    await mine.close();
    await other.close();
    const exit = await gw.proc.stop();
    assert.deepEqual(exit, { code: 0, signal: null, killed: false });
    assert.match(gw.proc.stderrText, /plugin bad unloaded/);
  }),
);

test(
  'what a plugin prints goes to the gateway log, never into the --stdio client stream',
  { timeout: 120000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'libnoisy.so'), { name: 'noisy' });
    const { proc, client } = startGatewayStdio({ servers: [bankStdio()], plugins: [{ path: bad }] }, { logLevel: 'info', label: 'mcpgw-noisy' });
    await client.initialize();
    const r = await client.callTool('noisy', {});
    assert.equal(textOf(r), 'made noise');
    const bal = await client.callTool('bank:get_account_balance', { accountId: 'acc_checking_001' });
    assert.equal(bal.structuredContent.balance, 2543.17);
    await proc.waitForLine('stderr', /plugin noisy output: noise on stdout 39/, 10000);
    await proc.waitForLine('stderr', /plugin noisy output: noise on stderr 39/, 10000);
    assert.deepEqual(client.badLines, [], 'every line on the client stream is JSON-RPC');
    assert.ok(!client.messages.some((m) => m.id === 999), 'the plugin\'s printed JSON never reached the client');
    client.closeStdin();
    assert.equal((await proc.exited).code, 0);
  }),
);

test(
  'a plugin that keeps failing at start is down (status, /readyz, its calls) and comes back once it starts',
  { timeout: 120000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'libflaky.so'), { name: 'flaky' });
    const marker = path.join(dir, 'flaky-refuses');
    rmSync(marker, { force: true });
    const gw = await startGateway(
      { servers: [bankStdio()], plugins: [{ path: EXAMPLE }, { path: bad, config: { fail_init_if: marker } }] },
      { label: 'mcpgw-flaky', logLevel: 'info' },
    );
    const c = await connectHttp(gw.url);
    assert.equal((await httpGet(`${gw.base}/readyz`)).status, 200);
    writeFileSync(marker, 'x');
    const crashed = await c.callTool('crash', {});
    assert.match(textOf(crashed), /SIGSEGV/);
    const status = await pollUntil(async () => {
      const s = JSON.parse((await httpGet(`${gw.base}/status.json`)).text);
      const p = s.plugins.find((x) => x.name === 'flaky');
      return p && p.status.startsWith('down') ? p : null;
    }, { timeoutMs: 30000, what: 'plugin flaky reported down' });
    assert.match(status.status, /^down: plugin .*libflaky\.so \(flaky\): init failed: refusing to start: the marker file exists$/);
    const ready = await httpGet(`${gw.base}/readyz`);
    assert.equal(ready.status, 503);
    assert.ok(JSON.parse(ready.text).down.some((d) => d.plugin === 'flaky'), ready.text);
    const refused = await c.callTool('ok', {});
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /^plugin flaky is down: .*init failed: refusing to start/);
    await othersSucceed(c);
    assert.match(gw.proc.stderrText, /plugin flaky is down: /);

    rmSync(marker);
    await pollUntil(async () => textOf(await c.callTool('ok', {})) === 'fine', { timeoutMs: 30000, what: 'plugin flaky back' });
    assert.equal((await httpGet(`${gw.base}/readyz`)).status, 200);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'a plugin failing init is left out, the rest served; mcpgw check exits 1 naming it',
  { timeout: 120000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'librefuser.so'), { name: 'refuser' });
    const marker = path.join(dir, 'refuser-refuses');
    writeFileSync(marker, 'x');
    const cfgDir = tempDir('mcpgw-isolation-check-');
    const config = { servers: [bankStdio()], plugins: [{ path: EXAMPLE }, { path: bad, config: { fail_init_if: marker } }] };
    const configPath = writeConfig(cfgDir, { ...config, listen: { host: '127.0.0.1', port: 0 } });
    const check = await run(MCPGW, ['check', '--config', configPath]);
    assert.equal(check.code, 1, check.output);
    assert.match(check.output, /plugin .*librefuser\.so \(refuser\): init failed: refusing to start: the marker file exists/);

    const gw = await startGateway(config, { label: 'mcpgw-refuser', logLevel: 'info' });
    await gw.proc.waitForLine('stderr', /librefuser\.so \(refuser\): init failed: .*; serving without it/, 10000);
    const c = await connectHttp(gw.url);
    await othersSucceed(c);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'max_concurrency: a call waits for a running one to end',
  { timeout: 120000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'libgated.so'), { name: 'gated' });
    const gw = await startGateway({ servers: [bankStdio()], plugins: [{ path: bad, max_concurrency: 1 }] }, { label: 'mcpgw-gated', logLevel: 'info' });
    const c = await connectHttp(gw.url);
    const gate = path.join(dir, 'gate-open');
    rmSync(gate, { force: true });
    const order = [];
    const first = c.callTool('gate', { path: gate }).then((r) => order.push(['gate', textOf(r)]));
    // The plugin logs once the first call runs in it, holding the one slot.
    await gw.proc.waitForLine('stderr', /plugin gated: gate is waiting/, 20000);
    const second = c.callTool('ok', {}).then((r) => order.push(['ok', textOf(r)]));
    // The plugin blocks opening its FIFO until this writer comes.
    await writeFile(gate, 'open');
    await Promise.all([first, second]);
    assert.deepEqual(order, [['gate', 'opened'], ['ok', 'fine']]);
    await c.close();
    await gw.proc.stop();
  }),
);

for (const isolation of ['process', 'none']) {
  test(
    `SIGHUP loads a library rebuilt on disk (isolation: ${isolation})`,
    { timeout: 120000 },
    withDiagnostics(async () => {
      const lib = path.join(dir, `libreload-${isolation}.so`);
      await buildBad(lib, { name: 'reloaded', tag: '1' });
      const gw = await startGateway({ servers: [bankStdio()], plugins: [{ path: lib, isolation }] }, { label: `mcpgw-reload-${isolation}`, logLevel: 'info' });
      const c = await connectHttp(gw.url);
      assert.equal(textOf(await c.callTool('version', {})), '1');
      // Rebuilt as an installer does: a new file moved over the old one.
      const next = `${lib}.new`;
      await buildBad(next, { name: 'reloaded', tag: '2' });
      renameSync(next, lib);
      process.kill(gw.proc.pid, 'SIGHUP');
      await gw.proc.waitForLine('stderr', /plugin reloaded: .* changed on disk; loading it anew/, 20000);
      await pollUntil(async () => textOf(await c.callTool('version', {})) === '2', { what: 'the rebuilt library answering' });
      // Unchanged on disk: a second SIGHUP keeps it.
      process.kill(gw.proc.pid, 'SIGHUP');
      await pollUntil(() => (gw.proc.stderrText.match(/reloaded .*: \d+ upstreams kept/g) || []).length === 2, { what: 'the second reload' });
      assert.equal((gw.proc.stderrText.match(/changed on disk; loading it anew/g) || []).length, 1);
      assert.equal(textOf(await c.callTool('version', {})), '2');
      await c.close();
      await gw.proc.stop();
    }),
  );
}

test(
  'mcpgw call runs one call through the configured gateway: 0 for a result, 1 for an error result, 2 for a bad configuration',
  { timeout: 120000 },
  withDiagnostics(async () => {
    const bad = await buildBad(path.join(dir, 'libcalled.so'), { name: 'called' });
    const cfgDir = tempDir('mcpgw-call-');
    const configPath = writeConfig(cfgDir, { listen: { host: '127.0.0.1', port: 0 }, servers: [bankStdio()], plugins: [{ path: EXAMPLE }, { path: bad }] });
    const ok = await run(MCPGW, ['call', '--config', configPath, 'get_chained_info', '{}']);
    assert.equal(ok.code, 0, ok.output);
    assert.equal(JSON.parse(ok.stdout).structuredContent.source, 'bank:list_accounts');
    const who = await run(MCPGW, ['call', '--config', configPath, 'whoami', '--principal', 'alice']);
    assert.equal(who.code, 0, who.output);
    assert.equal(JSON.parse(who.stdout).content[0].text, 'principal=alice mode=all');
    const crashed = await run(MCPGW, ['call', '--config', configPath, 'crash']);
    assert.equal(crashed.code, 1, crashed.output);
    assert.equal(JSON.parse(crashed.stdout).isError, true);
    assert.match(JSON.parse(crashed.stdout).content[0].text, /SIGSEGV/);
    const unknown = await run(MCPGW, ['call', '--config', configPath, 'no_such_tool', '{}']);
    assert.equal(unknown.code, 1, unknown.output);
    const badArgs = await run(MCPGW, ['call', '--config', configPath, 'ok', '[1]']);
    assert.equal(badArgs.code, 2, badArgs.output);
    writeFileSync(path.join(cfgDir, 'broken.yaml'), 'servers: [{name: x}]\nnonsense: 1\n');
    const broken = await run(MCPGW, ['call', '--config', path.join(cfgDir, 'broken.yaml'), 'ok']);
    assert.equal(broken.code, 2, broken.output);
  }),
);
