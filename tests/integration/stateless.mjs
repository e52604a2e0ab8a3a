// Raw-HTTP pieces for MCP 2026-07-28 (the stateless revision): the
// per-request `_meta` envelope, the request headers (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) and POSTs whose answer is read as it streams (an
// SSE answer's notifications, a subscriptions/listen stream, a call the test
// aborts). Shared by tests/integration/stateless-http.test.mjs and
// tests/interop/mrtr-bridge.test.mjs.
import { SseParser, newId, waitForItem, withTimeout } from './harness.mjs';

export const MODERN = '2026-07-28';
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
export const META_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG = 'io.modelcontextprotocol/logLevel';
export const META_SERVER = 'io.modelcontextprotocol/serverInfo';
export const META_SUB = 'io.modelcontextprotocol/subscriptionId';

/** The request `_meta` envelope of a stateless client. */
export function envelope({ caps = {}, name = 'stateless-test', protocolVersion = MODERN, logLevel, progressToken } = {}) {
  const meta = { [META_VERSION]: protocolVersion, [META_CAPS]: caps, [META_INFO]: { name, version: '1.0.0' } };
  if (logLevel !== undefined) meta[META_LOG] = logLevel;
  if (progressToken !== undefined) meta.progressToken = progressToken;
  return meta;
}

/** The params member an Mcp-Name header repeats, for methods that have one. */
function namedParam(method, params) {
  if (!params || typeof params !== 'object') return undefined;
  if (method === 'tools/call' || method === 'prompts/get') return params.name;
  if (method === 'resources/read') return params.uri;
  if (method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel') return params.taskId;
  return undefined;
}

/** `=?base64?...?=` unless the value is plain printable ASCII without edge spaces. */
export function headerValue(v) {
  const plain = v.length > 0 && /^[\x20-\x7e]*$/.test(v) && !/^[ \t]|[ \t]$/.test(v) && !v.startsWith('=?base64?');
  return plain ? v : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;
}

/**
 * A stateless request: body (with the envelope merged under any `_meta` the
 * params carry) and headers derived from it. `opts` are envelope() options
 * (caps, name, protocolVersion, logLevel, progressToken) and: id; version
 * (the MCP-Protocol-Version header); headers (added or overriding; null
 * leaves one out); meta (_meta keys added or overriding; undefined removes
 * one; `meta: null` sends the params without any `_meta`).
 */
export function statelessRequest(method, params = {}, opts = {}) {
  const id = opts.id ?? newId();
  let p = params;
  if (p !== null && typeof p === 'object' && !Array.isArray(p) && opts.meta !== null) {
    p = { ...p, _meta: { ...envelope(opts), ...(p._meta || {}), ...(opts.meta || {}) } };
    for (const [k, v] of Object.entries(p._meta)) if (v === undefined) delete p._meta[k];
  }
  const body = { jsonrpc: '2.0', id, method };
  if (p !== undefined) body.params = p;
  const h = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': opts.version ?? MODERN,
    'mcp-method': method,
  };
  const name = namedParam(method, p);
  if (typeof name === 'string') h['mcp-name'] = headerValue(name);
  for (const [k, v] of Object.entries(opts.headers || {})) {
    delete h[k.toLowerCase()];
    if (v !== null && v !== undefined) h[k.toLowerCase()] = v;
  }
  return { id, body, headers: h };
}

/**
 * POSTs `body` with exactly `headers` and reads the answer as it comes.
 * Resolves once the response headers arrived with {status, headers,
 * contentType, messages, text, json, final (the response to `id`, once
 * in), done (resolves when the body ended or the response to `id`
 * arrived), waitFor(pred, ms), close()}.
 */
export async function openPost(url, body, headers, { id, timeoutMs = 60000 } = {}) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`openPost timed out after ${timeoutMs} ms`)), timeoutMs);
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(url, { method: 'POST', headers, body: payload, signal: ac.signal });
  const contentType = (res.headers.get('content-type') || '').toLowerCase();
  const s = { status: res.status, headers: res.headers, contentType, messages: [], text: '', json: undefined, final: undefined, ended: false };
  const listeners = [];
  const push = (m) => {
    s.messages.push(m);
    if (m && typeof m === 'object' && !('method' in m) && ('result' in m || 'error' in m) && (id === undefined || m.id === id)) s.final = s.final ?? m;
    for (const l of [...listeners]) l(m);
  };
  let finish;
  s.done = new Promise((r) => {
    finish = r;
  });
  (async () => {
    try {
      if (contentType.startsWith('text/event-stream')) {
        const parser = new SseParser();
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const chunk = dec.decode(value, { stream: true });
          s.text += chunk;
          for (const ev of parser.push(chunk)) if (ev.data !== undefined) push(JSON.parse(ev.data));
          if (s.final) finish();
        }
      } else {
        s.text = await res.text();
        try {
          s.json = JSON.parse(s.text);
          for (const m of Array.isArray(s.json) ? s.json : [s.json]) push(m);
        } catch {
          /* not JSON: left in text */
        }
      }
    } catch {
      /* aborted */
    } finally {
      s.ended = true;
      clearTimeout(timer);
      finish();
    }
  })();
  s.waitFor = (pred, ms = 10000) =>
    waitForItem(s.messages, listeners, pred, ms, `message on the POST answer (have: ${JSON.stringify(s.messages).slice(0, 800)})`);
  s.close = () => {
    clearTimeout(timer);
    ac.abort();
  };
  return s;
}

/**
 * Sends a stateless request and waits for its whole answer. Returns the
 * openPost() state plus `request` ({id, body, headers}) and `message` (the
 * response to the request's id, else the first response). `opts.raw`
 * replaces the body sent.
 */
export async function srpc(url, method, params, opts = {}) {
  const request = statelessRequest(method, params, opts);
  const s = await openPost(url, opts.raw ?? request.body, request.headers, { id: request.id, timeoutMs: opts.timeoutMs ?? 30000 });
  await withTimeout(s.done, opts.timeoutMs ?? 30000, `answer to stateless ${method}`);
  s.close();
  // The response to the request's id; else any response (an error with id null), so that a check shows it.
  const anyResponse = s.messages.find((m) => m && typeof m === 'object' && !('method' in m) && ('result' in m || 'error' in m));
  return { ...s, request, message: s.final ?? anyResponse };
}

/** The result of a stateless request; throws on a JSON-RPC error or a non-200. */
export async function sresult(url, method, params, opts) {
  const r = await srpc(url, method, params, opts);
  if (r.status !== 200 || !r.message || r.message.error) throw new Error(`stateless ${method}: HTTP ${r.status} ${r.text}`);
  return r.message.result;
}

/** The notifications of an answer (every message that is neither a request nor a response). */
export function notificationsOf(r) {
  return r.messages.filter((m) => m && typeof m === 'object' && 'method' in m && !('id' in m));
}
