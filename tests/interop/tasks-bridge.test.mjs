// A client of one generation of MCP tasks over an upstream of the other,
// through mcpgw:
//   - a 2026-07-28 client (raw requests) over server-everything, which
//     speaks 2025-11-25: server-directed task creation for a tool that
//     needs a task, the question the task asks (sent by the upstream on
//     tasks/result only) shown as inputRequests on tasks/get and answered
//     with tasks/update, the result inlined once it is done;
//   - the SDK v1 client (2025-11-25) over examples/conformance-server
//     speaking 2026-07-28 (the tasks extension): CreateTaskResult in its
//     generation's shape, the question on tasks/result's stream (answered
//     upstream with tasks/update), a tool error as `failed` with its
//     result, a protocol error as the JSON-RPC error, cancellation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { BUILD, EVERYTHING, pollUntil, requireBinaries, startGateway, withDiagnostics } from '../integration/harness.mjs';
import { RELATED_TASK, assertGatewayId, assertRejects, modernClient, sdkClient, streamTool, terminal } from './tasks-common.mjs';

const FIXTURE = path.join(BUILD, 'examples', 'conformance-server');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
let gw;

before(async () => {
  requireBinaries(FIXTURE);
  gw = await startGateway({
    servers: [
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 },
      { name: 'fixture', transport: 'stdio', command: FIXTURE, args: ['--era', '2026', '--watch-interval-ms', '0'] },
    ],
  });
});

after(async () => {
  await gw?.proc.stop();
});

describe('a 2026-07-28 client over a 2026-07-28 upstream', () => {
  test(
    "the result inlined in tasks/get names the upstream's resources as the gateway exposes them",
    withDiagnostics(async () => {
      const c = modernClient(gw.url);
      const created = await c.result('tools/call', { name: 'fixture:slow_compute', arguments: { seconds: 0, label: 'r1' } });
      assert.equal(created.resultType, 'task');
      assertGatewayId(created.taskId);
      const done = await c.until(created.taskId, terminal);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.deepEqual(done.result.content, [
        { type: 'text', text: 'slow_compute r1 done' },
        { type: 'resource_link', uri: 'fixture+test://tasks/report/r1', name: 'report r1' },
      ]);
    }),
  );
});

describe('a 2026-07-28 client over a 2025-11-25 upstream', () => {
  test(
    'the task, its question as inputRequests, the answer by tasks/update, the result inlined',
    withDiagnostics(async () => {
      const c = modernClient(gw.url);
      const created = await c.result('tools/call', {
        name: 'everything:simulate-research-query',
        arguments: { topic: 'python', ambiguous: true },
      });
      assert.equal(created.resultType, 'task');
      assertGatewayId(created.taskId);
      assert.equal(created.ttlMs, 300000);
      const waiting = await c.until(
        created.taskId,
        (t) => t.status === 'input_required' || terminal(t),
        'the question',
      );
      assert.equal(waiting.status, 'input_required', JSON.stringify(waiting));
      const [key] = Object.keys(waiting.inputRequests);
      const question = waiting.inputRequests[key];
      assert.equal(question.method, 'elicitation/create');
      assert.match(question.params.message, /"python" could have multiple interpretations/);
      assert.equal(question.params._meta[RELATED_TASK].taskId, created.taskId);
      assert.deepEqual(
        await c.result('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { interpretation: 'comedy' } } } }),
        { resultType: 'complete' },
      );
      const done = await c.until(created.taskId, terminal, 'the result');
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.match(done.result.content[0].text, /Research Report: python \(comedy\)/);
      assert.equal(done.result._meta?.[RELATED_TASK], undefined);
      assert.doesNotMatch(JSON.stringify([created, waiting, done]), UUID);
    }),
  );

  test(
    'a tool that needs a task, for a client without the extension: -32021 naming it',
    withDiagnostics(async () => {
      const c = modernClient(gw.url, { caps: { elicitation: {} } });
      const r = await c.send('tools/call', { name: 'everything:simulate-research-query', arguments: { topic: 'x' } });
      assert.equal(r.message.error?.code, -32021, JSON.stringify(r));
      assert.deepEqual(r.message.error.data, { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    }),
  );
});

describe('a 2025-11-25 client over a 2026-07-28 upstream', () => {
  test(
    "the task in the client's shape; its question on tasks/result, answered upstream with tasks/update",
    withDiagnostics(async () => {
      const { client, elicitations } = await sdkClient(gw.url, { elicit: async () => ({ action: 'accept', content: { confirm: true } }) });
      try {
        const { tools } = await client.listTools();
        assert.equal(tools.find((t) => t.name === 'fixture:confirm_delete').execution.taskSupport, 'optional');
        const messages = await streamTool(client, { name: 'fixture:confirm_delete', arguments: { filename: 'old.txt' } });
        const created = messages.find((m) => m.type === 'taskCreated').task;
        assertGatewayId(created.taskId);
        assert.equal(created.ttl, 60000);
        assert.equal(created.pollInterval, 200);
        const result = messages.at(-1);
        assert.equal(result.type, 'result', JSON.stringify(messages));
        assert.match(result.result.content[0].text, /^confirm_delete old\.txt: action=accept/);
        assert.equal(result.result._meta[RELATED_TASK].taskId, created.taskId);
        assert.equal(elicitations.length, 1);
        assert.equal(elicitations[0].message, 'Delete old.txt?');
        assert.equal(elicitations[0]._meta[RELATED_TASK].taskId, created.taskId);
        assert.ok((await client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === created.taskId && t.status === 'completed'));
      } finally {
        await client.close();
      }
    }),
  );

  test(
    'a tool error is `failed` with its result; a protocol error is the JSON-RPC error; cancel ends a running task once',
    withDiagnostics(async () => {
      const { client } = await sdkClient(gw.url);
      try {
        await client.listTools();
        const create = (name, args = {}) =>
          client.request({ method: 'tools/call', params: { name, arguments: args, task: {} } }, CreateTaskResultSchema);
        const ended = async (id) =>
          pollUntil(async () => {
            const t = await client.experimental.tasks.getTask(id);
            return ['completed', 'failed', 'cancelled'].includes(t.status) ? t : false;
          }, { what: `task ${id} to end` });

        const failing = await create('fixture:failing_job');
        assert.equal((await ended(failing.task.taskId)).status, 'failed');
        const toolError = await client.experimental.tasks.getTaskResult(failing.task.taskId, CallToolResultSchema);
        assert.equal(toolError.isError, true);
        assert.equal(toolError.content[0].text, 'failing_job failed as designed');

        const broken = await create('fixture:protocol_error_job');
        assert.equal((await ended(broken.task.taskId)).status, 'failed');
        await assertRejects(client.experimental.tasks.getTaskResult(broken.task.taskId, CallToolResultSchema), -32603, 'protocol_error_job crashed as designed');

        const slow = await create('fixture:slow_compute', { seconds: 60, label: 'bridge' });
        const cancelled = await client.experimental.tasks.cancelTask(slow.task.taskId);
        assert.equal(cancelled.status, 'cancelled');
        assert.equal((await ended(slow.task.taskId)).status, 'cancelled');
        await assertRejects(client.experimental.tasks.cancelTask(slow.task.taskId), -32602, 'Cannot cancel task in terminal status: cancelled');
      } finally {
        await client.close();
      }
    }),
  );
});
