// Redaction (`redact:`) of what upstreams say besides a tool's direct
// answer, through the real binary and the secrets fixture: a task's status
// messages and its result fetched with tasks/result, the log message,
// progress message and elicitation an upstream sends a client during a
// call, completion/complete values, what a composite (plugin) tool's own
// upstream calls hand back to the plugin (under both isolations), and a cut
// stderr line (masked before it is cut). Under `action: refuse` a task's
// result and a completion are refused naming the detector, a plugin gets
// the refusal as its upstream call's result; what is not an answer
// (notifications, status messages) is masked.
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILD,
  SseParser,
  connectHttp,
  httpGet,
  newId,
  rpc,
  startGateway,
  tempDir,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { LONG_STDERR_AT, SECRETS, leaked, secretsServer } from './secrets-fixture.mjs';

const plugin = (name) => path.join(BUILD, 'plugins', `lib${name}.so`);
const DETECTORS = [...new Set(SECRETS.map((s) => s.detector))];
const pattern = { name: 'employee_id', regex: 'EMP-[0-9]{6}' };
const TASKS_CLIENT = { protocolVersion: '2025-11-25', capabilities: { elicitation: {} } };

/** Sends `method` with `params` and returns {message, text: every byte of the HTTP answer's body}. */
async function exchange(client, method, params) {
  const res = await rpc(client.url, { jsonrpc: '2.0', id: newId(), method, params }, client.opts());
  assert.ok(res.message, `no answer to ${method}: HTTP ${res.status} ${res.text}`);
  return { message: res.message, text: res.text };
}

async function metric(gw, name, labels) {
  return sample(parseMetrics((await httpGet(`${gw.base}/metrics`)).text), name, labels) ?? 0;
}

/**
 * Calls tool `name` with a progress token, answering each request the
 * gateway sends on the call's stream with `answer`; returns {messages,
 * text: every byte of the stream, result}.
 */
async function callAnswering(client, name, answer) {
  const id = newId();
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: { progressToken: 'p-1' } } };
  const res = await fetch(client.url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-session-id': client.session,
      'mcp-protocol-version': client.protocolVersion,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  });
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const parser = new SseParser();
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const messages = [];
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const chunk = dec.decode(value, { stream: true });
    text += chunk;
    for (const ev of parser.push(chunk)) {
      if (ev.data === undefined) continue;
      const m = JSON.parse(ev.data);
      messages.push(m);
      if (m.method && m.id !== undefined) await rpc(client.url, { jsonrpc: '2.0', id: m.id, result: answer }, client.opts());
      if (m.id === id && !m.method) {
        await reader.cancel().catch(() => {});
        return { messages, text, result: m.result };
      }
    }
  }
  throw new Error(`the call's stream ended without its answer: ${text}`);
}

describe('redact (mask): tasks, notifications, requests, completions', () => {
  let gw;
  let client;

  before(async () => {
    const dir = tempDir('mcpgw-redact-relayed-');
    gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        redact: { builtin: ['all'], patterns: [pattern], in: ['results', 'arguments'], action: 'mask' },
        servers: [secretsServer(path.join(dir, 'upstream.jsonl'))],
      },
      { dir, label: 'mcpgw-redact-relayed' },
    );
    client = await connectHttp(gw.url, TASKS_CLIENT);
  });

  after(async () => {
    await client?.close();
    await gw?.proc.stop();
  });

  test(
    "an upstream's task: its status messages, tasks/get, tasks/list and tasks/result are masked",
    withDiagnostics(async () => {
      const created = await exchange(client, 'tools/call', { name: 'sec:job', arguments: {}, task: {} });
      assert.deepEqual(leaked(created.text), [], created.text);
      const taskId = created.message.result.task?.taskId;
      assert.ok(taskId, created.text);

      const got = await exchange(client, 'tasks/get', { taskId });
      assert.deepEqual(leaked(got.text), [], got.text);
      assert.equal(got.message.result.statusMessage, 'done with [REDACTED:aws_access_key_id]', got.text);

      const listed = await exchange(client, 'tasks/list', {});
      assert.deepEqual(leaked(listed.text), [], listed.text);
      assert.ok(listed.message.result.tasks.some((t) => t.taskId === taskId), listed.text);

      const before = await metric(gw, 'mcpgw_redactions_total', { detector: 'private_key' });
      const result = await exchange(client, 'tasks/result', { taskId });
      assert.deepEqual(leaked(result.text), [], result.text);
      const r = result.message.result;
      assert.notEqual(r.isError, true, result.text);
      for (const d of DETECTORS) assert.ok(r.content[0].text.includes(`[REDACTED:${d}]`), `${d} not masked in ${r.content[0].text}`);
      for (const [i, s] of SECRETS.entries()) assert.ok(r.structuredContent.nested.list[i].includes(`[REDACTED:${s.detector}]`));
      assert.ok((await metric(gw, 'mcpgw_redactions_total', { detector: 'private_key' })) >= before + 2, 'tasks/result not counted');
    }),
  );

  test(
    "what an upstream sends the client during a call: its log message, its progress message, its elicitation's message",
    withDiagnostics(async () => {
      await client.result('logging/setLevel', { level: 'debug' });
      const counted = async () =>
        Promise.all(['gitlab_token', 'slack_token', 'stripe_key'].map((detector) => metric(gw, 'mcpgw_redactions_total', { detector })));
      const before = await counted();
      const { messages, text, result } = await callAnswering(client, 'sec:talk', { action: 'decline' });
      assert.deepEqual(leaked(text), [], text);
      const log = messages.find((m) => m.method === 'notifications/message');
      assert.ok(log, text);
      assert.equal(log.params.data.note, 'log [REDACTED:gitlab_token]');
      const progress = messages.find((m) => m.method === 'notifications/progress');
      assert.ok(progress, text);
      assert.equal(progress.params.message, 'progress [REDACTED:slack_token]');
      assert.equal(progress.params.progressToken, 'p-1');
      const elicit = messages.find((m) => m.method === 'elicitation/create');
      assert.ok(elicit, text);
      assert.equal(elicit.params.message, 'confirm [REDACTED:stripe_key]');
      assert.equal(result.content[0].text, 'talked: decline');
      const after = await counted();
      for (const [i, n] of after.entries()) assert.ok(n > before[i], `not counted: ${after} after ${before}`);
    }),
  );

  test(
    'completion/complete values are masked',
    withDiagnostics(async () => {
      const prompts = await client.result('prompts/list', {});
      const ref = { type: 'ref/prompt', name: prompts.prompts[0].name };
      const { message, text } = await exchange(client, 'completion/complete', { ref, argument: { name: 'x', value: 'g' } });
      assert.deepEqual(leaked(text), [], text);
      assert.deepEqual(message.result.completion.values, ['[REDACTED:github_token]', 'plain']);
    }),
  );
});

describe('redact (refuse): tasks, completions, notifications', () => {
  let gw;
  let client;

  before(async () => {
    const dir = tempDir('mcpgw-redact-relayed-refuse-');
    gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        redact: { builtin: ['all'], patterns: [pattern], action: 'refuse' },
        servers: [secretsServer(path.join(dir, 'upstream.jsonl'))],
      },
      { dir, label: 'mcpgw-redact-relayed-refuse' },
    );
    client = await connectHttp(gw.url, TASKS_CLIENT);
  });

  after(async () => {
    await client?.close();
    await gw?.proc.stop();
  });

  test(
    "tasks/result of an upstream's task holding a secret is refused naming the detectors; its status message is masked",
    withDiagnostics(async () => {
      const created = await exchange(client, 'tools/call', { name: 'sec:job', arguments: {}, task: {} });
      const taskId = created.message.result.task?.taskId;
      assert.ok(taskId, created.text);
      const got = await exchange(client, 'tasks/get', { taskId });
      assert.deepEqual(leaked(got.text), [], got.text);
      assert.equal(got.message.result.statusMessage, 'done with [REDACTED:aws_access_key_id]');
      const refusedBefore = await metric(gw, 'mcpgw_refused_total', { reason: 'redaction' });
      const result = await exchange(client, 'tasks/result', { taskId });
      assert.deepEqual(leaked(result.text), [], result.text);
      assert.equal(result.message.result.isError, true, result.text);
      assert.match(result.message.result.content[0].text, /^Refused by redaction: a secret in the tool's answer \(detector .*github_token/);
      assert.equal(await metric(gw, 'mcpgw_refused_total', { reason: 'redaction' }), refusedBefore + 1);
    }),
  );

  test(
    'a completion holding a secret is refused naming the detector',
    withDiagnostics(async () => {
      const prompts = await client.result('prompts/list', {});
      const ref = { type: 'ref/prompt', name: prompts.prompts[0].name };
      const { message, text } = await exchange(client, 'completion/complete', { ref, argument: { name: 'x', value: 'g' } });
      assert.deepEqual(leaked(text), [], text);
      assert.ok(message.error, text);
      assert.equal(message.error.message, 'Refused by redaction: a secret in the completion (detector github_token)');
    }),
  );

  test(
    'notifications and requests during a call are masked (there is no answer of theirs to refuse)',
    withDiagnostics(async () => {
      await client.result('logging/setLevel', { level: 'debug' });
      const { messages, text, result } = await callAnswering(client, 'sec:talk', { action: 'decline' });
      assert.deepEqual(leaked(text), [], text);
      assert.equal(messages.find((m) => m.method === 'notifications/message')?.params.data.note, 'log [REDACTED:gitlab_token]');
      assert.equal(messages.find((m) => m.method === 'elicitation/create')?.params.message, 'confirm [REDACTED:stripe_key]');
      assert.equal(result.content[0].text, 'talked: decline');
    }),
  );
});

const unreversed = (r) => [...r.structuredContent.reversed].reverse().join('');

for (const isolation of ['process', 'none']) {
  for (const action of ['mask', 'refuse']) {
    test(
      `a composite's own upstream call: the plugin sees its result ${action === 'mask' ? 'masked' : 'refused'} (isolation: ${isolation})`,
      withDiagnostics(async () => {
        const dir = tempDir('mcpgw-redact-plugin-');
        const gw = await startGateway(
          {
            welcome: { strategy: 'none' },
            redact: { builtin: ['all'], patterns: [pattern], action },
            servers: [secretsServer(path.join(dir, 'upstream.jsonl'))],
            plugins: [{ path: plugin('test_composites'), isolation, config: { server: 'sec' } }],
          },
          { dir, label: `mcpgw-redact-plugin-${isolation}-${action}` },
        );
        try {
          const client = await connectHttp(gw.url);
          const { message, text } = await exchange(client, 'tools/call', {
            name: 'reverse_relay',
            arguments: { server: 'sec', tool: 'leak', arguments: {} },
          });
          const r = message.result;
          assert.ok(r?.structuredContent, text);
          // Reversed, the plugin's answer passes the gateway's detectors on
          // the way out as the plugin made it: it holds what the plugin saw.
          const seen = unreversed(r);
          assert.deepEqual(leaked(seen), [], seen);
          if (action === 'mask') {
            assert.equal(r.structuredContent.isError, false);
            for (const d of DETECTORS) assert.ok(seen.includes(`[REDACTED:${d}]`), `${d} not masked in ${seen}`);
          } else {
            assert.equal(r.structuredContent.isError, true);
            assert.match(seen, /^Refused by redaction: a secret in the tool's answer \(detector /);
            assert.equal(await metric(gw, 'mcpgw_refused_total', { reason: 'redaction' }), 1);
          }
          assert.ok((await metric(gw, 'mcpgw_redactions_total', { detector: 'github_token' })) >= 2);
          await client.close();
        } finally {
          await gw.proc.stop();
        }
      }),
    );
  }
}

test(
  "a stderr line cut for the log: masked before it is cut, so no part of a secret across the cut is logged",
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-redact-stderr-');
    const gw = await startGateway(
      {
        welcome: { strategy: 'none' },
        redact: { builtin: ['all'] },
        servers: [secretsServer(path.join(dir, 'upstream.jsonl'), { env: { SECRETS_LONG_STDERR: '1' }, max_response_bytes: 8192 })],
      },
      { dir, label: 'mcpgw-redact-stderr' },
    );
    try {
      const line = await gw.proc.waitForLine('stderr', /upstream sec stderr: x+.*bytes, cut\)/);
      const shown = line.input;
      assert.ok(shown.includes(`${'x'.repeat(LONG_STDERR_AT - 1)} [REDACTED:`), shown);
      assert.ok(!shown.includes('ghp_'), shown);
      assert.ok(!gw.proc.stderrText.includes('ghp_16C7'), 'a prefix of the token reached the log');
    } finally {
      await gw.proc.stop();
    }
  }),
);
