// Configuration: invalid files are refused with exit code 2 and one line
// `FILE:LINE: KEY: ...`; `${VAR}` and `${VAR:-default}` are interpolated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BANK, MCPGW, Proc, TOOLBOX, requireBinaries, startGatewayStdio, tempDir, withDiagnostics, writeConfig } from './harness.mjs';

async function runInvalid(yaml) {
  requireBinaries(MCPGW);
  const dir = tempDir();
  const file = writeConfig(dir, yaml);
  const proc = new Proc('mcpgw-invalid', MCPGW, ['--config', file]);
  const exit = await proc.waitExit(10000);
  const lines = proc.stderrText.split('\n').filter((l) => l.trim() !== '');
  return { file, exit, lines, proc };
}

test(
  'an unknown key is refused: exit 2, one stderr line FILE:LINE: naming the key',
  withDiagnostics(async () => {
    const yaml = [
      'listen:', //               1
      '  host: 127.0.0.1', //     2
      '  port: 0', //             3
      '  bogus_key: 1', //        4
      'servers:', //              5
      '  - name: bank', //        6
      '    transport: stdio', //  7
      `    command: ${JSON.stringify(BANK)}`, // 8
      '',
    ].join('\n');
    const { file, exit, lines, proc } = await runInvalid(yaml);
    assert.equal(exit.code, 2, proc.diagnostics());
    assert.equal(lines.length, 1, `expected one stderr line, got:\n${lines.join('\n')}`);
    assert.ok(lines[0].includes(`${file}:4:`), `no "${file}:4:" in: ${lines[0]}`);
    assert.match(lines[0], /bogus_key/);
    assert.equal(proc.stdoutText, '');
  }),
);

test(
  'a misspelt key inside a server entry is refused with its line',
  withDiagnostics(async () => {
    const yaml = [
      'listen:', //                 1
      '  port: 0', //               2
      'servers:', //                3
      '  - name: bank', //          4
      '    transport: stdio', //    5
      `    command: ${JSON.stringify(BANK)}`, // 6
      '  - name: toolbox', //       7
      `    comand: ${JSON.stringify(TOOLBOX)}`, // 8
      '',
    ].join('\n');
    const { file, exit, lines, proc } = await runInvalid(yaml);
    assert.equal(exit.code, 2, proc.diagnostics());
    assert.equal(lines.length, 1, `expected one stderr line, got:\n${lines.join('\n')}`);
    assert.ok(lines[0].includes(`${file}:8:`), `no "${file}:8:" in: ${lines[0]}`);
    assert.match(lines[0], /comand/);
  }),
);

test(
  '${VAR} and ${VAR:-default} are interpolated in server args',
  withDiagnostics(async () => {
    requireBinaries();
    const unset = 'MCPGW_TEST_SURELY_UNSET_VARIABLE_9F3A';
    assert.equal(process.env[unset], undefined);
    const { proc, client } = startGatewayStdio(
      {
        servers: [
          { name: 'three', transport: 'stdio', command: TOOLBOX, args: ['--tools', '${MCPGW_TEST_TOOL_COUNT}'] },
          { name: 'two', transport: 'stdio', command: TOOLBOX, args: ['--tools', `\${${unset}:-2}`] },
        ],
      },
      { env: { MCPGW_TEST_TOOL_COUNT: '3' } },
    );
    await client.initialize();
    const names = (await client.listAllTools()).tools.map((t) => t.name);
    const gen = (prefix) => names.filter((n) => n.startsWith(`${prefix}:gen_`)).sort();
    assert.deepEqual(gen('three'), ['three:gen_0', 'three:gen_1', 'three:gen_2']);
    assert.deepEqual(gen('two'), ['two:gen_0', 'two:gen_1']);
    client.closeStdin();
    const exit = await proc.waitExit(10000);
    assert.equal(exit.code, 0);
  }),
);
