// Redaction through the real binary, continued: `action: refuse` (a call
// whose answer holds a secret fails naming the detector, one whose
// arguments hold one never reaches the upstream, a resource read or prompt
// gets a JSON-RPC error; counted in mcpgw_refused_total{reason="redaction"}
// and audited), `mcpgw check` listing the detectors, a configuration
// mistake refused with its line, and SIGHUP turning redaction on.
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MCPGW,
  Proc,
  connectHttp,
  httpGet,
  newId,
  pollUntil,
  readJsonLines,
  requireBinaries,
  rpc,
  startGateway,
  tempDir,
  toYaml,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { SECRETS, leaked, secretsServer } from './secrets-fixture.mjs';

const BUILTIN = [
  'aws_access_key_id',
  'aws_secret_access_key',
  'github_token',
  'gitlab_token',
  'slack_token',
  'slack_webhook',
  'stripe_key',
  'google_api_key',
  'private_key',
  'jwt',
  'secret_assignment',
];

async function exchange(client, method, params) {
  const res = await rpc(client.url, { jsonrpc: '2.0', id: newId(), method, params }, client.opts());
  assert.ok(res.message, `no answer to ${method}: HTTP ${res.status} ${res.text}`);
  return { message: res.message, text: res.text };
}

describe('redact: action refuse', () => {
  let gw;
  let client;
  let upstreamLog;
  let auditPath;

  before(async () => {
    const dir = tempDir('mcpgw-redact-refuse-');
    upstreamLog = path.join(dir, 'upstream.jsonl');
    auditPath = path.join(dir, 'audit.jsonl');
    gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        audit: { path: auditPath, arguments: 'full' },
        redact: { builtin: ['all'], patterns: [{ name: 'employee_id', regex: 'EMP-[0-9]{6}' }], action: 'refuse' },
        servers: [secretsServer(upstreamLog)],
      },
      { dir, label: 'mcpgw-redact-refuse' },
    );
    client = await connectHttp(gw.url);
  });

  after(async () => {
    await client?.close();
    await gw?.proc.stop();
  });

  test(
    'a result holding a secret fails naming the detectors; a clean one passes',
    withDiagnostics(async () => {
      const { message, text } = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: {} });
      assert.deepEqual(leaked(text), [], text);
      assert.equal(message.result.isError, true);
      const why = message.result.content[0].text;
      assert.match(why, /^Refused by redaction: a secret in the tool's answer \(detector /);
      for (const d of [...BUILTIN, 'employee_id']) assert.ok(why.includes(d), `${d} not named: ${why}`);
      const error = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: { where: 'error' } });
      assert.deepEqual(leaked(error.text), [], error.text);
      assert.match(JSON.stringify(error.message), /Refused by redaction/);
      const clean = await client.callTool('sec:clean', {});
      assert.deepEqual(clean, { content: [{ type: 'text', text: 'nothing to hide here' }] });
    }),
  );

  test(
    'arguments holding a secret: refused, the upstream never called',
    withDiagnostics(async () => {
      const { message, text } = await exchange(client, 'tools/call', { name: 'sec:echo', arguments: { key: SECRETS[3].text } });
      assert.deepEqual(leaked(text), [], text);
      assert.equal(message.result.isError, true);
      assert.equal(message.result.content[0].text, "Refused by redaction: a secret in the call's arguments (detector github_token)");
      // A later call does reach it: the log is complete up to there.
      await client.callTool('sec:echo', { plain: 'yes' });
      const echoes = readJsonLines(upstreamLog).filter((m) => m.method === 'tools/call' && m.params.name === 'echo');
      assert.deepEqual(echoes.map((m) => m.params.arguments), [{ plain: 'yes' }]);
    }),
  );

  test(
    'a resource or prompt holding a secret: a JSON-RPC error naming the detector',
    withDiagnostics(async () => {
      const resources = await client.result('resources/list', {});
      const read = await exchange(client, 'resources/read', { uri: resources.resources[0].uri });
      assert.deepEqual(leaked(read.text), [], read.text);
      assert.equal(read.message.error.code, -32603);
      assert.match(read.message.error.message, /^Refused by redaction: a secret in the resource \(detector .*private_key/);
      const prompts = await client.result('prompts/list', {});
      const got = await exchange(client, 'prompts/get', { name: prompts.prompts[0].name });
      assert.deepEqual(leaked(got.text), [], got.text);
      assert.match(got.message.error.message, /^Refused by redaction: a secret in the prompt/);
    }),
  );

  test(
    'refusals counted and audited with the detectors, never the secrets',
    withDiagnostics(async () => {
      const metrics = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      assert.equal(sample(metrics, 'mcpgw_refused_total', { reason: 'redaction' }), 5);
      assert.ok(sample(metrics, 'mcpgw_redactions_total', { detector: 'employee_id' }) >= 2);
      const lines = await pollUntil(
        () => {
          const l = readJsonLines(auditPath);
          return l.filter((a) => a.reason === 'redaction' || a.reason?.startsWith('redaction:')).length >= 5 && l;
        },
        { what: 'five refusals in the audit log' },
      );
      const raw = JSON.stringify(lines);
      assert.deepEqual(leaked(raw), [], raw);
      const echo = lines.find((a) => a.upstream_tool === 'echo' && a.outcome === 'refused');
      assert.deepEqual(echo.redactions, { github_token: 1 });
      assert.equal(echo.reason, 'redaction');
      const read = lines.find((a) => a.event === 'refused' && a.tool.startsWith('resources/read'));
      assert.equal(read.outcome, 'refused');
      assert.ok(read.redactions.private_key >= 1, JSON.stringify(read));
      assert.deepEqual(leaked(gw.proc.stderrText), []);
    }),
  );
});

describe('redact: check, configuration errors, reload', () => {
  test(
    'mcpgw check lists the built-in detectors and the patterns, as text and JSON',
    withDiagnostics(async () => {
      requireBinaries(MCPGW);
      const dir = tempDir('mcpgw-redact-check-');
      const file = writeConfig(dir, {
        redact: { builtin: ['github_token', 'jwt'], patterns: [{ name: 'employee_id', regex: 'EMP-[0-9]{6}' }], action: 'refuse' },
        servers: [],
      });
      const text = new Proc('mcpgw-check', MCPGW, ['check', '--config', file]);
      assert.equal((await text.waitExit(20000)).code, 0, text.diagnostics());
      assert.match(text.stdoutText, /redaction: on \(refuse; in: results, arguments; audit, logs and spans always\)/);
      for (const name of BUILTIN) assert.match(text.stdoutText, new RegExp(`^\\s+(\\* )?${name}\\s`, 'm'), name);
      assert.match(text.stdoutText, /^\s+\* github_token\s/m);
      assert.match(text.stdoutText, /^\s+aws_access_key_id\s/m);
      assert.match(text.stdoutText, /^\s+\* employee_id\s+EMP-\[0-9\]\{6\}$/m);
      const json = new Proc('mcpgw-check-json', MCPGW, ['check', '--config', file, '--json']);
      assert.equal((await json.waitExit(20000)).code, 0, json.diagnostics());
      const report = JSON.parse(json.stdoutText).redaction;
      assert.equal(report.enabled, true);
      assert.equal(report.action, 'refuse');
      assert.deepEqual(report.in, ['results', 'arguments']);
      assert.deepEqual(report.detectors.filter((d) => d.kind === 'builtin').map((d) => d.name), BUILTIN);
      assert.deepEqual(report.detectors.filter((d) => d.active).map((d) => d.name), ['github_token', 'jwt', 'employee_id']);
      assert.deepEqual(report.detectors.at(-1), { name: 'employee_id', kind: 'pattern', regex: 'EMP-[0-9]{6}', active: true });
    }),
  );

  test(
    'a bad regex and an unknown built-in are refused: exit 2, FILE:LINE: key',
    withDiagnostics(async () => {
      requireBinaries(MCPGW);
      const dir = tempDir('mcpgw-redact-bad-');
      const bad = path.join(dir, 'bad-regex.yaml');
      writeFileSync(bad, ['redact:', '  patterns:', "    - {name: broken, regex: '(EMP-[0-9]+'}", ''].join('\n'));
      const a = new Proc('mcpgw-bad-regex', MCPGW, ['--config', bad]);
      assert.equal((await a.waitExit(10000)).code, 2, a.diagnostics());
      assert.ok(a.stderrText.includes(`${bad}:3: redact.patterns[0].regex: missing ): (EMP-[0-9]+`), a.stderrText);
      const unknown = path.join(dir, 'unknown.yaml');
      writeFileSync(unknown, ['redact:', '  builtin: [jwt, aws_keys]', ''].join('\n'));
      const b = new Proc('mcpgw-unknown-builtin', MCPGW, ['--config', unknown]);
      assert.equal((await b.waitExit(10000)).code, 2, b.diagnostics());
      assert.ok(b.stderrText.includes(`${unknown}:2: redact.builtin[1]: unknown detector "aws_keys" (built-in: all, ${BUILTIN.join(', ')})`), b.stderrText);
    }),
  );

  test(
    'SIGHUP turns redaction on, and a bad pattern on reload keeps the running configuration',
    withDiagnostics(async () => {
      const dir = tempDir('mcpgw-redact-reload-');
      const upstreamLog = path.join(dir, 'upstream.jsonl');
      const base = { welcome: { strategy: 'none' }, servers: [secretsServer(upstreamLog)] };
      const gw = await startGateway(base, { dir, label: 'mcpgw-redact-reload' });
      try {
        const client = await connectHttp(gw.url);
        const before = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: {} });
        assert.ok(leaked(before.text).length > 0, 'without redact: the secrets are relayed as they are');
        const listen = { host: '127.0.0.1', port: gw.port, path: '/mcp' };
        writeFileSync(gw.configPath, toYaml({ ...base, listen, redact: { builtin: ['all'] } }));
        const reloaded = gw.proc.waitForLine('stderr', /reloaded /, 20000);
        gw.proc.child.kill('SIGHUP');
        await reloaded;
        const masked = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: {} });
        assert.deepEqual(leaked(masked.text).filter((l) => !l.startsWith('employee_id')), [], masked.text);
        assert.ok(masked.text.includes('[REDACTED:github_token]'));

        const failed = gw.proc.waitForLine('stderr', /redact\.patterns\[0\]\.regex/, 20000);
        writeFileSync(gw.configPath, toYaml({ ...base, listen, redact: { patterns: [{ name: 'x', regex: '[' }] } }));
        gw.proc.child.kill('SIGHUP');
        await failed;
        const still = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: {} });
        assert.ok(still.text.includes('[REDACTED:github_token]'), still.text);
        await client.close();
      } finally {
        await gw.proc.stop();
      }
    }),
  );
});
