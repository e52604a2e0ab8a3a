// A stdio MCP server that leaks secrets of every kind the built-in
// detectors know (and one for an operator's pattern), for the redaction
// suite: in a tool's content text and structuredContent, in an isError
// result, in a JSON-RPC error's message and data, in a resource's text, in
// a prompt's messages, a completion's values, on its stderr (which the
// gateway logs; with SECRETS_LONG_STDERR set, a line of 10,000 bytes at
// start, a secret across its byte 200), in what it sends a client during a
// call (tool talk: a log message, progress, an elicitation), and in a task
// it runs (tool job called with `task`: its status messages and result). Every
// message it receives is appended to the file named by its first argument,
// so a test can see what reached it (a tool call's arguments).
//
//   node secrets-fixture.mjs LOG_FILE
//
// Imported, it gives the samples: SECRETS, each {detector, text (as the
// server says it), raw (what must never cross the gateway)}; leaked(text),
// the samples text holds raw; and secretsServer(log), its servers[] entry.
import readline from 'node:readline';
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SECRETS = [
  { detector: 'aws_access_key_id', text: 'AKIAIOSFODNN7EXAMPLE', raw: 'AKIAIOSFODNN7EXAMPLE' },
  {
    detector: 'aws_secret_access_key',
    text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    raw: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  },
  { detector: 'github_token', text: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a', raw: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a' },
  {
    detector: 'github_token',
    text: 'github_pat_11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW',
    raw: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW',
  },
  { detector: 'gitlab_token', text: 'glpat-AbCdEfGhIjKlMnOpQrSt', raw: 'glpat-AbCdEfGhIjKlMnOpQrSt' },
  {
    detector: 'slack_token',
    text: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    raw: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
  },
  {
    detector: 'slack_webhook',
    text: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    raw: 'T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
  },
  { detector: 'stripe_key', text: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', raw: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' },
  { detector: 'google_api_key', text: 'AIzaSyA1234567890abcdefghijklmnopqrstuv', raw: 'AIzaSyA1234567890abcdefghijklmnopqrstuv' },
  {
    detector: 'private_key',
    text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7privatekeybody0123456789\nQW1zecretline==\n-----END RSA PRIVATE KEY-----',
    raw: 'MIIEowIBAAKCAQEA7privatekeybody0123456789',
  },
  {
    detector: 'jwt',
    text: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    raw: 'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  },
  { detector: 'secret_assignment', text: 'db password=hunter2-very-secret', raw: 'hunter2-very-secret' },
  { detector: 'employee_id', text: 'badge EMP-123456', raw: 'EMP-123456' },
];

/** The raw secrets `text` holds (none, when redaction did its job). */
export function leaked(text) {
  return SECRETS.filter((s) => text.includes(s.raw)).map((s) => `${s.detector}: ${s.raw}`);
}

/** This fixture as the stdio server `sec` of a gateway, appending what it receives to `log`. */
export function secretsServer(log, extra = {}) {
  return { name: 'sec', command: process.execPath, args: [fileURLToPath(import.meta.url), log], ...extra };
}

const all = () => SECRETS.map((s) => s.text).join('\n');

/** The stderr line SECRETS_LONG_STDERR writes: a GitHub token at byte `LONG_STDERR_AT`, among filler words. */
export const LONG_STDERR_AT = 190;
export const longStderrLine = () => `${'x'.repeat(LONG_STDERR_AT - 1)} ${SECRETS[2].text} ${'y'.repeat(10000)}`;

/** `bytes` of log-like text, the same every time; a secret every `every` bytes (0: none). */
function bulkText(bytes, every) {
  const words = ['request', 'user', 'GET', '/api/v2/items', 'status=200', 'latency_ms=', 'token_count', 'the', 'error', 'retry', 'session', 'key', 'id=', 'cache', 'miss'];
  let x = 12345;
  let next = every;
  let n = 0;
  const parts = [];
  let size = 0;
  while (size < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    let w = `${words[(x >>> 8) % words.length]}${(x >>> 4) % 5 === 0 ? (x >>> 12) % 100000 : ''}${(x >>> 20) % 13 === 0 ? '\n' : ' '}`;
    if (every && size >= next) {
      w += `${SECRETS[n++ % SECRETS.length].text} `;
      next += every;
    }
    parts.push(w);
    size += w.length;
  }
  return parts.join('').slice(0, bytes);
}

function serve(log) {
  const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
  const ok = (id, result) => out({ jsonrpc: '2.0', id, result });
  const tools = [
    { name: 'leak', description: 'answers with every secret (where: result | is_error | error)', inputSchema: { type: 'object', properties: { where: { type: 'string' } } } },
    { name: 'echo', description: 'answers with the arguments it received', inputSchema: { type: 'object' } },
    { name: 'clean', description: 'answers with text holding no secret', inputSchema: { type: 'object' } },
    {
      name: 'bulk',
      description: 'answers with `bytes` of log-like text, a secret every `every` bytes (0: none)',
      inputSchema: { type: 'object', properties: { bytes: { type: 'integer' }, every: { type: 'integer' } } },
    },
    { name: 'talk', description: 'logs, reports progress and asks the client, each with a secret', inputSchema: { type: 'object' } },
    { name: 'job', description: 'runs as a task when asked', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } },
  ];
  const bulk = new Map(); // "bytes/every" -> text, made once
  let nextAsk = 1;
  const asked = new Map(); // our request id -> resolve(answer message)
  const ask = (method, params) => {
    const id = `sec-ask-${nextAsk++}`;
    out({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve) => asked.set(id, resolve));
  };
  const jobs = new Map(); // task id -> its result
  const now = () => new Date().toISOString();
  const task = (taskId, status, statusMessage) => ({ taskId, status, statusMessage, createdAt: now(), lastUpdatedAt: now(), ttl: 60000, pollInterval: 50 });
  const leakResult = (where) => ({
    content: [{ type: 'text', text: all() }],
    structuredContent: { nested: { list: SECRETS.map((s) => s.text) } },
    ...(where === 'is_error' ? { isError: true } : {}),
  });
  async function talk(m, p) {
    out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'sec', data: { note: `log ${SECRETS[4].text}` } } });
    const token = p._meta?.progressToken;
    if (token !== undefined)
      out({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: `progress ${SECRETS[5].text}` } });
    const answer = await ask('elicitation/create', {
      message: `confirm ${SECRETS[7].text}`,
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    });
    ok(m.id, { content: [{ type: 'text', text: `talked: ${answer.result?.action ?? 'no answer'}` }] });
  }
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    appendFileSync(log, `${line}\n`);
    if (m.id !== undefined && !m.method && asked.has(m.id)) {
      asked.get(m.id)(m);
      asked.delete(m.id);
      return;
    }
    if (m.id === undefined || !m.method) return;
    const p = m.params || {};
    switch (m.method) {
      case 'initialize':
        return ok(m.id, {
          protocolVersion: p.protocolVersion || '2025-06-18',
          capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
          serverInfo: { name: 'secrets', version: '1.0.0' },
        });
      case 'ping':
        return ok(m.id, {});
      case 'tools/list':
        return ok(m.id, { tools });
      case 'tools/call': {
        const args = p.arguments || {};
        if (p.name === 'echo') return ok(m.id, { content: [{ type: 'text', text: `got ${JSON.stringify(args)}` }] });
        if (p.name === 'clean') return ok(m.id, { content: [{ type: 'text', text: 'nothing to hide here' }] });
        if (p.name === 'bulk') {
          const key = `${args.bytes}/${args.every}`;
          if (!bulk.has(key)) bulk.set(key, bulkText(Number(args.bytes) || 0, Number(args.every) || 0));
          return ok(m.id, { content: [{ type: 'text', text: bulk.get(key) }] });
        }
        if (p.name === 'talk') return void talk(m, p);
        if (p.name === 'job') {
          if (!p.task) return ok(m.id, leakResult(args.where));
          const taskId = `job-${jobs.size + 1}`;
          jobs.set(taskId, leakResult(args.where));
          return ok(m.id, { task: task(taskId, 'working', 'started') });
        }
        if (p.name !== 'leak') return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `no tool ${p.name}` } });
        process.stderr.write(`handing out ${SECRETS.map((s) => s.text.replace(/\n/g, ' ')).join(' ')}\n`);
        if (args.where === 'error')
          return out({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: `cannot: ${all()}`, data: { detail: all() } } });
        return ok(m.id, {
          content: [{ type: 'text', text: all() }],
          structuredContent: { nested: { list: SECRETS.map((s) => s.text) } },
          ...(args.where === 'is_error' ? { isError: true } : {}),
        });
      }
      case 'logging/setLevel':
        return ok(m.id, {});
      case 'completion/complete':
        return ok(m.id, { completion: { values: [SECRETS[2].text, 'plain'], total: 2, hasMore: false } });
      case 'tasks/get':
        if (!jobs.has(p.taskId)) return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'Failed to retrieve task: Task not found' } });
        return ok(m.id, task(p.taskId, 'completed', `done with ${SECRETS[0].text}`));
      case 'tasks/list':
        return ok(m.id, { tasks: [...jobs.keys()].map((id) => task(id, 'completed', `done with ${SECRETS[0].text}`)) });
      case 'tasks/result':
        if (!jobs.has(p.taskId)) return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'Failed to retrieve task: Task not found' } });
        return ok(m.id, { ...jobs.get(p.taskId), _meta: { 'io.modelcontextprotocol/related-task': { taskId: p.taskId } } });
      case 'resources/list':
        return ok(m.id, { resources: [{ uri: 'secret://creds', name: 'creds', mimeType: 'text/plain' }] });
      case 'resources/read':
        return ok(m.id, { contents: [{ uri: p.uri, mimeType: 'text/plain', text: all() }] });
      case 'prompts/list':
        return ok(m.id, { prompts: [{ name: 'leaky', description: 'a prompt that leaks' }] });
      case 'prompts/get':
        return ok(m.id, {
          description: `leaky ${SECRETS[0].text}`,
          messages: [{ role: 'user', content: { type: 'text', text: all() } }],
        });
      default:
        return out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `method not found: ${m.method}` } });
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.env.SECRETS_LONG_STDERR) process.stderr.write(`${longStderrLine()}\n`);
  serve(process.argv[2] || '/dev/null');
}
