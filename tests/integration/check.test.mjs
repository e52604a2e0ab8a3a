// `mcpgw check --config F [--json]`: validates, connects every upstream and
// prints the catalog; exit 0 when everything is fine, 1 when an upstream
// cannot be reached (and says which).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BANK,
  MCPGW,
  Proc,
  TOOLBOX,
  bankStdio,
  closedPort,
  directStdio,
  httpServer,
  requireBinaries,
  tempDir,
  toolboxStdio,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

async function runCheck(config, extra = []) {
  requireBinaries();
  const file = writeConfig(tempDir(), config);
  const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, ...extra]);
  const exit = await proc.waitExit(20000);
  return { file, exit, stdout: proc.stdoutText, stderr: proc.stderrText, proc };
}

let upstreamNames; // {bank: [...], toolbox: [...]} as the upstreams list them
async function referenceNames() {
  if (!upstreamNames) {
    upstreamNames = {};
    for (const [name, bin] of [['bank', BANK], ['toolbox', TOOLBOX]]) {
      const c = await directStdio(bin);
      upstreamNames[name] = (await c.listAllTools()).tools.map((t) => t.name);
      c.closeStdin();
      await c.proc.waitExit();
    }
  }
  return upstreamNames;
}

test(
  'a valid config: exit 0 and every tool of both servers printed with its server',
  withDiagnostics(async () => {
    const ref = await referenceNames();
    const { exit, stdout } = await runCheck({ servers: [bankStdio(), toolboxStdio()] });
    assert.deepEqual(exit, { code: 0, signal: null }, stdout);
    for (const [server, names] of Object.entries(ref)) {
      assert.ok(names.length > 0);
      for (const n of names) {
        const line = stdout.split('\n').find((l) => l.trim().split(/\s+/)[0] === `${server}:${n}`);
        assert.ok(line, `${server}:${n} not printed:\n${stdout}`);
        assert.ok(line.trim().split(/\s+/).includes(server), `server ${server} not on the line: ${line}`);
      }
    }
  }),
);

test(
  '--json: parses, lists every tool with name and server, valid: true',
  withDiagnostics(async () => {
    const ref = await referenceNames();
    const { exit, stdout } = await runCheck({ servers: [bankStdio(), toolboxStdio()] }, ['--json']);
    assert.equal(exit.code, 0, stdout);
    let doc;
    assert.doesNotThrow(() => {
      doc = JSON.parse(stdout);
    }, `stdout is not one JSON document:\n${stdout}`);
    assert.equal(doc.valid, true);
    assert.ok(Array.isArray(doc.tools), JSON.stringify(doc));
    const got = doc.tools.map((t) => `${t.server} ${t.name}`).sort();
    const want = [...ref.bank.map((n) => `bank bank:${n}`), ...ref.toolbox.map((n) => `toolbox toolbox:${n}`)].sort();
    assert.deepEqual(got, want);
    for (const t of doc.tools) {
      assert.equal(typeof t.name, 'string');
      assert.equal(typeof t.server, 'string');
    }
  }),
);

test(
  'an unreachable HTTP upstream: exit 1 and the output names it; --json says valid: false',
  withDiagnostics(async () => {
    const port = await closedPort();
    const config = { servers: [bankStdio(), httpServer('ghost', `http://127.0.0.1:${port}/mcp`, { timeout_ms: 2000 })] };
    const { exit, stdout, stderr } = await runCheck(config);
    assert.deepEqual(exit, { code: 1, signal: null }, `${stdout}\n${stderr}`);
    // Reported after one try of each upstream: ghost refused, not waited on.
    assert.match(stderr, /start-up: every upstream tried once \(1 of 2 connected\)/);
    assert.doesNotMatch(stdout, /timed out/);
    const problem = stdout.split('\n').find((l) => /ghost/.test(l) && /not connected|cannot connect|unreachable|refused/i.test(l));
    assert.ok(problem, `no line naming ghost as unreachable:\n${stdout}`);
    // The reachable server's tools are still listed.
    assert.match(stdout, /bank:list_accounts/);

    const j = await runCheck(config, ['--json']);
    assert.equal(j.exit.code, 1);
    const doc = JSON.parse(j.stdout);
    assert.equal(doc.valid, false);
    assert.match(JSON.stringify(doc), /ghost/);
    assert.ok(doc.tools.some((t) => t.name === 'bank:list_accounts' && t.server === 'bank'));
    assert.ok(!doc.tools.some((t) => t.server === 'ghost'));
  }),
);

test(
  'an invalid file: non-zero exit and a FILE:LINE: KEY message',
  withDiagnostics(async () => {
    const yaml = ['servers:', '  - name: bank', `    command: ${JSON.stringify(BANK)}`, '    tiemout_ms: 5', ''].join('\n');
    const { file, exit, stdout, stderr } = await runCheck(yaml);
    assert.notEqual(exit.code, 0);
    assert.ok([1, 2].includes(exit.code), JSON.stringify(exit));
    assert.ok(`${stdout}\n${stderr}`.includes(`${file}:4:`), `${stdout}\n${stderr}`);
    assert.match(`${stdout}\n${stderr}`, /tiemout_ms/);
  }),
);
