// Concurrency benchmark driver (used by scripts/bench): what holding many
// clients at once costs a Streamable HTTP MCP endpoint, mcpgw or a peer
// proxy, measured from the outside. One section per run:
//   calls URL N        N sessions, then N concurrent tools/call sleep
//                      {ms: 1000}, each on a connection of its own: wall
//                      time from the first send to the last answer
//   burst URL N        N tools/call echo at once, each on a fresh connection
//                      (sessions made first): the slowest answer
//   streams URL N PID  N sessions each holding its GET stream open, then a
//                      call in each while they are: how many opened, how
//                      many calls answered, RSS and threads of process PID
//   slowloris URL N    N connections that trickle header bytes and never end
//                      them, then 50 initialize one after another: p50, p99
// Prints one RESULT line. Every loop is bounded in count and time.
//   node scripts/bench.d/concurrency.mjs SECTION URL N [PID]
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { post as postTo } from './mcp-post.mjs';

const [section, url, nText = '100', pid] = process.argv.slice(2);
const n = Number(nText);
if (!section || !url || !(n > 0)) {
  console.error('usage: concurrency.mjs calls|burst|streams|slowloris URL N [PID]');
  process.exit(2);
}
const target = new URL(url);
const DEADLINE_MS = 120_000;

/// One POST on a connection of its own (no agent: no reuse).
const post = (body, session) => postTo(target, body, session, { timeoutMs: DEADLINE_MS });

async function initialize() {
  const r = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const sid = r.headers?.['mcp-session-id'];
  if (r.status !== 200 || !sid) return null;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
  return sid;
}

/// Sessions made in batches, so that making them is not what is measured.
async function sessions(count) {
  const out = [];
  for (let i = 0; i < count; i += 200) {
    const batch = await Promise.all(Array.from({ length: Math.min(200, count - i) }, initialize));
    out.push(...batch);
  }
  return out;
}

const call = (tool, args) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } });
const answered = (r, needle) => r.status === 200 && r.data.includes(needle) && !r.data.includes('"isError":true');
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const tool = (name) => process.env.BENCH_TOOL_PREFIX + name;

async function timedCalls(sids, body, needle) {
  const lat = [];
  const start = performance.now();
  const results = await Promise.all(
    sids.map(async (sid) => {
      const t = performance.now();
      const r = sid ? await post(body, sid) : { status: 0, data: 'no session' };
      lat.push(performance.now() - t);
      return answered(r, needle);
    }),
  );
  const wall = performance.now() - start;
  lat.sort((a, b) => a - b);
  return { ok: results.filter(Boolean).length, wall, max: lat[lat.length - 1], p50: pct(lat, 50) };
}

function procStatus(p) {
  try {
    const s = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024;
    const threads = Number(/Threads:\s+(\d+)/.exec(s)?.[1] ?? 0);
    return { rss, threads };
  } catch {
    return { rss: NaN, threads: NaN };
  }
}

async function calls() {
  const sids = await sessions(n);
  const r = await timedCalls(sids, call(tool('sleep'), { ms: 1000 }), 'slept');
  console.log(`RESULT calls n=${n} answered=${r.ok} wall_ms=${r.wall.toFixed(0)} max_ms=${r.max.toFixed(0)}`);
}

async function burst() {
  const sids = await sessions(n);
  const r = await timedCalls(sids, call(tool('echo'), { text: 'hello' }), 'hello');
  console.log(`RESULT burst n=${n} answered=${r.ok} p50_ms=${r.p50.toFixed(1)} max_ms=${r.max.toFixed(1)}`);
}

/// Opens the GET stream of `sid` and resolves once its headers arrived.
function openStream(sid, sockets) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent: false,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
        timeout: DEADLINE_MS,
      },
      (res) => {
        sockets.push(req);
        res.on('data', () => {});
        res.on('error', () => {});
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function streams() {
  const sids = await sessions(n);
  const open = [];
  let opened = 0;
  for (let i = 0; i < sids.length; i += 500) {
    const batch = await Promise.all(sids.slice(i, i + 500).map((sid) => (sid ? openStream(sid, open) : false)));
    opened += batch.filter(Boolean).length;
  }
  const held = procStatus(pid);
  let ok = 0;
  for (let i = 0; i < sids.length; i += 1000) {
    const r = await timedCalls(sids.slice(i, i + 1000), call(tool('echo'), { text: 'hello' }), 'hello');
    ok += r.ok;
  }
  const after = procStatus(pid);
  for (const req of open) req.destroy();
  console.log(
    `RESULT streams n=${n} opened=${opened} calls_answered=${ok} rss_mb=${Math.max(held.rss, after.rss).toFixed(1)} ` +
      `threads=${Math.max(held.threads, after.threads)}`,
  );
}

async function slowloris() {
  const socks = [];
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve) => {
          const s = net.connect({ host: target.hostname, port: Number(target.port) }, () => {
            s.write(`POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nX-Slow: `);
            resolve();
          });
          s.on('error', resolve);
          socks.push(s);
        }),
    ),
  );
  // One more header byte per connection, as a slowloris client does.
  const drip = setInterval(() => socks.forEach((s) => s.writable && s.write('a')), 1000);
  const lat = [];
  let ok = 0;
  for (let i = 0; i < 50; ++i) {
    const t = performance.now();
    const sid = await initialize();
    lat.push(performance.now() - t);
    if (sid) ++ok;
  }
  clearInterval(drip);
  const alive = socks.filter((s) => !s.destroyed).length;
  socks.forEach((s) => s.destroy());
  lat.sort((a, b) => a - b);
  console.log(
    `RESULT slowloris n=${n} still_open=${alive} initialize_ok=${ok}/50 p50_ms=${pct(lat, 50).toFixed(2)} ` +
      `p99_ms=${pct(lat, 99).toFixed(2)}`,
  );
}

process.env.BENCH_TOOL_PREFIX ??= '';
const sections = { calls, burst, streams, slowloris };
if (!sections[section]) {
  console.error(`unknown section ${section}`);
  process.exit(2);
}
const guard = setTimeout(() => {
  console.log(`RESULT ${section} n=${n} gave up after ${DEADLINE_MS * 3} ms`);
  process.exit(1);
}, DEADLINE_MS * 3);
await sections[section]();
clearTimeout(guard);
process.exit(0);
