// Tasks the gateway makes (`tasks.gateway: true`): every tool without task
// support of its own is listed with taskSupport "optional" and a
// task-augmented call of it runs in the gateway, for clients of both
// generations, with the example servers (toolbox, bank) as upstreams:
//   - 2025-11-25 (the SDK v1 task API): CreateTaskResult at once, the
//     call's question (an elicitation) on tasks/result, tied to the task;
//   - 2026-07-28 (raw requests): server-directed tasks for a client that
//     declares the extension, questions as inputRequests answered by
//     tasks/update, results inlined in tasks/get;
//   - cancellation reaches the upstream call; the audit log and metrics
//     count task calls like any call;
//   - limits: tasks.max_per_principal (-32000, the upstream not called),
//     tasks.max_result_bytes (the task fails, naming the limit);
//   - bad input: unknown, forged, expired and another principal's ids, a
//     cancel of a finished task, the methods of the other generation,
//     a client without the extension, a wrong Mcp-Name: each gets the
//     spec's error, and the tasks stay as they were.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  BANK,
  TOOLBOX,
  httpGet,
  pollUntil,
  readJsonLines,
  requireBinaries,
  startGateway,
  tempDir,
  withDiagnostics,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import {
  EXPIRED,
  NOT_FOUND,
  RELATED_TASK,
  assertGatewayId,
  assertRejects,
  modernClient,
  sdkClient,
  streamTool,
  terminal,
} from '../interop/tasks-common.mjs';

const TRANSFER = { fromAccountId: 'acc_savings_001', toAccountId: 'acc_credit_001', amount: 5 };
const confirm = async () => ({ action: 'accept', content: { confirm: true } });

let gw;
let plain;
let limited;
let auditFile;
const alice = { Authorization: 'Bearer tok-alice' };
const bob = { Authorization: 'Bearer tok-bob' };

before(async () => {
  requireBinaries(BANK, TOOLBOX);
  const dir = tempDir('mcpgw-tasks-');
  auditFile = path.join(dir, 'audit.jsonl');
  const servers = [
    { name: 'toolbox', transport: 'stdio', command: TOOLBOX },
    { name: 'bank', transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money'] },
  ];
  const auth = { bearer_tokens: [{ token: 'tok-alice', name: 'alice' }, { token: 'tok-bob', name: 'bob' }] };
  gw = await startGateway({ auth, audit: { path: auditFile }, tasks: { gateway: true }, servers }, { dir });
  plain = await startGateway({ servers });
  limited = await startGateway({ auth, tasks: { gateway: true, max_per_principal: 4, max_result_bytes: 2000 }, servers });
});

after(async () => {
  for (const g of [gw, plain, limited]) await g?.proc.stop();
});

/** Gateway `g`'s metric `name` with labels `want`, summed. */
async function metric(name, want, g = gw) {
  const res = await httpGet(`${g.base}/metrics`);
  return sample(parseMetrics(res.text), name, want);
}

describe('listing', () => {
  test(
    'with tasks.gateway every tool is listed as one that may run as a task; without it, nothing changes',
    withDiagnostics(async () => {
      const on = await sdkClient(gw.url, { token: 'tok-alice' });
      const off = await sdkClient(plain.url);
      try {
        const { tools } = await on.client.listTools();
        for (const t of tools) assert.deepEqual(t.execution, { taskSupport: 'optional' }, t.name);
        assert.ok(tools.some((t) => t.name === 'bank:transfer_money'));
        const offTools = (await off.client.listTools()).tools;
        assert.ok(offTools.every((t) => t.execution === undefined));
        // A tool that runs no task cannot be asked to (MCP: -32601), and
        // the refusal is counted like any call that does not run.
        await assertRejects(
          off.client.request({ method: 'tools/call', params: { name: 'toolbox:echo', arguments: { text: 'x' }, task: {} } }, CreateTaskResultSchema),
          -32601,
          'Method not found: tool toolbox:echo cannot be called as a task (its execution.taskSupport is forbidden)',
        );
        assert.equal(await metric('mcpgw_refused_total', { reason: 'task_forbidden' }, plain), 1);
      } finally {
        await on.client.close();
        await off.client.close();
      }
    }),
  );
});

describe('capabilities', () => {
  test(
    'tasks are declared when the gateway makes them (or an upstream runs some), in the form of each era; otherwise not at all',
    withDiagnostics(async () => {
      const on = await sdkClient(gw.url, { token: 'tok-alice' });
      const off = await sdkClient(plain.url);
      try {
        const caps = on.client.getServerCapabilities();
        assert.deepEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
        assert.equal(caps.extensions?.['io.modelcontextprotocol/tasks'], undefined);
        // The example servers run no tasks: nothing to declare.
        const offCaps = off.client.getServerCapabilities();
        assert.equal(offCaps.tasks, undefined);
        assert.equal(offCaps.extensions?.['io.modelcontextprotocol/tasks'], undefined);
      } finally {
        await on.client.close();
        await off.client.close();
      }
      const modern = await modernClient(gw.url, { headers: alice }).result('server/discover', {});
      assert.deepEqual(modern.capabilities.extensions['io.modelcontextprotocol/tasks'], {});
      assert.equal(modern.capabilities.tasks, undefined);
      const modernOff = await modernClient(plain.url).result('server/discover', {});
      assert.equal(modernOff.capabilities.tasks, undefined);
      assert.equal(modernOff.capabilities.extensions?.['io.modelcontextprotocol/tasks'], undefined);
    }),
  );
});

describe('a 2025-11-25 client', () => {
  test(
    'the call runs in the gateway: its question comes on tasks/result, tied to the task; the result and status follow',
    withDiagnostics(async () => {
      const { client, elicitations, statuses } = await sdkClient(gw.url, { token: 'tok-alice', elicit: confirm });
      try {
        await client.listTools();
        const sleep = await streamTool(client, { name: 'toolbox:sleep', arguments: { ms: 200 } });
        const made = sleep.find((m) => m.type === 'taskCreated').task;
        assertGatewayId(made.taskId);
        assert.equal(sleep.at(-1).type, 'result');
        assert.equal(sleep.at(-1).result._meta[RELATED_TASK].taskId, made.taskId);

        const transfer = await streamTool(client, { name: 'bank:transfer_money', arguments: TRANSFER });
        const id = transfer.find((m) => m.type === 'taskCreated').task.taskId;
        assert.ok(transfer.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required'), JSON.stringify(transfer));
        const result = transfer.at(-1);
        assert.equal(result.type, 'result', JSON.stringify(result));
        assert.match(result.result.content[0].text, /^Transfer trf_\d+ completed: 5\.00 USD/);
        assert.equal(elicitations.length, 1);
        assert.equal(elicitations[0]._meta[RELATED_TASK].taskId, id);
        assert.match(elicitations[0].message, /^Transfer 5\.00 USD from High Yield Savings/);
        // Status changes reach the session that made the task.
        await pollUntil(() => statuses.some((s) => s.taskId === id && s.status === 'input_required'), { what: 'input_required' });
        await pollUntil(() => statuses.some((s) => s.taskId === id && s.status === 'completed'), { what: 'completed' });
        // The calls are audited like any call, with their principal.
        const lines = await pollUntil(() => {
          const l = readJsonLines(auditFile).filter((x) => x.event === 'call' && x.tool === 'bank:transfer_money');
          return l.length ? l : false;
        }, { what: 'the audit line of the task call' });
        assert.equal(lines[0].principal, 'alice');
        assert.equal(lines[0].outcome, 'ok');
        const listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
        for (const t of [made.taskId, id]) assert.ok(listed.includes(t), `${t} not listed: ${listed}`);
      } finally {
        await client.close();
      }
    }),
  );

  test(
    'tasks/cancel cancels the upstream call; a second cancel is refused with -32602',
    withDiagnostics(async () => {
      const { client } = await sdkClient(gw.url, { token: 'tok-alice' });
      try {
        const before = await metric('mcpgw_tool_calls_total', { server: 'toolbox', tool: 'sleep', outcome: 'cancelled' });
        const created = await client.request(
          { method: 'tools/call', params: { name: 'toolbox:sleep', arguments: { ms: 30000 }, task: {} } },
          CreateTaskResultSchema,
        );
        await pollUntil(async () => (await metric('mcpgw_tool_calls_in_flight', { server: 'toolbox' })) >= 1, { what: 'the call upstream' });
        const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
        assert.equal(cancelled.status, 'cancelled');
        await pollUntil(
          async () => (await metric('mcpgw_tool_calls_total', { server: 'toolbox', tool: 'sleep', outcome: 'cancelled' })) === before + 1,
          { what: 'the upstream call cancelled' },
        );
        assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'cancelled');
        await assertRejects(
          client.experimental.tasks.cancelTask(created.task.taskId),
          -32602,
          'Cannot cancel task in terminal status: cancelled',
        );
      } finally {
        await client.close();
      }
    }),
  );
});

describe('a 2026-07-28 client', () => {
  test(
    'declaring the extension, it gets a task; its question is an inputRequest answered by tasks/update',
    withDiagnostics(async () => {
      const c = modernClient(gw.url, { headers: alice });
      const created = await c.result('tools/call', { name: 'bank:transfer_money', arguments: TRANSFER });
      assert.equal(created.resultType, 'task');
      assertGatewayId(created.taskId);
      assert.equal(created.ttlMs, 3600000);
      assert.equal(created.pollIntervalMs, 1000);
      for (const legacy of ['task', 'ttl', 'pollInterval', 'requestState']) assert.equal(created[legacy], undefined, legacy);
      const waiting = await c.until(created.taskId, (t) => t.status === 'input_required', 'input_required');
      const [key, ...more] = Object.keys(waiting.inputRequests);
      assert.deepEqual(more, []);
      assert.equal(waiting.inputRequests[key].method, 'elicitation/create');
      assert.equal(waiting.resultType, 'complete');
      const ack = await c.result('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { confirm: true } } } });
      assert.deepEqual(ack, { resultType: 'complete' });
      const done = await c.until(created.taskId, terminal, 'the end');
      assert.equal(done.status, 'completed');
      assert.match(done.result.content[0].text, /^Transfer trf_\d+ completed/);
      assert.equal(done.result._meta?.[RELATED_TASK], undefined);
    }),
  );

  test(
    'a tool error is completed with isError; cancel acknowledges, also a second time',
    withDiagnostics(async () => {
      const c = modernClient(gw.url, { headers: alice });
      const failing = await c.result('tools/call', { name: 'toolbox:fail', arguments: { message: 'nope' } });
      const failed = await c.until(failing.taskId, terminal);
      assert.equal(failed.status, 'completed');
      assert.equal(failed.result.isError, true);

      const long = await c.result('tools/call', { name: 'toolbox:sleep', arguments: { ms: 30000 } });
      assert.deepEqual(await c.result('tasks/cancel', { taskId: long.taskId }), { resultType: 'complete' });
      assert.equal((await c.until(long.taskId, terminal)).status, 'cancelled');
      assert.deepEqual(await c.result('tasks/cancel', { taskId: long.taskId }), { resultType: 'complete' });
    }),
  );

  test(
    'without the extension the call is an ordinary one (a `task` param means nothing) and tasks/* need it (-32021)',
    withDiagnostics(async () => {
      const c = modernClient(gw.url, { headers: alice, caps: {} });
      const r = await c.result('tools/call', { name: 'toolbox:echo', arguments: { text: 'sync' }, task: { ttl: 60000 } });
      assert.equal(r.resultType, 'complete');
      assert.equal(r.taskId, undefined);
      for (const [method, params] of [['tasks/get', { taskId: 'x' }], ['tasks/update', { taskId: 'x', inputResponses: {} }], ['tasks/cancel', { taskId: 'x' }]]) {
        const res = await c.send(method, params);
        assert.equal(res.message.error?.code, -32021, `${method}: ${JSON.stringify(res)}`);
        assert.deepEqual(res.message.error.data, { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
      }
    }),
  );
});

describe('limits', () => {
  test(
    'tasks.max_per_principal: past it -32000 names the limit and the upstream is not called; others are not affected',
    withDiagnostics(async () => {
      const c = modernClient(limited.url, { headers: bob });
      const made = [];
      // Four long calls fill bob's quota.
      for (let i = 0; i < 4; i++) made.push(await c.result('tools/call', { name: 'toolbox:sleep', arguments: { ms: 30000 } }));
      const inFlight = () => metric('mcpgw_tool_calls_in_flight', { server: 'toolbox' }, limited);
      await pollUntil(async () => (await inFlight()) === 4, { what: 'four calls upstream' });
      const over = await c.send('tools/call', { name: 'toolbox:sleep', arguments: { ms: 30000 } });
      assert.equal(over.message.error?.code, -32000, JSON.stringify(over));
      assert.equal(over.message.error.message, 'Too many tasks: tasks.max_per_principal (4) reached for principal "bob"');
      assert.equal(over.message.error.data.limit, 'max_per_principal');
      assert.ok(over.message.error.data.retryAfterMs > 0);
      assert.equal(await inFlight(), 4);
      // Refused like any call that does not run: counted by its reason.
      assert.equal(await metric('mcpgw_refused_total', { reason: 'task_limit' }, limited), 1);
      // Alice is not bob.
      const a = modernClient(limited.url, { headers: alice });
      const hers = await a.result('tools/call', { name: 'toolbox:echo', arguments: { text: 'fine' } });
      assert.equal(hers.resultType, 'task');
      for (const t of made) await c.result('tasks/cancel', { taskId: t.taskId });
    }),
  );

  test(
    'tasks.max_result_bytes: a larger result ends the task as failed, naming the limit',
    withDiagnostics(async () => {
      const why = /^mcpgw: the task's result is \d+ bytes, over tasks\.max_result_bytes \(2000\)$/;
      const c = modernClient(limited.url, { headers: alice });
      const big = await c.result('tools/call', { name: 'toolbox:big', arguments: { bytes: 5000 } });
      const failed = await c.until(big.taskId, terminal);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error.code, -32603);
      assert.match(failed.error.message, why);
      assert.equal(failed.result, undefined);

      const { client } = await sdkClient(limited.url, { token: 'tok-alice' });
      try {
        const created = await client.request(
          { method: 'tools/call', params: { name: 'toolbox:big', arguments: { bytes: 5000 }, task: {} } },
          CreateTaskResultSchema,
        );
        await pollUntil(async () => (await client.experimental.tasks.getTask(created.task.taskId)).status === 'failed', { what: 'failed' });
        await assertRejects(client.experimental.tasks.getTaskResult(created.task.taskId), -32603, why);
      } finally {
        await client.close();
      }
    }),
  );
});

describe('bad input', () => {
  test(
    "unknown, forged and another principal's ids get one -32602; an expired id says so; the task is untouched",
    withDiagnostics(async () => {
      const a = modernClient(gw.url, { headers: alice });
      const b = modernClient(gw.url, { headers: bob });
      const mine = await a.result('tools/call', { name: 'toolbox:echo', arguments: { text: 'keep' } });
      const forged = mine.taskId.slice(0, 20) + (mine.taskId[20] === 'A' ? 'B' : 'A') + mine.taskId.slice(21);
      for (const [who, taskId] of [[a, forged], [a, 'mt1AAAA'], [a, 'unknown'], [b, mine.taskId]]) {
        for (const [method, extra] of [['tasks/get', {}], ['tasks/cancel', {}], ['tasks/update', { inputResponses: {} }]]) {
          const r = await who.send(method, { taskId, ...extra });
          assert.deepEqual(r.message.error, { code: -32602, message: NOT_FOUND }, `${method} ${taskId}: ${JSON.stringify(r)}`);
        }
      }
      const done = await a.until(mine.taskId, terminal);
      assert.equal(done.status, 'completed');
      assert.match(done.result.content[0].text, /keep/);

      // 2025-11-25: the same answers, and the ttl the client asks for.
      const { client } = await sdkClient(gw.url, { token: 'tok-alice' });
      try {
        await assertRejects(client.experimental.tasks.getTask(mine.taskId.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))), -32602, NOT_FOUND);
        const short = await client.request(
          { method: 'tools/call', params: { name: 'toolbox:echo', arguments: { text: 'brief' }, task: { ttl: 1000 } } },
          CreateTaskResultSchema,
        );
        assert.equal(short.task.ttl, 1000);
        await pollUntil(async () => (await client.experimental.tasks.getTask(short.task.taskId)).status === 'completed', { what: 'completed' });
        await pollUntil(
          () => client.experimental.tasks.getTask(short.task.taskId).then(() => false, (e) => e.message.endsWith(EXPIRED)),
          { timeoutMs: 5000, what: 'the task to expire' },
        );
        await assertRejects(client.experimental.tasks.cancelTask(short.task.taskId), -32602, EXPIRED);
        // Bob's listing never shows alice's tasks.
        const bobs = await sdkClient(gw.url, { token: 'tok-bob' });
        try {
          const ids = (await bobs.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
          assert.ok(!ids.includes(mine.taskId) && !ids.includes(short.task.taskId));
        } finally {
          await bobs.client.close();
        }
      } finally {
        await client.close();
      }
    }),
  );

  test(
    "each generation's methods only: 2026 has no tasks/result or tasks/list, 2025 no tasks/update; Mcp-Name must name the task",
    withDiagnostics(async () => {
      const c = modernClient(gw.url, { headers: alice });
      const t = await c.result('tools/call', { name: 'toolbox:echo', arguments: { text: 'x' } });
      for (const method of ['tasks/result', 'tasks/list']) {
        const r = await c.send(method, { taskId: t.taskId });
        assert.equal(r.status, 404);
        assert.equal(r.message.error.code, -32601);
      }
      const wrong = await c.send('tasks/get', { taskId: t.taskId }, { headers: { 'mcp-name': 'another-task' } });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.message.error.code, -32020);
      const { client } = await sdkClient(gw.url, { token: 'tok-alice' });
      try {
        await assertRejects(
          client.request({ method: 'tasks/update', params: { taskId: t.taskId, inputResponses: {} } }, CreateTaskResultSchema),
          -32601,
        );
      } finally {
        await client.close();
      }
    }),
  );

  test(
    'a finished task is cancelled no more: -32602 for 2025-11-25, the same acknowledgement for 2026-07-28',
    withDiagnostics(async () => {
      const { client } = await sdkClient(gw.url, { token: 'tok-alice' });
      try {
        const created = await client.request(
          { method: 'tools/call', params: { name: 'toolbox:echo', arguments: { text: 'done' }, task: {} } },
          CreateTaskResultSchema,
        );
        await pollUntil(async () => (await client.experimental.tasks.getTask(created.task.taskId)).status === 'completed', { what: 'completed' });
        await assertRejects(client.experimental.tasks.cancelTask(created.task.taskId), -32602, 'Cannot cancel task in terminal status: completed');
        const c = modernClient(gw.url, { headers: alice });
        assert.deepEqual(await c.result('tasks/cancel', { taskId: created.task.taskId }), { resultType: 'complete' });
        assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'completed');
      } finally {
        await client.close();
      }
    }),
  );
});
