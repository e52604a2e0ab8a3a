// Black-box test harness for the real mcpgw binary and the example upstreams.
//
// Everything here talks to real processes over real sockets and pipes:
// temp YAML configs, spawn with captured stderr, readiness lines awaited with
// a deadline, and cleanup that always runs (SIGTERM, await exit, SIGKILL
// after a deadline). No fixed ports (port 0 everywhere) and no sleeps used as
// synchronisation: where a condition has to be waited for, it is polled with
// a deadline.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StringDecoder } from 'node:string_decoder';
import { after } from 'node:test';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD = path.resolve(REPO, process.env.MCPGW_BUILD_DIR || 'build');
export const MCPGW = path.join(BUILD, 'mcpgw');
export const BANK = path.join(BUILD, 'examples', 'bank-server');
export const TOOLBOX = path.join(BUILD, 'examples', 'toolbox-server');
export const EVERYTHING = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** Protocol revisions the contract promises on /mcp. */
export const SUPPORTED_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];
export const DEFAULT_PROTOCOL = '2025-06-18';

const STARTUP_MS = Number(process.env.MCPGW_TEST_STARTUP_MS || 15000);
const STOP_MS = 8000;

/** Fails (never skips) with a clear message when a binary is not built. */
export function requireBinaries(...bins) {
  const wanted = bins.length ? bins : [MCPGW, BANK, TOOLBOX];
  const missing = wanted.filter((b) => !existsSync(b));
  if (missing.length) {
    throw new Error(`missing binaries: ${missing.join(', ')} (build with: cmake -S . -B build && cmake --build build -j2; or set MCPGW_BUILD_DIR)`);
  }
}

// ---------------------------------------------------------------------------
// small utilities

export function delay(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `fn` until it returns a truthy value (returned) or the deadline
 * passes (throws, with the last value/error in the message). The pause
 * between attempts only paces the polling; the condition decides.
 */
export async function pollUntil(fn, { timeoutMs = 10000, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.stack || last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${detail}`);
    }
    await delay(intervalMs);
  }
}

/** Rejects after `ms` with a message naming `what`. */
export function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

/**
 * The messages a fixture appended to `file`, one JSON document a line, as
 * they are now ([] before the file exists). A line that does not parse is
 * kept as {unparsable: line}.
 */
export function readJsonLines(file) {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { unparsable: l };
      }
    });
}

/**
 * Resolves with the first item of `seen` (past, or pushed later with every
 * function of `listeners` called on it) for which `pred` is true.
 */
export function waitForItem(seen, listeners, pred, timeoutMs, what) {
  const hit = seen.find(pred);
  if (hit) return Promise.resolve(hit);
  return withTimeout(
    new Promise((resolve) => {
      const l = (item) => {
        if (pred(item)) {
          listeners.splice(listeners.indexOf(l), 1);
          resolve(item);
        }
      };
      listeners.push(l);
    }),
    timeoutMs,
    what,
  );
}

/** A TCP port that was free a moment ago and now has nobody listening. */
export async function closedPort() {
  const srv = net.createServer();
  await new Promise((res, rej) => srv.listen(0, '127.0.0.1', res).on('error', rej));
  const { port } = srv.address();
  await new Promise((res) => srv.close(res));
  return port;
}

/** A fresh temp dir, removed when the test file ends. */
export function tempDir(prefix = 'mcpgw-test-') {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  fileCleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// ---------------------------------------------------------------------------
// YAML

function yamlScalar(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  // A JSON string is a valid YAML double-quoted scalar.
  return JSON.stringify(String(v));
}

/** Serialises plain data to block-style YAML (strings double-quoted). */
export function toYaml(value, indent = 0) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}[]\n`;
    let out = '';
    for (const item of value) {
      if (item !== null && typeof item === 'object' && (Array.isArray(item) ? item.length : Object.keys(item).length)) {
        const inner = toYaml(item, indent + 2);
        out += `${pad}- ${inner.slice(indent + 2)}`;
      } else {
        out += `${pad}- ${inlineEmpty(item) ?? yamlScalar(item)}\n`;
      }
    }
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return `${pad}{}\n`;
    let out = '';
    for (const k of keys) {
      const v = value[k];
      if (v === undefined) continue;
      const empty = inlineEmpty(v);
      if (empty !== undefined) out += `${pad}${k}: ${empty}\n`;
      else if (v !== null && typeof v === 'object') out += `${pad}${k}:\n${toYaml(v, indent + 2)}`;
      else out += `${pad}${k}: ${yamlScalar(v)}\n`;
    }
    return out;
  }
  return `${pad}${yamlScalar(value)}\n`;
}

function inlineEmpty(v) {
  if (Array.isArray(v) && v.length === 0) return '[]';
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return '{}';
  return undefined;
}

/**
 * Writes a config (object → YAML, or raw text) to a new file in `dir`.
 * MCPGW_PLUGIN_ISOLATION (process | none), when set, is the isolation of
 * every plugin entry that names none: the plugin tests run under both
 * (plugins-in-process.test.mjs).
 */
let configCounter = 0;
export function writeConfig(dir, config, name) {
  const file = path.join(dir, name || `gateway-${++configCounter}.yaml`);
  const isolation = process.env.MCPGW_PLUGIN_ISOLATION;
  if (isolation && typeof config === 'object' && Array.isArray(config.plugins))
    config = { ...config, plugins: config.plugins.map((p) => ({ isolation, ...p })) };
  writeFileSync(file, typeof config === 'string' ? config : toYaml(config));
  return file;
}

/** Server entries for the example upstreams. */
export function bankStdio(extra = {}) {
  return { name: 'bank', transport: 'stdio', command: BANK, args: [], ...extra };
}
export function toolboxStdio(extra = {}) {
  return { name: 'toolbox', transport: 'stdio', command: TOOLBOX, args: [], ...extra };
}
export function httpServer(name, url, extra = {}) {
  return { name, transport: 'http', url, ...extra };
}

// ---------------------------------------------------------------------------
// processes

const MAX_CAPTURE = 256 * 1024;

/** A spawned child with captured output, line waiters and safe stopping. */
export class Proc {
  constructor(label, command, args, opts = {}) {
    this.label = label;
    this.command = command;
    this.args = args;
    this.stdoutText = '';
    this.stderrText = '';
    this.lineWaiters = [];
    this.exitInfo = null;
    this.child = spawn(command, args, {
      cwd: opts.cwd || REPO,
      env: { ...process.env, ...(opts.env || {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      this.child.on('error', (err) => {
        this.spawnError = err;
        this.exitInfo = { code: null, signal: null, error: err };
        resolve(this.exitInfo);
      });
    });
    // Keep stdin open (stdio servers exit on EOF) but never let it crash us.
    this.child.stdin.on('error', () => {});
    // With opts.rawStdout, the bytes as they came (a test of what crosses
    // the wire must not see them through a lenient decoder).
    this.stdoutBytes = opts.rawStdout ? [] : null;
    const capture = (stream, key) => {
      let partial = '';
      const decoder = new StringDecoder('utf8');
      stream.on('data', (bytes) => {
        if (key === 'stdoutText' && this.stdoutBytes) this.stdoutBytes.push(bytes);
        const chunk = decoder.write(bytes);
        if (this[key].length < MAX_CAPTURE) this[key] += chunk;
        else if (!this[key].endsWith('[...truncated]')) this[key] += '\n[...truncated]';
        partial += chunk;
        let i;
        while ((i = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, i).replace(/\r$/, '');
          partial = partial.slice(i + 1);
          this._onLine(key === 'stdoutText' ? 'stdout' : 'stderr', line);
        }
      });
      stream.on('end', () => {
        if (partial) this._onLine(key === 'stdoutText' ? 'stdout' : 'stderr', partial);
        partial = '';
      });
    };
    capture(this.child.stdout, 'stdoutText');
    capture(this.child.stderr, 'stderrText');
    registry.add(this);
  }

  _onLine(stream, line) {
    for (const w of [...this.lineWaiters]) {
      if (w.stream !== stream) continue;
      const m = line.match(w.re);
      if (m) {
        this.lineWaiters.splice(this.lineWaiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  }

  /** Resolves with the regex match of the first line (of `stream`) matching `re`. */
  waitForLine(stream, re, timeoutMs = STARTUP_MS) {
    const existing = (stream === 'stdout' ? this.stdoutText : this.stderrText).split('\n');
    for (const line of existing) {
      const m = line.match(re);
      if (m) return Promise.resolve(m);
    }
    return new Promise((resolve, reject) => {
      const w = { stream, re, resolve };
      this.lineWaiters.push(w);
      const timer = setTimeout(() => {
        this.lineWaiters.splice(this.lineWaiters.indexOf(w), 1);
        reject(new Error(`${this.label}: no ${stream} line matching ${re} within ${timeoutMs} ms\n${this.diagnostics()}`));
      }, timeoutMs);
      this.exited.then((info) => {
        clearTimeout(timer);
        if (this.lineWaiters.includes(w)) {
          this.lineWaiters.splice(this.lineWaiters.indexOf(w), 1);
          reject(new Error(`${this.label} exited (${JSON.stringify(info)}) before printing a line matching ${re}\n${this.diagnostics()}`));
        }
      });
      const origResolve = w.resolve;
      w.resolve = (m) => {
        clearTimeout(timer);
        origResolve(m);
      };
    });
  }

  get alive() {
    return this.exitInfo === null;
  }

  /** Sends `signal`, awaits exit; SIGKILL after `timeoutMs`. Returns {code, signal, killed}. */
  async stop({ signal = 'SIGTERM', timeoutMs = STOP_MS } = {}) {
    if (!this.alive) return { ...this.exitInfo, killed: false };
    try {
      this.child.kill(signal);
    } catch {
      /* already gone */
    }
    let timer;
    const killed = await Promise.race([
      this.exited.then(() => false),
      new Promise((r) => {
        timer = setTimeout(() => r(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (killed) {
      try {
        this.child.kill('SIGKILL');
      } catch {
        /* gone */
      }
      await this.exited;
    }
    return { ...this.exitInfo, killed };
  }

  /** Resolves with exit info, or rejects after `timeoutMs`. */
  waitExit(timeoutMs = STOP_MS) {
    return withTimeout(this.exited, timeoutMs, `${this.label} (pid ${this.pid}) to exit`);
  }

  diagnostics(maxChars = 6000) {
    const tail = (s) => (s.length > maxChars ? `[...]${s.slice(-maxChars)}` : s);
    let out = `--- ${this.label} (pid ${this.pid}: ${this.command} ${this.args.join(' ')}) stderr ---\n${tail(this.stderrText)}`;
    if (this.stdoutText) out += `\n--- ${this.label} stdout ---\n${tail(this.stdoutText)}`;
    if (this.exitInfo) out += `\n--- ${this.label} exit: ${JSON.stringify(this.exitInfo)}`;
    return out;
  }
}

/** Every process started by this test file; all stopped at the end. */
const registry = new Set();
/** Other end-of-file cleanups (temp dirs, tap servers), run after the processes stopped. */
const fileCleanups = [];
after(async () => {
  await Promise.all([...registry].map((p) => p.stop({ timeoutMs: 3000 })));
  for (const c of fileCleanups.splice(0)) await c();
});

const extraDiagnostics = [];
/** Adds a diagnostics source (e.g. an SDK-spawned process's stderr) to failure reports. */
export function addDiagnostics(label, fn) {
  extraDiagnostics.push({ label, fn });
}

/** Stderr (and stdout) tails of every process this file started. */
export function allDiagnostics() {
  const parts = [...registry].map((p) => p.diagnostics());
  for (const { label, fn } of extraDiagnostics) {
    let text;
    try {
      text = String(fn());
    } catch (e) {
      text = String(e);
    }
    parts.push(`--- ${label} ---\n${text.length > 6000 ? `[...]${text.slice(-6000)}` : text}`);
  }
  return parts.join('\n');
}

/**
 * Wraps a test body so that a failure carries the stderr of every process
 * this file started (the gateway's logs explain most failures).
 */
export function withDiagnostics(fn) {
  return async (t, ...rest) => {
    try {
      return await fn(t, ...rest);
    } catch (err) {
      const diag = allDiagnostics();
      if (err && typeof err === 'object') {
        try {
          err.message = `${err.message}\n\n==== process diagnostics ====\n${diag}`;
        } catch {
          /* read-only message */
        }
      }
      throw err;
    }
  };
}

/**
 * Starts mcpgw in HTTP mode on a free port. `config.listen.port` is forced
 * to 0. Resolves as soon as it listens: like a client after a restart, a
 * test's first request goes out while upstreams still connect (the gateway
 * answers it whole, startup_wait_ms). `waitUpstreams: true` resolves once
 * every upstream has had its first connection attempt instead. Returns {proc, url (MCP endpoint), base (scheme://host:port),
 * port, configPath}.
 */
export async function startGateway(config, { dir, env, extraArgs = [], logLevel = 'debug', label = 'mcpgw', waitUpstreams = false } = {}) {
  requireBinaries(MCPGW);
  const d = dir || tempDir();
  const cfg = typeof config === 'string' ? config : { ...config, listen: { host: '127.0.0.1', path: '/mcp', ...(config.listen || {}), port: 0 } };
  const configPath = writeConfig(d, cfg);
  const proc = new Proc(label, MCPGW, ['--config', configPath, '--log-level', logLevel, ...extraArgs], { env });
  const m = await proc.waitForLine('stderr', /listening on (https?:\/\/[^\s"'\],}]+)/);
  if (waitUpstreams) await proc.waitForLine('stderr', /start-up: every upstream tried once/, Math.max(STARTUP_MS, 60000));
  const url = m[1];
  const u = new URL(url);
  return { proc, url, base: `${u.protocol}//${u.host}`, port: Number(u.port), host: u.hostname, configPath, dir: d };
}

/** Starts mcpgw --stdio with a StdioClient attached (rawStdout: see Proc). */
export function startGatewayStdio(config, { dir, env, extraArgs = [], logLevel = 'debug', label = 'mcpgw-stdio', rawStdout = false } = {}) {
  requireBinaries(MCPGW);
  const d = dir || tempDir();
  const configPath = writeConfig(d, config);
  const proc = new Proc(label, MCPGW, ['--config', configPath, '--stdio', '--log-level', logLevel, ...extraArgs], { env, rawStdout });
  return { proc, client: new StdioClient(proc), configPath, dir: d };
}

/**
 * Starts an example upstream (bank-server / toolbox-server) in Streamable
 * HTTP mode on a free port; resolves once it printed its URL.
 */
export async function startUpstreamHttp(bin, args = [], { label } = {}) {
  requireBinaries(bin);
  const proc = new Proc(label || path.basename(bin), bin, ['--http', '0', ...args]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)\s*$/);
  return { proc, url: m[1] };
}

// ---------------------------------------------------------------------------
// HTTP JSON-RPC client (raw fetch)

/** Incremental SSE parser: feed text, get events {data, event, id, comments}. */
export class SseParser {
  constructor() {
    this.buf = '';
    this.comments = [];
  }
  push(text) {
    this.buf += text;
    const events = [];
    for (;;) {
      const m = this.buf.match(/\r\n\r\n|\n\n|\r\r/);
      if (!m) break;
      const block = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = { data: [], event: 'message', id: undefined, comments: [] };
      for (const line of block.split(/\r\n|\n|\r/)) {
        if (line.startsWith(':')) {
          ev.comments.push(line);
          this.comments.push(line);
          continue;
        }
        const idx = line.indexOf(':');
        const field = idx < 0 ? line : line.slice(0, idx);
        let value = idx < 0 ? '' : line.slice(idx + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') ev.data.push(value);
        else if (field === 'event') ev.event = value;
        else if (field === 'id') ev.id = value;
      }
      ev.data = ev.data.length ? ev.data.join('\n') : undefined;
      events.push(ev);
    }
    return events;
  }
}

function idsOf(body) {
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return null; // unknown: wait for the first response
    }
  }
  const arr = Array.isArray(body) ? body : [body];
  const ids = arr.filter((m) => m && typeof m === 'object' && 'method' in m && 'id' in m && m.id !== null).map((m) => m.id);
  return ids;
}

function isResponse(m) {
  return m && typeof m === 'object' && ('result' in m || 'error' in m) && !('method' in m);
}

/**
 * POSTs a JSON-RPC message (object, array or raw string) to `url`.
 * Accepts an application/json or text/event-stream answer; for SSE reads
 * until every request id in the body has been answered (or the first
 * response when the body's ids are unknown). Returns {status, headers,
 * contentType, messages, message (the response to the first id), text}.
 */
export async function rpc(url, body, { session, headers = {}, protocolVersion, timeoutMs = 20000, method = 'POST' } = {}) {
  const h = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(session ? { 'mcp-session-id': session } : {}),
    ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
    ...headers,
  };
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`rpc timed out after ${timeoutMs} ms: ${payload.slice(0, 200)}`)), timeoutMs);
  try {
    const res = await fetch(url, { method, headers: h, body: method === 'GET' || method === 'DELETE' ? undefined : payload, signal: ac.signal });
    const contentType = (res.headers.get('content-type') || '').toLowerCase();
    const out = { status: res.status, headers: res.headers, contentType, messages: [], message: undefined, text: '' };
    if (contentType.startsWith('text/event-stream')) {
      const want = idsOf(body);
      const pending = want === null ? null : new Set(want);
      const parser = new SseParser();
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let done = pending !== null && pending.size === 0;
      while (!done) {
        const { value, done: eof } = await reader.read();
        if (eof) break;
        const chunk = dec.decode(value, { stream: true });
        out.text += chunk;
        for (const ev of parser.push(chunk)) {
          if (ev.data === undefined) continue;
          let msg;
          try {
            msg = JSON.parse(ev.data);
          } catch (e) {
            throw new Error(`SSE event data is not JSON: ${ev.data}`);
          }
          for (const m of Array.isArray(msg) ? msg : [msg]) {
            out.messages.push(m);
            if (isResponse(m)) {
              if (pending === null) done = true;
              else {
                pending.delete(m.id);
                if (pending.size === 0) done = true;
              }
            }
          }
        }
      }
      await reader.cancel().catch(() => {});
    } else {
      out.text = await res.text();
      if (out.text.length) {
        try {
          const parsed = JSON.parse(out.text);
          out.json = parsed;
          if (contentType.startsWith('application/json')) out.messages = Array.isArray(parsed) ? parsed : [parsed];
        } catch {
          /* not JSON; leave text */
        }
      }
    }
    const ids = idsOf(body);
    if (ids && ids.length) out.message = out.messages.find((m) => isResponse(m) && m.id === ids[0]);
    else out.message = out.messages.find(isResponse);
    return out;
  } finally {
    clearTimeout(timer);
  }
}

/** Plain GET (for /healthz, /readyz, /metrics). */
export async function httpGet(url, { headers = {}, timeoutMs = 10000 } = {}) {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/**
 * A raw node:http request (full control over Host and other headers that
 * fetch manages itself). Returns {status, headers, body}.
 */
export function rawHttp(url, { method = 'POST', headers = {}, body, chunked = false, timeoutMs = 10000 } = {}) {
  const u = new URL(url);
  headers = { ...headers };
  if (body !== undefined) {
    // node:http would send a body without Content-Length chunked; be explicit.
    if (chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = Buffer.byteLength(body);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, setHost: !Object.keys(headers).some((k) => k.toLowerCase() === 'host') },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          data += c;
        });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`rawHttp timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

let nextId = 1;
export function newId() {
  return nextId++;
}

/** An MCP client session over Streamable HTTP, built on rpc(). */
export class HttpClient {
  constructor(url, { headers = {} } = {}) {
    this.url = url;
    this.headers = headers;
    this.session = undefined;
    this.protocolVersion = undefined;
  }

  async initialize({ protocolVersion = DEFAULT_PROTOCOL, capabilities = {}, clientInfo = { name: 'mcpgw-tests', version: '0.0.0' } } = {}) {
    const id = newId();
    const res = await rpc(this.url, { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities, clientInfo } }, { headers: this.headers });
    if (res.status !== 200 || !res.message || res.message.error) {
      throw new Error(`initialize failed: HTTP ${res.status} ${res.text || JSON.stringify(res.messages)}`);
    }
    this.session = res.headers.get('mcp-session-id') || undefined;
    this.initResult = res.message.result;
    this.protocolVersion = res.message.result.protocolVersion;
    this.initResponse = res;
    const n = await this.notify('notifications/initialized');
    this.initializedStatus = n.status;
    return this.initResult;
  }

  opts(extra = {}) {
    return { session: this.session, protocolVersion: this.protocolVersion, headers: this.headers, ...extra };
  }

  /** Sends a request; returns the whole rpc() answer. */
  async send(method, params, extra) {
    const msg = { jsonrpc: '2.0', id: newId(), method };
    if (params !== undefined) msg.params = params;
    return rpc(this.url, msg, this.opts(extra));
  }

  /** Sends a request and returns its JSON-RPC response message (result or error). */
  async request(method, params, extra) {
    const res = await this.send(method, params, extra);
    if (!res.message) throw new Error(`no JSON-RPC response to ${method}: HTTP ${res.status} ${res.text}`);
    return res.message;
  }

  /** Returns `result`, throwing on a JSON-RPC error. */
  async result(method, params, extra) {
    const m = await this.request(method, params, extra);
    if (m.error) throw Object.assign(new Error(`${method} → JSON-RPC error ${JSON.stringify(m.error)}`), { rpcError: m.error });
    return m.result;
  }

  async notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    return rpc(this.url, msg, this.opts());
  }

  /** tools/call → result (a tool result, possibly isError). */
  callTool(name, args = {}, extra) {
    return this.result('tools/call', { name, arguments: args }, extra);
  }

  /** tools/list drained across pages. */
  async listAllTools() {
    return drainTools((cursor) => this.result('tools/list', cursor ? { cursor } : {}));
  }

  async close() {
    if (!this.session) return undefined;
    try {
      const res = await fetch(this.url, { method: 'DELETE', headers: { 'mcp-session-id': this.session, ...(this.protocolVersion ? { 'mcp-protocol-version': this.protocolVersion } : {}), ...this.headers }, signal: AbortSignal.timeout(5000) });
      await res.text();
      return res.status;
    } catch {
      return undefined;
    }
  }
}

/** Follows nextCursor; returns {tools, pages}. */
export async function drainTools(fetchPage, maxPages = 200) {
  const tools = [];
  const pages = [];
  let cursor;
  for (let i = 0; i < maxPages; i++) {
    const r = await fetchPage(cursor);
    pages.push(r);
    tools.push(...r.tools);
    if (r.nextCursor === undefined || r.nextCursor === null) return { tools, pages };
    cursor = r.nextCursor;
  }
  throw new Error(`tools/list did not end after ${maxPages} pages`);
}

/** Opens an HTTP MCP session against `url` (gateway or upstream). */
export async function connectHttp(url, opts = {}) {
  const c = new HttpClient(url, opts);
  await c.initialize(opts);
  return c;
}

// ---------------------------------------------------------------------------
// stdio JSON-RPC client

/** Newline-delimited JSON-RPC over a Proc's stdin/stdout, matched by id. */
export class StdioClient {
  constructor(proc) {
    this.proc = proc;
    this.pending = new Map();
    this.lines = [];
    this.badLines = [];
    this.messages = [];
    this.serverRequests = [];
    const origOnLine = proc._onLine.bind(proc);
    proc._onLine = (stream, line) => {
      origOnLine(stream, line);
      if (stream === 'stdout') this._onStdoutLine(line);
    };
    proc.exited.then((info) => {
      for (const [id, p] of this.pending) p.reject(new Error(`${proc.label} exited (${JSON.stringify(info)}) before answering request ${id}`));
      this.pending.clear();
    });
  }

  _onStdoutLine(line) {
    this.lines.push(line);
    if (line.trim() === '') {
      this.badLines.push(line);
      return;
    }
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.badLines.push(line);
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      this.messages.push(m);
      if (isResponse(m) && this.pending.has(m.id)) {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        p.resolve(m);
      } else if (m && m.method && 'id' in m) {
        this.serverRequests.push(m);
        // Answer server→client pings so nothing hangs on us.
        if (m.method === 'ping') this.write({ jsonrpc: '2.0', id: m.id, result: {} });
      }
    }
  }

  write(msg) {
    this.proc.child.stdin.write(`${typeof msg === 'string' ? msg : JSON.stringify(msg)}\n`);
  }

  /** Sends a request; resolves with the response message (result or error). */
  request(method, params, timeoutMs = 20000) {
    const id = newId();
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    const p = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.write(msg);
    return withTimeout(p, timeoutMs, `${this.proc.label}: response to ${method} (id ${id})`);
  }

  async result(method, params, timeoutMs) {
    const m = await this.request(method, params, timeoutMs);
    if (m.error) throw Object.assign(new Error(`${method} → JSON-RPC error ${JSON.stringify(m.error)}`), { rpcError: m.error });
    return m.result;
  }

  notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    this.write(msg);
  }

  async initialize({ protocolVersion = DEFAULT_PROTOCOL, capabilities = {} } = {}) {
    const r = await this.result('initialize', { protocolVersion, capabilities, clientInfo: { name: 'mcpgw-tests', version: '0.0.0' } });
    this.notify('notifications/initialized');
    this.initResult = r;
    return r;
  }

  callTool(name, args = {}, timeoutMs) {
    return this.result('tools/call', { name, arguments: args }, timeoutMs);
  }

  listAllTools() {
    return drainTools((cursor) => this.result('tools/list', cursor ? { cursor } : {}));
  }

  closeStdin() {
    this.proc.child.stdin.end();
  }
}

/** Spawns an example upstream in stdio mode and returns an initialised StdioClient. */
export async function directStdio(bin, args = []) {
  requireBinaries(bin);
  const proc = new Proc(`${path.basename(bin)}-direct`, bin, args);
  const client = new StdioClient(proc);
  await client.initialize();
  return client;
}

// ---------------------------------------------------------------------------
// results and tools

/** The concatenated text of a tool result's text content. */
export function textOf(result) {
  return (result.content || [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

export function toolByName(tools, name) {
  return tools.find((t) => t.name === name);
}

// ---------------------------------------------------------------------------
// /proc

/** {pid, ppid, state, starttime, comm} of `pid`, or null when gone. */
export function procStat(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = s.lastIndexOf(')');
  const comm = s.slice(s.indexOf('(') + 1, close);
  const rest = s.slice(close + 2).split(' ');
  return { pid, comm, state: rest[0], ppid: Number(rest[1]), starttime: rest[19] };
}

/** Every live descendant of `pid` (recursive), as procStat records. */
export function descendants(pid) {
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st) all.push(st);
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const st of all) {
      if (st.ppid === p) {
        out.push(st);
        queue.push(st.pid);
      }
    }
  }
  return out;
}

/** True when the process recorded in `st` no longer exists (zombies count as alive: nobody reaped them). */
export function isGone(st) {
  const now = procStat(st.pid);
  return now === null || now.starttime !== st.starttime;
}

/** Waits (with a deadline) until every process in `stats` is gone; returns the survivors otherwise. */
export async function waitGone(stats, timeoutMs = 5000) {
  try {
    await pollUntil(() => stats.every(isGone), { timeoutMs, what: 'processes to be gone' });
    return [];
  } catch {
    return stats.filter((s) => !isGone(s)).map((s) => ({ ...s, now: procStat(s.pid) }));
  }
}

/** The first integer in a tool result's text (toolbox `pid`), or structuredContent.pid. */
export function pidFromResult(r) {
  if (r.structuredContent && Number.isInteger(r.structuredContent.pid)) return r.structuredContent.pid;
  const m = textOf(r).match(/\d+/);
  if (!m) throw new Error(`no pid in ${JSON.stringify(r)}`);
  return Number(m[0]);
}

/**
 * A transparent HTTP tap in front of an upstream: forwards every request
 * unchanged (streams included) and calls `onRequest(parsedBody)` once the
 * request body has arrived, so a test can wait for "the gateway has sent
 * this call upstream" instead of sleeping. With `cut(parsedBody)` true for
 * a request, its answer is read from the upstream and then dropped with
 * the connection it came on (a server that crashed after doing the work).
 */
export async function startTap(targetUrl, { cut } = {}) {
  const target = new URL(targetUrl);
  const listeners = [];
  const seen = [];
  const seenHeaders = new WeakMap(); // body -> the request's headers
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let parsed;
      try {
        parsed = body.length ? JSON.parse(body.toString('utf8')) : undefined;
      } catch {
        parsed = undefined;
      }
      const headers = { ...req.headers, host: target.host };
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (upRes) => {
        if (cut && parsed !== undefined && cut(parsed)) {
          upRes.resume();
          upRes.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(e));
      });
      res.on('close', () => up.destroy());
      up.end(body);
      if (parsed !== undefined) {
        seenHeaders.set(parsed, req.headers);
        seen.push(parsed);
        for (const l of [...listeners]) l(parsed);
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  fileCleanups.push(() => {
    server.closeAllConnections?.();
    return new Promise((r) => server.close(r));
  });
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    seen,
    /** The HTTP headers (lower-cased names) of request body `body` (one of `seen`). */
    headersOf(body) {
      return seenHeaders.get(body);
    },
    /** Resolves with the first (past or future) request body for which `pred` is true. */
    waitFor(pred, timeoutMs = 10000) {
      return waitForItem(seen, listeners, pred, timeoutMs, 'tap: upstream request');
    },
  };
}

// ---------------------------------------------------------------------------
// in-flight detection without sleeping, and the session GET stream

// clock_nanosleep's syscall number, by architecture: glibc's nanosleep()
// (std::this_thread::sleep_for, the example upstreams' `sleep` tool) makes
// it. Plain nanosleep is left out: a sanitizer runtime keeps a thread of
// its own in it all the time (ThreadSanitizer's background thread).
const CLOCK_NANOSLEEP = { x64: 230, arm64: 115 }[process.arch];

/**
 * How many threads of `pid` are blocked in clock_nanosleep (the example
 * upstreams' `sleep` tool): proof that so many `sleep` calls have reached
 * that upstream process, for stdio upstreams where no tap can sit in
 * between. A thread's syscall decides; its wait channel only where the
 * syscall cannot be read.
 */
export function threadsSleeping(pid) {
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  let n = 0;
  for (const tid of tids) {
    let nr;
    try {
      nr = Number(readFileSync(`/proc/${pid}/task/${tid}/syscall`, 'utf8').split(' ')[0]);
    } catch {
      /* thread gone, or its syscall not readable */
    }
    if (nr !== undefined && !Number.isNaN(nr)) {
      if (nr === CLOCK_NANOSLEEP) n++;
      continue;
    }
    try {
      if (/nanosleep/.test(readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8'))) n++;
    } catch {
      /* thread gone or wchan hidden */
    }
  }
  return n;
}

/** True when some thread of `pid` is in nanosleep (see threadsSleeping). */
export function threadSleeping(pid) {
  return threadsSleeping(pid) > 0;
}

/** Polls until a thread of `pid` is in nanosleep (see threadSleeping). */
export function waitSleeping(pid, timeoutMs = 10000) {
  return pollUntil(() => threadSleeping(pid), { timeoutMs, intervalMs: 10, what: `a thread of pid ${pid} to be in nanosleep` });
}

/**
 * Opens the session's GET SSE stream. Resolves once the response headers
 * arrived with {status, headers, messages, waitFor(pred, ms), close()}.
 */
export async function openGetStream(client, { timeoutMs = 60000 } = {}) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const res = await fetch(client.url, {
    method: 'GET',
    headers: { accept: 'text/event-stream', 'mcp-session-id': client.session, 'mcp-protocol-version': client.protocolVersion, ...client.headers },
    signal: ac.signal,
  });
  const messages = [];
  const listeners = [];
  const parser = new SseParser();
  const stream = { status: res.status, headers: res.headers, messages, raw: '', ended: false };
  if (res.status === 200 && res.body) {
    (async () => {
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const chunk = dec.decode(value, { stream: true });
          stream.raw += chunk;
          for (const ev of parser.push(chunk)) {
            if (ev.data === undefined) continue;
            const msg = JSON.parse(ev.data);
            messages.push(msg);
            for (const l of [...listeners]) l(msg);
          }
        }
      } catch {
        /* aborted */
      } finally {
        stream.ended = true;
      }
    })();
  } else {
    await res.text().catch(() => {});
  }
  stream.waitFor = (pred, ms = 10000) => {
    const hit = messages.find(pred);
    if (hit) return Promise.resolve(hit);
    return withTimeout(
      new Promise((resolve) => {
        const l = (m) => {
          if (pred(m)) {
            listeners.splice(listeners.indexOf(l), 1);
            resolve(m);
          }
        };
        listeners.push(l);
      }),
      ms,
      `GET stream message (have: ${JSON.stringify(messages).slice(0, 500)})`,
    );
  };
  stream.close = () => {
    clearTimeout(timer);
    ac.abort();
  };
  fileCleanups.unshift(() => stream.close());
  return stream;
}

// ---------------------------------------------------------------------------
// nextTool chains (toolbox-server --chain-tool chain)

/**
 * Arguments of toolbox `chain` for a chain of chain calls with texts
 * `texts` (the first is the client's own call), ending, when `last` is given,
 * with a hop to `last.tool` with `last.arguments`. `failAt` makes that call
 * (index into `texts`) an isError result.
 */
export function chainArgs(texts, last, { failAt } = {}) {
  let args;
  for (let i = texts.length - 1; i >= 0; i--) {
    const a = { text: texts[i] };
    if (i === failAt) a.is_error = true;
    if (args) {
      a.next = 'chain';
      a.next_arguments = args;
    } else if (last) {
      a.next = last.tool;
      a.next_arguments = last.arguments ?? {};
    }
    args = a;
  }
  return args;
}

/** `_meta["mcpgw/chain"]` of a result (throws when missing). */
export function chainTrace(result) {
  const trace = result?._meta?.['mcpgw/chain'];
  if (!Array.isArray(trace)) throw new Error(`no _meta["mcpgw/chain"] array in ${JSON.stringify(result)}`);
  return trace;
}

/** The texts of a tool result's text content items, in order. */
export function textsOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text);
}

/** True when `nextTool` appears anywhere in the value (result, _meta, content). */
export function mentionsNextTool(value) {
  return JSON.stringify(value).includes('"nextTool"');
}
