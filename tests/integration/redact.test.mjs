// Redaction (`redact:`) through the real binary: an upstream
// (secrets-fixture.mjs) hands out a secret of every kind the built-in
// detectors know, and one an operator's pattern finds, in a tool's content
// text and structuredContent, an isError result, a JSON-RPC error, a
// resource's text, a prompt's messages and its own stderr (which the
// gateway logs). With `action: mask`, no raw secret is in any response
// byte, audit line, log line (stderr) or span (the OTLP collector), each is
// replaced by [REDACTED:<detector>], and the metrics count them by
// detector; arguments going upstream are masked (`in: arguments`), and with
// `in: [results]` only they reach the upstream as sent while the audit log
// and the logs still mask them.
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  connectHttp,
  httpGet,
  newId,
  pollUntil,
  readJsonLines,
  rpc,
  startGateway,
  tempDir,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { startCollector } from './otlp-collector.mjs';
import { SECRETS, leaked, secretsServer } from './secrets-fixture.mjs';

const DETECTORS = [...new Set(SECRETS.map((s) => s.detector))];

/** Sends `method` with `params` and returns {message, text: every byte of the HTTP answer's body}. */
async function exchange(client, method, params) {
  const res = await rpc(client.url, { jsonrpc: '2.0', id: newId(), method, params }, client.opts());
  assert.ok(res.message, `no answer to ${method}: HTTP ${res.status} ${res.text}`);
  return { message: res.message, text: res.text };
}

const pattern = { name: 'employee_id', regex: 'EMP-[0-9]{6}' };

describe('redact: mask, in results and arguments', () => {
  let collector;
  let gw;
  let client;
  let dir;
  let upstreamLog;
  let auditPath;

  before(async () => {
    collector = await startCollector();
    dir = tempDir('mcpgw-redact-');
    upstreamLog = path.join(dir, 'upstream.jsonl');
    auditPath = path.join(dir, 'audit.jsonl');
    gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        audit: { path: auditPath, arguments: 'full' },
        telemetry: { otlp: { endpoint: collector.url } },
        redact: { builtin: ['all'], patterns: [pattern], in: ['results', 'arguments'], action: 'mask' },
        servers: [secretsServer(upstreamLog)],
      },
      { dir, label: 'mcpgw-redact' },
    );
    client = await connectHttp(gw.url);
  });

  after(async () => {
    await client?.close();
    await gw?.proc.stop();
    await collector?.close();
  });

  test(
    'a tool result: content text and structuredContent masked, every detector named',
    withDiagnostics(async () => {
      const { message, text } = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: {} });
      assert.deepEqual(leaked(text), [], text);
      const result = message.result;
      assert.notEqual(result.isError, true);
      for (const d of DETECTORS) assert.ok(result.content[0].text.includes(`[REDACTED:${d}]`), `${d} not masked in ${result.content[0].text}`);
      assert.equal(result.structuredContent.nested.list.length, SECRETS.length);
      for (const [i, s] of SECRETS.entries())
        assert.ok(result.structuredContent.nested.list[i].includes(`[REDACTED:${s.detector}]`), result.structuredContent.nested.list[i]);
      // Text around a secret is kept.
      assert.ok(result.content[0].text.includes('aws_secret_access_key = [REDACTED:aws_secret_access_key]'));
      assert.ok(result.content[0].text.includes('db password=[REDACTED:secret_assignment]'));
    }),
  );

  test(
    'an isError result and a JSON-RPC error: masked',
    withDiagnostics(async () => {
      const isError = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: { where: 'is_error' } });
      assert.deepEqual(leaked(isError.text), [], isError.text);
      assert.equal(isError.message.result.isError, true);
      assert.ok(isError.message.result.content[0].text.includes('[REDACTED:github_token]'));
      const error = await exchange(client, 'tools/call', { name: 'sec:leak', arguments: { where: 'error' } });
      assert.deepEqual(leaked(error.text), [], error.text);
      const failed = error.message.error ?? error.message.result;
      assert.ok(JSON.stringify(failed).includes('[REDACTED:jwt]'), JSON.stringify(error.message));
    }),
  );

  test(
    'resource text and prompt messages: masked',
    withDiagnostics(async () => {
      const resources = await client.result('resources/list', {});
      const r = await exchange(client, 'resources/read', { uri: resources.resources[0].uri });
      assert.deepEqual(leaked(r.text), [], r.text);
      assert.ok(r.message.result.contents[0].text.includes('[REDACTED:private_key]'), r.text);
      const prompts = await client.result('prompts/list', {});
      const got = await exchange(client, 'prompts/get', { name: prompts.prompts[0].name });
      assert.deepEqual(leaked(got.text), [], got.text);
      assert.ok(got.message.result.messages[0].content.text.includes('[REDACTED:slack_webhook]'), got.text);
      assert.ok(got.message.result.description.includes('[REDACTED:aws_access_key_id]'), got.text);
    }),
  );

  test(
    'arguments going upstream are masked; the upstream never sees the secret',
    withDiagnostics(async () => {
      const args = { note: `use ${SECRETS[2].text}`, deep: { list: [SECRETS[0].text, 'plain'] }, count: 3 };
      const { message, text } = await exchange(client, 'tools/call', { name: 'sec:echo', arguments: args });
      assert.deepEqual(leaked(text), [], text);
      const got = JSON.parse(message.result.content[0].text.replace(/^got /, ''));
      assert.deepEqual(got, { note: 'use [REDACTED:github_token]', deep: { list: ['[REDACTED:aws_access_key_id]', 'plain'] }, count: 3 });
      const calls = readJsonLines(upstreamLog).filter((m) => m.method === 'tools/call' && m.params.name === 'echo');
      assert.equal(calls.length, 1);
      assert.deepEqual(leaked(JSON.stringify(calls)), []);
    }),
  );

  test(
    'a clean answer is relayed unchanged',
    withDiagnostics(async () => {
      const { message } = await exchange(client, 'tools/call', { name: 'sec:clean', arguments: {} });
      assert.deepEqual(message.result, { content: [{ type: 'text', text: 'nothing to hide here' }] });
    }),
  );

  test(
    'audit lines, log lines and spans never hold a secret; counts by detector in the audit line and the metrics',
    withDiagnostics(async () => {
      const lines = await pollUntil(
        () => {
          const l = readJsonLines(auditPath);
          return l.filter((a) => a.event === 'call').length >= 5 && l;
        },
        { what: 'the audit lines of the calls' },
      );
      const raw = lines.map((l) => JSON.stringify(l)).join('\n');
      assert.deepEqual(leaked(raw), [], raw);
      const leak = lines.find((a) => a.event === 'call' && a.upstream_tool === 'leak' && a.outcome === 'ok');
      assert.ok(leak, raw);
      assert.equal(leak.redactions.github_token, 4, JSON.stringify(leak)); // two tokens, in content text and structuredContent
      assert.equal(leak.redactions.employee_id, 2);
      const echo = lines.find((a) => a.upstream_tool === 'echo');
      assert.deepEqual(echo.redactions, { aws_access_key_id: 1, github_token: 1 });
      assert.deepEqual(echo.arguments.deep.list, ['[REDACTED:aws_access_key_id]', 'plain']);
      assert.equal(lines.find((a) => a.upstream_tool === 'clean').redactions, undefined);

      // The upstream's stderr is logged, masked.
      await gw.proc.waitForLine('stderr', /upstream sec stderr: handing out/);
      assert.deepEqual(leaked(gw.proc.stderrText), []);
      assert.ok(gw.proc.stderrText.includes('handing out [REDACTED:aws_access_key_id]'), 'the stderr line is not masked');

      const spans = await pollUntil(() => collector.spans.some((s) => s.status.message.includes('[REDACTED:')) && collector.spans, {
        what: 'the span of the failed call',
      });
      const everything = JSON.stringify(spans, (k, v) => (typeof v === 'bigint' ? String(v) : v));
      assert.deepEqual(leaked(everything), []);

      const metrics = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      for (const d of DETECTORS) assert.ok(sample(metrics, 'mcpgw_redactions_total', { detector: d }) > 0, `no count for ${d}`);
    }),
  );
});

describe('redact: in results only', () => {
  test(
    'arguments reach the upstream as sent, but the audit line and the logs still mask them',
    withDiagnostics(async () => {
      const dir = tempDir('mcpgw-redact-results-');
      const upstreamLog = path.join(dir, 'upstream.jsonl');
      const auditPath = path.join(dir, 'audit.jsonl');
      const gw = await startGateway(
        {
          welcome: { strategy: 'none' },
          audit: { path: auditPath, arguments: 'full' },
          redact: { in: ['results'] },
          servers: [secretsServer(upstreamLog)],
        },
        { dir, label: 'mcpgw-redact-results' },
      );
      try {
        const client = await connectHttp(gw.url);
        const { text } = await exchange(client, 'tools/call', { name: 'sec:echo', arguments: { key: SECRETS[0].text } });
        // The echo comes back as a result: masked on its way back.
        assert.deepEqual(leaked(text), [], text);
        const calls = readJsonLines(upstreamLog).filter((m) => m.method === 'tools/call');
        assert.equal(calls[0].params.arguments.key, SECRETS[0].text);
        const lines = await pollUntil(() => readJsonLines(auditPath).find((a) => a.upstream_tool === 'echo') && readJsonLines(auditPath), {
          what: 'the audit line',
        });
        const raw = JSON.stringify(lines);
        assert.deepEqual(leaked(raw), [], raw);
        assert.ok(raw.includes('[REDACTED:aws_access_key_id]'), raw);
        assert.deepEqual(leaked(gw.proc.stderrText), []);
        await client.close();
      } finally {
        await gw.proc.stop();
      }
    }),
  );
});
