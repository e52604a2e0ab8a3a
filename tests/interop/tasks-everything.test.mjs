// MCP tasks (2025-11-25) through mcpgw with server-everything as the
// upstream, over stdio and over Streamable HTTP, driven by the official SDK
// v1 client's task API (client.experimental.tasks) and the v2 client's
// request API:
//   - a tool that needs a task (simulate-research-query, taskSupport
//     required) runs as one: the client sees only the gateway's task ids,
//     the elicitation the task asks on the way and its result are tied to
//     them, tasks/list shows it, the upstream's status notifications reach
//     the session under the gateway's id;
//   - tasks/cancel stops it; a second cancel is refused as the spec says;
//   - the other direction: a task the upstream asks the client to run
//     (trigger-elicitation-request-async) reaches a client that runs tasks,
//     under an id of the gateway's, and one that does not answers at once;
//   - two principals: one's task ids are, for the other, exactly as
//     unknown as ids the gateway never made, and its listing is its own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, specTypeSchemas } from '@modelcontextprotocol/client';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING, Proc, closedPort, pollUntil, requireBinaries, startGateway, withDiagnostics } from '../integration/harness.mjs';
import { NOT_FOUND, RELATED_TASK, assertGatewayId, assertRejects, sdkClient, streamTool } from './tasks-common.mjs';

const RESEARCH = 'everything:simulate-research-query';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const principals = { bearer_tokens: [{ token: 'tok-alice', name: 'alice' }, { token: 'tok-bob', name: 'bob' }] };

const gateways = {};
let everythingHttp;

before(async () => {
  requireBinaries();
  gateways.stdio = await startGateway({
    auth: principals,
    servers: [{ name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 }],
  });
  const port = await closedPort();
  everythingHttp = new Proc('everything-http', process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) } });
  await everythingHttp.waitForLine('stderr', /listening on port \d+/);
  gateways.http = await startGateway({
    auth: principals,
    servers: [{ name: 'everything', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, timeout_ms: 30000 }],
  });
});

after(async () => {
  for (const gw of Object.values(gateways)) await gw.proc.stop();
  await everythingHttp?.stop();
});

/** Accepts the research query's clarification with `interpretation`. */
const clarify = (interpretation) => async () => ({ action: 'accept', content: { interpretation } });

for (const transport of ['stdio', 'http']) {
  describe(`server-everything over ${transport}`, () => {
    test(
      'a tool that needs a task runs as one, under the gateway id, its question and result tied to it',
      withDiagnostics(async () => {
        const gw = gateways[transport];
        const { client, elicitations, statuses } = await sdkClient(gw.url, { token: 'tok-alice', elicit: clarify('snake') });
        try {
          assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
          const { tools } = await client.listTools();
          assert.equal(tools.find((t) => t.name === RESEARCH).execution.taskSupport, 'required');

          const messages = await streamTool(client, { name: RESEARCH, arguments: { topic: 'python', ambiguous: true } });
          const created = messages.find((m) => m.type === 'taskCreated').task;
          assertGatewayId(created.taskId);
          assert.equal(created.status, 'working');
          assert.equal(typeof created.ttl, 'number');
          for (const m of messages) if (m.task) assert.equal(m.task.taskId, created.taskId);
          assert.ok(messages.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required'));
          const result = messages.at(-1);
          assert.equal(result.type, 'result', JSON.stringify(messages.at(-1)));
          assert.match(result.result.content[0].text, /Research Report: python \(snake\)/);
          assert.equal(result.result._meta[RELATED_TASK].taskId, created.taskId);
          // The question came on tasks/result's stream, tied to the task.
          assert.equal(elicitations.length, 1);
          assert.equal(elicitations[0]._meta[RELATED_TASK].taskId, created.taskId);
          // The upstream's own ids never reach the client.
          assert.doesNotMatch(JSON.stringify({ messages, elicitations }), UUID);

          const { tasks } = await client.experimental.tasks.listTasks();
          const listed = tasks.find((t) => t.taskId === created.taskId);
          assert.equal(listed?.status, 'completed', JSON.stringify(tasks));
          assert.equal((await client.experimental.tasks.getTask(created.taskId)).status, 'completed');
          // The upstream's status notifications reach the session, renamed.
          const note = await pollUntil(() => statuses.find((s) => s.taskId === created.taskId && s.status === 'completed'), {
            what: 'notifications/tasks/status of the task',
          });
          assert.equal(note.taskId, created.taskId);
          assert.ok(statuses.every((s) => !UUID.test(s.taskId)), JSON.stringify(statuses));
        } finally {
          await client.close();
        }
      }),
    );

    test(
      'tasks/cancel stops a task; cancelling it again is refused with -32602',
      withDiagnostics(async () => {
        const { client } = await sdkClient(gateways[transport].url, { token: 'tok-alice' });
        try {
          await client.listTools();
          const created = await client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'cancel me' }, task: { ttl: 60000 } } },
            CreateTaskResultSchema,
          );
          assertGatewayId(created.task.taskId);
          const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
          assert.equal(cancelled.taskId, created.task.taskId);
          assert.equal(cancelled.status, 'cancelled');
          assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'cancelled');
          // The upstream's refusal, as it words it.
          await assertRejects(
            client.experimental.tasks.cancelTask(created.task.taskId),
            -32602,
            /Cannot cancel task in terminal status: cancelled$/,
          );
        } finally {
          await client.close();
        }
      }),
    );

    test(
      "a task the upstream asks the client to run reaches it under the gateway's id; a client without tasks answers at once",
      withDiagnostics(async () => {
        const gw = gateways[transport];
        const taskStore = new InMemoryTaskStore();
        let clientTaskId;
        const runner = await sdkClient(gw.url, {
          token: 'tok-alice',
          taskStore,
          capabilities: { elicitation: {}, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } },
          elicit: async (params, extra) => {
            assert.deepEqual(params.task, { ttl: 600000 });
            const task = await extra.taskStore.createTask({ ttl: params.task.ttl });
            clientTaskId = task.taskId;
            // The user answers a moment later: the upstream polls meanwhile.
            setImmediate(() => extra.taskStore.storeTaskResult(task.taskId, 'completed', { action: 'accept', content: { name: 'Ada', favoriteColor: 'Blue' } }));
            return { task };
          },
        });
        const plain = await sdkClient(gw.url, { token: 'tok-alice', elicit: async () => ({ action: 'accept', content: { name: 'Sync' } }) });
        try {
          const done = await runner.client.callTool({ name: 'everything:trigger-elicitation-request-async', arguments: {} });
          const text = done.content.map((c) => c.text).join('\n');
          assert.match(text, /\[COMPLETED\] User provided the requested information!/);
          assert.match(text, /- Name: Ada/);
          assert.match(text, /Task created: mcpgw-ct-\d+/);
          assert.ok(clientTaskId && !text.includes(clientTaskId), `the client's own task id reached the upstream: ${text}`);

          const sync = await plain.client.callTool({ name: 'everything:trigger-elicitation-request-async', arguments: {} });
          assert.match(sync.content[0].text, /^\[SYNC\] Client executed synchronously/);
          assert.equal(plain.elicitations[0].task, undefined);
        } finally {
          await runner.client.close();
          await plain.client.close();
          // Its expiry timers (the task's 10-minute ttl) would keep the test process alive.
          taskStore.cleanup();
        }
      }),
    );
  });
}

test(
  "another principal's task ids are as unknown as forged ones, and its listing shows only its own",
  withDiagnostics(async () => {
    const gw = gateways.stdio;
    const alice = await sdkClient(gw.url, { token: 'tok-alice' });
    const bob = await sdkClient(gw.url, { token: 'tok-bob' });
    try {
      await alice.client.listTools();
      const messages = await streamTool(alice.client, { name: RESEARCH, arguments: { topic: 'mine' } }, { task: {} });
      const id = messages.find((m) => m.type === 'taskCreated').task.taskId;
      const forged = id.slice(0, -2) + (id.endsWith('AA') ? 'BB' : 'AA');
      for (const taskId of [id, forged, 'not-a-task']) {
        await assertRejects(bob.client.experimental.tasks.getTask(taskId), -32602, NOT_FOUND);
        await assertRejects(bob.client.experimental.tasks.cancelTask(taskId), -32602, NOT_FOUND);
        await assertRejects(
          bob.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
          -32602,
          NOT_FOUND,
        );
      }
      assert.deepEqual((await bob.client.experimental.tasks.listTasks()).tasks, []);
      assert.ok((await alice.client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === id));
      // Still alice's, untouched by bob's attempts.
      assert.equal((await alice.client.experimental.tasks.getTask(id)).status, 'completed');
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  }),
);

test(
  "the SDK v2 client's request API creates and polls a task on a 2025-11-25 connection",
  withDiagnostics(async () => {
    const client = new ClientV2({ name: 'tasks-v2', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new TransportV2(new URL(gateways.http.url), { requestInit: { headers: { Authorization: 'Bearer tok-alice' } } }));
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'v2' }, task: { ttl: 60000 } } },
        specTypeSchemas.CreateTaskResult,
      );
      assertGatewayId(created.task.taskId);
      const done = await pollUntil(
        async () => {
          const t = await client.request({ method: 'tasks/get', params: { taskId: created.task.taskId } }, specTypeSchemas.GetTaskResult);
          return t.status === 'completed' ? t : false;
        },
        { timeoutMs: 20000, intervalMs: 200, what: 'the task to complete' },
      );
      assert.equal(done.taskId, created.task.taskId);
      const result = await client.request({ method: 'tasks/result', params: { taskId: created.task.taskId } }, specTypeSchemas.CallToolResult);
      assert.match(result.content[0].text, /Research Report: v2/);
    } finally {
      await client.close();
    }
  }),
);
