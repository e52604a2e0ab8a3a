// Tasks across two replicas sharing cluster.secret and a real Redis (both
// started here as child processes), no load balancer affinity:
//   - a task the gateway makes on one replica is seen, answered and
//     cancelled through the other (its state in Redis, the answers and the
//     cancel relayed to the replica that runs it), for a 2026-07-28 client
//     and for a 2025-11-25 client whose tasks/* land on the other replica;
//   - an upstream's task (server-everything over HTTP, shared by both)
//     made through one replica is polled, fetched and listed through the
//     other: its id names the upstream session it lives in.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BANK, EVERYTHING, Proc, TOOLBOX, closedPort, requireBinaries, tempDir, withDiagnostics } from '../integration/harness.mjs';
import { requireClusterTools, startRedis, startReplica } from './cluster-harness.mjs';
import { RELATED_TASK, assertGatewayId, modernClient, streamTool, terminal } from '../interop/tasks-common.mjs';

const TRANSFER = { fromAccountId: 'acc_savings_001', toAccountId: 'acc_credit_001', amount: 7 };
let redis;
let everything;
const replicas = [];

before(async () => {
  requireBinaries(BANK, TOOLBOX);
  requireClusterTools();
  const dir = tempDir('mcpgw-tasks-cluster-');
  redis = await startRedis(dir);
  const port = await closedPort();
  everything = new Proc('everything-http', process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) } });
  await everything.waitForLine('stderr', /listening on port \d+/);
  const config = {
    cluster: { redis: redis.url, secret: 'tasks-cluster-secret' },
    sagas: { secret: 'tasks-cluster-saga-secret' },
    tasks: { gateway: true },
    servers: [
      { name: 'toolbox', transport: 'stdio', command: TOOLBOX },
      { name: 'bank', transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money'] },
      { name: 'everything', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, timeout_ms: 30000 },
    ],
  };
  for (const label of ['replica-a', 'replica-b']) replicas.push(await startReplica(dir, config, { label, logLevel: 'debug' }));
});

after(async () => {
  for (const r of replicas) await r.proc.stop();
  await everything?.stop();
  await redis?.proc.stop();
});

/**
 * A fetch that sends what concerns tasks (tasks/* requests, and the
 * client's answers to what a tasks/result asked) to replica B and the rest
 * to replica A: the session is A's, its tasks are followed through B.
 */
function splitFetch(a, b) {
  return (url, init) => {
    let body;
    try {
      body = init?.body ? JSON.parse(init.body) : undefined;
    } catch {
      body = undefined;
    }
    const toB = body && !Array.isArray(body) && (String(body.method || '').startsWith('tasks/') || (!body.method && 'id' in body));
    return fetch(String(url).replace(a.url, toB ? b.url : a.url), init);
  };
}

test(
  'a task the gateway runs on one replica is followed, answered and cancelled through the other (2026-07-28)',
  withDiagnostics(async () => {
    const [a, b] = replicas.map((r) => modernClient(r.url));
    const created = await a.result('tools/call', { name: 'bank:transfer_money', arguments: TRANSFER });
    assertGatewayId(created.taskId);
    // Durable at once: the other replica knows it as soon as it exists.
    const first = await b.result('tasks/get', { taskId: created.taskId });
    assert.equal(first.taskId, created.taskId);
    const waiting = await b.until(created.taskId, (t) => t.status === 'input_required', 'the question, through B');
    const [key] = Object.keys(waiting.inputRequests);
    assert.equal(waiting.inputRequests[key].method, 'elicitation/create');
    assert.deepEqual(
      await b.result('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { confirm: true } } } }),
      { resultType: 'complete' },
    );
    const done = await b.until(created.taskId, terminal, 'the result, through B');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.match(done.result.content[0].text, /^Transfer trf_\d+ completed: 7\.00 USD/);

    const long = await a.result('tools/call', { name: 'toolbox:sleep', arguments: { ms: 60000 } });
    assert.deepEqual(await b.result('tasks/cancel', { taskId: long.taskId }), { resultType: 'complete' });
    // Replica A stopped it; both replicas say so.
    assert.equal((await a.until(long.taskId, terminal, 'cancelled on A')).status, 'cancelled');
    assert.equal((await b.until(long.taskId, terminal, 'cancelled on B')).status, 'cancelled');
  }),
);

/** An SDK v1 client of replica A whose tasks/* go to replica B (splitFetch). */
async function splitClient(a, b, elicitations) {
  const client = new Client({ name: 'tasks-split', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params);
    return { action: 'accept', content: { confirm: true } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(a.url), { fetch: splitFetch(a, b) }));
  return client;
}

test(
  "a 2025-11-25 client's tasks/* on the other replica: the question on its tasks/result stream, the result, the listing",
  withDiagnostics(async () => {
    const elicitations = [];
    const client = await splitClient(replicas[0], replicas[1], elicitations);
    try {
      await client.listTools();
      const messages = await streamTool(client, { name: 'bank:transfer_money', arguments: TRANSFER });
      const id = messages.find((m) => m.type === 'taskCreated').task.taskId;
      const result = messages.at(-1);
      assert.equal(result.type, 'result', JSON.stringify(messages));
      assert.match(result.result.content[0].text, /^Transfer trf_\d+ completed: 7\.00 USD/);
      assert.equal(result.result._meta[RELATED_TASK].taskId, id);
      assert.equal(elicitations.length, 1);
      assert.equal(elicitations[0]._meta[RELATED_TASK].taskId, id);
      // B lists what A made, from Redis.
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.equal(tasks.find((t) => t.taskId === id)?.status, 'completed', JSON.stringify(tasks));
    } finally {
      await client.close();
    }
  }),
);

test(
  "an upstream's task made through one replica is polled, fetched and listed through the other",
  withDiagnostics(async () => {
    const client = await splitClient(replicas[0], replicas[1], []);
    try {
      await client.listTools();
      const messages = await streamTool(client, { name: 'everything:simulate-research-query', arguments: { topic: 'replicas' } });
      const id = messages.find((m) => m.type === 'taskCreated').task.taskId;
      assertGatewayId(id);
      assert.equal(messages.at(-1).type, 'result', JSON.stringify(messages.at(-1)));
      assert.match(messages.at(-1).result.content[0].text, /Research Report: replicas/);
      const again = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      assert.match(again.content[0].text, /Research Report: replicas/);
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.equal(tasks.find((t) => t.taskId === id)?.status, 'completed', JSON.stringify(tasks));
    } finally {
      await client.close();
    }
  }),
);
