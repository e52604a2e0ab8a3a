// The command line: common flags (--config, --log-level, --log-format) are
// taken before or after the `check` subcommand alike, and a usage error is
// one line on stderr with exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MCPGW, Proc, requireBinaries, tempDir, toolboxStdio, writeConfig } from './harness.mjs';

async function run(args) {
  requireBinaries();
  const proc = new Proc('mcpgw-cli', MCPGW, args);
  const exit = await proc.waitExit(20000);
  return { exit, stdout: proc.stdoutText, stderr: proc.stderrText };
}

function config() {
  return writeConfig(tempDir(), { servers: [toolboxStdio()] });
}

test('check takes the common flags after the subcommand', async () => {
  const file = config();
  const r = await run(['check', '--config', file, '--log-level', 'warn', '--log-format', 'json', '--json']);
  assert.equal(r.exit.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.ok(report.tools.some((t) => t.name === 'toolbox:echo'), r.stdout);
  // At warn, the info lines of connecting the upstream are not logged.
  assert.doesNotMatch(r.stderr, /"level":"info"/);
});

test('check takes the common flags before the subcommand', async () => {
  const file = config();
  const r = await run(['--log-level', 'error', '--config', file, 'check', '--json']);
  assert.equal(r.exit.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).tools.some((t) => t.name === 'toolbox:echo'));
});

for (const [what, args, pattern] of [
  ['an unknown flag', ['--config', 'x.yaml', '--frobnicate'], /--frobnicate/],
  ['an unknown subcommand argument', ['check', '--config', 'x.yaml', 'extra'], /extra/],
  ['a flag without its value', ['check', '--config'], /--config/],
  ['a bad --threads', ['--config', 'x.yaml', '--threads', 'many'], /threads/],
]) {
  test(`a usage error (${what}) is one line and exit 2`, async () => {
    const r = await run(args);
    assert.equal(r.exit.code, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^mcpgw: /);
    assert.match(lines[0], pattern);
    assert.equal(r.stdout, '');
  });
}

test('--help and --version still exit 0', async () => {
  const help = await run(['--help']);
  assert.equal(help.exit.code, 0);
  assert.match(help.stdout, /check/);
  const version = await run(['--version']);
  assert.equal(version.exit.code, 0);
  assert.match(version.stdout, /^mcpgw \d/);
});
