// Shared pieces of the task tests (tests/interop/tasks-*.test.mjs,
// tests/integration/tasks-gateway.test.mjs, tests/cluster/tasks.test.mjs):
// the official SDK v1 client with its task API, a 2026-07-28 client of raw
// requests, and what the gateway's errors about tasks say.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, McpError, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { pollUntil } from '../integration/harness.mjs';
import { openPost, statelessRequest } from '../integration/stateless.mjs';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
export const NOT_FOUND = 'Failed to retrieve task: Task not found';
export const EXPIRED = 'Failed to retrieve task: Task has expired';

/** Per-request capabilities of a 2026-07-28 client that takes tasks. */
export const MODERN_CAPS = { elicitation: {}, sampling: {}, extensions: { [TASKS_EXTENSION]: {} } };

/**
 * The SDK v1 client over Streamable HTTP, as `token`'s principal when
 * given; `elicit` answers elicitation/create (the requests it got are in
 * `elicitations`), `capabilities` and `taskStore` as the SDK takes them.
 * Every notifications/tasks/status it gets lands in `statuses`.
 */
export async function sdkClient(url, { token, elicit, capabilities = { elicitation: {} }, taskStore } = {}) {
  const client = new Client({ name: 'tasks-test', version: '1.0.0' }, { capabilities, taskStore });
  const elicitations = [];
  const statuses = [];
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    elicitations.push(req.params);
    return elicit ? elicit(req.params, extra) : { action: 'decline' };
  });
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push(n.params);
  });
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return { client, elicitations, statuses };
}

/** Every message of `client.experimental.tasks.callToolStream(params)`, in order. */
export async function streamTool(client, params, options) {
  const out = [];
  for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, options)) out.push(m);
  return out;
}

/**
 * Asserts that `promise` rejects with an McpError of `code` whose message,
 * after the SDK's prefix, is `message` (a string) or matches it (a RegExp).
 */
export async function assertRejects(promise, code, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof McpError, `not an McpError: ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, code, `code ${err.code}: ${err.message}`);
    const text = err.message.replace(/^MCP error -?\d+: /, '');
    if (message instanceof RegExp) assert.match(text, message);
    else if (message !== undefined) assert.equal(text, message);
    return true;
  });
}

/** A task id of the gateway's: sealed, never the upstream's. */
export function assertGatewayId(id) {
  assert.match(id, /^mt1[A-Za-z0-9_-]{40,}$/, `not a gateway task id: ${id}`);
}

/** A 2026-07-28 client of raw requests to `url`. */
export function modernClient(url, { caps = MODERN_CAPS, headers = {} } = {}) {
  const send = async (method, params = {}, opts = {}) => {
    const rq = statelessRequest(method, params, { caps: opts.caps ?? caps, headers: { ...headers, ...(opts.headers || {}) } });
    const res = await openPost(url, rq.body, rq.headers, { id: rq.id });
    await res.done;
    return { status: res.status, message: res.final };
  };
  return {
    send,
    /** The result of `method`, asserting it is one. */
    async result(method, params, opts) {
      const r = await send(method, params, opts);
      assert.ok(r.message?.result, `${method}: ${JSON.stringify(r)}`);
      return r.message.result;
    },
    /** Polls tasks/get of `taskId` until `pred(task)` holds; returns that task. */
    async until(taskId, pred, what = 'the task', timeoutMs = 20000) {
      return pollUntil(
        async () => {
          const r = await send('tasks/get', { taskId });
          assert.ok(r.message?.result, `tasks/get: ${JSON.stringify(r)}`);
          return pred(r.message.result) ? r.message.result : false;
        },
        { timeoutMs, intervalMs: 100, what },
      );
    },
  };
}

export const terminal = (t) => ['completed', 'failed', 'cancelled'].includes(t.status);
