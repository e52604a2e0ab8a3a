// A stdio MCP server that leaks secrets of every kind the built-in
// detectors know (and one for an operator's pattern), for the redaction
// suite: in a tool's content text and structuredContent, in an isError
// result, in a JSON-RPC error's message and data, in a resource's text, in
// a prompt's messages, and on its stderr (which the gateway logs). Every
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
  ];
  const bulk = new Map(); // "bytes/every" -> text, made once
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
    if (m.id === undefined || !m.method) return;
    const p = m.params || {};
    switch (m.method) {
      case 'initialize':
        return ok(m.id, {
          protocolVersion: p.protocolVersion || '2025-06-18',
          capabilities: { tools: {}, resources: {}, prompts: {} },
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

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(process.argv[2] || '/dev/null');
