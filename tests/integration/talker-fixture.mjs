// A stdio MCP server (stateful revisions, newline-delimited JSON-RPC) for
// the 2026-07-28 suites: it talks during calls (log messages at every
// level, progress, elicitation and sampling requests to the client), grows
// its lists on demand (list_changed), announces resource updates, and
// appends every message it receives to the file named by its first
// argument, so that a test can see what reached it (answers to its
// requests, notifications/cancelled, resources/subscribe) without sleeping.
//
//   node talker-fixture.mjs [LOG_FILE] [--name NAME]
import readline from 'node:readline';
import { appendFileSync } from 'node:fs';

const LOG = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : undefined;
const nameAt = process.argv.indexOf('--name');
const NAME = nameAt > 0 ? process.argv[nameAt + 1] : 'talker';

const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const ok = (id, result) => out({ jsonrpc: '2.0', id, result });
const text = (t, extra = {}) => ({ content: [{ type: 'text', text: t }], ...extra });

const state = { grown: 0 };
let nextAsk = 1;
const asked = new Map(); // our request id → resolve({result} | {error})
const cancelWaiters = new Map(); // JSON of a tools/call id → resolve(reason)

function ask(method, params) {
  const id = `${NAME}-ask-${nextAsk++}`;
  out({ jsonrpc: '2.0', id, method, params });
  return new Promise((resolve) => asked.set(id, resolve));
}

const answerSchema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
const elicit = (message, key, extraMeta = {}) => {
  const params = { message, requestedSchema: answerSchema };
  if (key !== undefined || Object.keys(extraMeta).length) params._meta = { ...(key !== undefined ? { 'mcpgw/inputKey': key } : {}), ...extraMeta };
  return params;
};
const describe = (reply) => (reply.error ? `error ${JSON.stringify(reply.error)}` : JSON.stringify(reply.result));

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical'];

const tools = () => [
  { name: 'echo', description: 'returns text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'grow', description: 'adds a tool, a resource and a prompt; sends the three list_changed', inputSchema: { type: 'object' } },
  { name: 'touch', description: 'sends notifications/resources/updated for uri, then answers', inputSchema: { type: 'object', properties: { uri: { type: 'string' } } } },
  { name: 'log', description: 'sends one log message per level, debug to critical, then answers', inputSchema: { type: 'object' } },
  { name: 'progress', description: 'reports progress 1..steps of steps, then answers', inputSchema: { type: 'object', properties: { steps: { type: 'integer' } } } },
  { name: 'ask', description: 'elicits an answer to question (key: the mcpgw/inputKey to give)', inputSchema: { type: 'object', properties: { question: { type: 'string' }, key: { type: 'string' } } } },
  { name: 'ask_two', description: 'asks two questions at once (an elicitation and a sampling, mcpgw/inputBatch 2)', inputSchema: { type: 'object' } },
  { name: 'ask_twice', description: 'asks step1, then step2, then answers', inputSchema: { type: 'object' } },
  { name: 'ask_then_wait', description: 'elicits "confirm", reports progress 1, then waits until the call is cancelled', inputSchema: { type: 'object' } },
  ...Array.from({ length: state.grown }, (_, i) => ({ name: `grown${i}`, description: `grown tool ${i}`, inputSchema: { type: 'object' } })),
];
const resources = () => Array.from({ length: 2 + state.grown }, (_, i) => ({ uri: `fx://item/${i}`, name: `item ${i}`, mimeType: 'text/plain' }));
const prompts = () => Array.from({ length: 1 + state.grown }, (_, i) => ({ name: `p${i}`, description: `prompt ${i}`, arguments: [{ name: 'who', required: false }] }));

async function callTool(m) {
  const p = m.params || {};
  const args = p.arguments || {};
  const token = p._meta?.progressToken;
  switch (p.name) {
    case 'echo':
      return ok(m.id, text(String(args.text)));
    case 'grow':
      state.grown++;
      ok(m.id, text(`grown to ${state.grown}`));
      for (const what of ['tools', 'resources', 'prompts']) out({ jsonrpc: '2.0', method: `notifications/${what}/list_changed` });
      return undefined;
    case 'touch':
      out({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: args.uri } });
      return ok(m.id, text(`touched ${args.uri}`));
    case 'log':
      for (const level of LEVELS) out({ jsonrpc: '2.0', method: 'notifications/message', params: { level, logger: NAME, data: `${level} message` } });
      return ok(m.id, text('logged'));
    case 'progress': {
      const steps = Number(args.steps || 3);
      if (token !== undefined)
        for (let i = 1; i <= steps; i++) out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
      return ok(m.id, text(token !== undefined ? `progressed ${steps}` : 'no progress token'));
    }
    case 'ask': {
      const reply = await ask('elicitation/create', elicit(String(args.question ?? 'What is the answer?'), args.key));
      return ok(m.id, reply.error ? text(`ask failed: ${describe(reply)}`, { isError: true }) : text(`answered: ${describe(reply)}`));
    }
    case 'ask_two': {
      const [a, b] = await Promise.all([
        ask('elicitation/create', elicit('first question', 'first', { 'mcpgw/inputBatch': 2 })),
        ask('sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 'second question' } }], maxTokens: 10, _meta: { 'mcpgw/inputKey': 'second', 'mcpgw/inputBatch': 2 } }),
      ]);
      return ok(m.id, text(`first=${describe(a)} second=${describe(b)}`));
    }
    case 'ask_twice': {
      const a = await ask('elicitation/create', elicit('step 1: your name?', 'step1'));
      if (a.error) return ok(m.id, text(`step1 failed: ${describe(a)}`, { isError: true }));
      const b = await ask('elicitation/create', elicit(`step 2: your colour, ${a.result?.content?.answer}?`, 'step2'));
      return ok(m.id, text(`step1=${describe(a)} step2=${describe(b)}`));
    }
    case 'ask_then_wait': {
      const a = await ask('elicitation/create', elicit('confirm?', 'confirm'));
      // With a progress token, say so: the client's answer then streams.
      if (token !== undefined) out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, message: 'answer received' } });
      const key = JSON.stringify(m.id);
      const reason = await new Promise((resolve) => {
        cancelWaiters.set(key, resolve);
        setTimeout(() => resolve(null), 30000).unref();
      });
      cancelWaiters.delete(key);
      // A cancelled request gets no answer (spec: cancellation).
      if (reason === null) ok(m.id, text(`not cancelled after ${describe(a)}`));
      return undefined;
    }
    default:
      return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Unknown tool: ${p.name}` } });
  }
}

function onRequest(m) {
  const p = m.params || {};
  switch (m.method) {
    case 'initialize':
      return ok(m.id, {
        protocolVersion: p.protocolVersion,
        serverInfo: { name: NAME, version: '1.0.0' },
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} },
      });
    case 'ping':
    case 'logging/setLevel':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return ok(m.id, {});
    case 'tools/list':
      return ok(m.id, { tools: tools() });
    case 'resources/list':
      return ok(m.id, { resources: resources() });
    case 'resources/templates/list':
      return ok(m.id, { resourceTemplates: [{ uriTemplate: 'fx://tmpl/{id}', name: 'template' }] });
    case 'prompts/list':
      return ok(m.id, { prompts: prompts() });
    case 'resources/read':
      return ok(m.id, { contents: [{ uri: p.uri, mimeType: 'text/plain', text: `content of ${p.uri}` }] });
    case 'prompts/get':
      return ok(m.id, { description: `got ${p.name}`, messages: [{ role: 'user', content: { type: 'text', text: `prompt ${p.name} for ${p.arguments?.who}` } }] });
    case 'completion/complete':
      return ok(m.id, { completion: { values: [`${p.argument?.value}-completed`] } });
    case 'tools/call':
      return callTool(m);
    default:
      return out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (LOG) appendFileSync(LOG, `${JSON.stringify(m)}\n`);
  if (!m || typeof m !== 'object') return;
  if (m.method && m.id !== undefined) return void onRequest(m);
  if (m.method === 'notifications/cancelled') {
    const w = cancelWaiters.get(JSON.stringify(m.params?.requestId));
    if (w) w(m.params?.reason ?? 'cancelled');
    return;
  }
  if (!m.method && m.id !== undefined && asked.has(m.id)) {
    const resolve = asked.get(m.id);
    asked.delete(m.id);
    resolve(m.error ? { error: m.error } : { result: m.result });
  }
});
