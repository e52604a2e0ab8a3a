// Bench driver, tasks (scripts/bench section "tasks"): SESSIONS sessions
// (default 100) each start PER_SESSION gateway-made tasks (default 10) on the
// toolbox's sleep tool, so that 1,000 tasks are in flight at once; while they
// run: the gateway's RSS and threads from /proc, and tasks/get latency
// against ping on the same gateway and session, alternated in rounds. Then
// every task is cancelled and the cancellations are checked.
//   node scripts/bench.d/tasks.mjs <gateway url> <gateway pid>
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { post } from './mcp-post.mjs';

const [url, pidArg] = process.argv.slice(2);
const target = new URL(url);
const pid = Number(pidArg);
const sessions = Number(process.env.SESSIONS ?? 100);
const perSession = Number(process.env.PER_SESSION ?? 10);
const rounds = Number(process.env.LATENCY_ROUNDS ?? 10);
const perRound = Number(process.env.LATENCY_PER_ROUND ?? 200);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
let nextId = 1;

function proc() {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'))[1]);
  return { rssMiB: field('VmRSS') / 1024, threads: field('Threads') };
}

/** The JSON-RPC answer of one request (SSE or JSON), or a thrown error. */
async function rpc(session, method, params) {
  const res = await post(target, { jsonrpc: '2.0', id: nextId++, method, params }, session, { agent });
  if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.data.slice(0, 200)}`);
  const line = res.data.startsWith('{') ? res.data : res.data.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
  const msg = JSON.parse(line);
  if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error)}`);
  return { msg, headers: res.headers };
}

async function openSession() {
  const init = {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench-tasks', version: '1' },
  };
  const res = await post(target, { jsonrpc: '2.0', id: nextId++, method: 'initialize', params: init }, undefined, { agent });
  const session = res.headers['mcp-session-id'];
  if (!session) throw new Error(`initialize: HTTP ${res.status} ${res.data.slice(0, 200)}`);
  await post(target, { jsonrpc: '2.0', method: 'notifications/initialized' }, session, { agent });
  return session;
}

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed(session, method, params) {
  const t0 = process.hrtime.bigint();
  await rpc(session, method, params);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const idle = proc();
const ids = [];
const t0 = Date.now();
const opened = await Promise.all(Array.from({ length: sessions }, openSession));
await Promise.all(
  opened.map(async (session) => {
    for (let i = 0; i < perSession; i++) {
      const { msg } = await rpc(session, 'tools/call', {
        name: 'toolbox:sleep',
        arguments: { ms: 600_000 },
        task: { ttl: 600_000 },
      });
      ids.push({ session, taskId: msg.result.task.taskId });
    }
  }),
);
const createdMs = Date.now() - t0;

// Every task still working: the 1,000 are in flight at once.
let working = 0;
for (const { session, taskId } of ids) {
  const { msg } = await rpc(session, 'tasks/get', { taskId });
  if (msg.result.status === 'working') working++;
}
const busy = proc();

const get = [];
const ping = [];
const probe = ids[0];
for (let r = 0; r < rounds; r++) {
  // Alternated per round, so neither gets the quieter moments.
  const order = r % 2 ? ['ping', 'get'] : ['get', 'ping'];
  for (const kind of order)
    for (let i = 0; i < perRound; i++) {
      if (kind === 'get') {
        const t = ids[(r * perRound + i) % ids.length];
        get.push(await timed(t.session, 'tasks/get', { taskId: t.taskId }));
      } else {
        ping.push(await timed(probe.session, 'ping', {}));
      }
    }
}
get.sort((a, b) => a - b);
ping.sort((a, b) => a - b);
const during = proc();

let cancelled = 0;
await Promise.all(
  opened.map(async (session) => {
    for (const t of ids.filter((x) => x.session === session)) {
      const { msg } = await rpc(session, 'tasks/cancel', { taskId: t.taskId });
      if (msg.result.status === 'cancelled') cancelled++;
    }
  }),
);
const after = proc();

const f = (x) => x.toFixed(3);
console.log(`tasks: ${ids.length} gateway-made tasks from ${sessions} sessions created in ${createdMs} ms; ${working} working at once`);
console.log(`  gateway RSS ${idle.rssMiB.toFixed(1)} MiB idle, ${busy.rssMiB.toFixed(1)} MiB with ${working} in flight, ` +
  `${during.rssMiB.toFixed(1)} MiB after the latency rounds, ${after.rssMiB.toFixed(1)} MiB after cancelling; ` +
  `threads ${idle.threads} idle, ${busy.threads} in flight, ${after.threads} after`);
console.log(`  tasks/get p50 ${f(pct(get, 50))} ms p99 ${f(pct(get, 99))} ms; ping p50 ${f(pct(ping, 50))} ms p99 ${f(pct(ping, 99))} ms ` +
  `(${get.length} each, one request at a time); tasks/get/ping p50 ${(pct(get, 50) / pct(ping, 50)).toFixed(2)}`);
console.log(`  tasks/cancel: ${cancelled} of ${ids.length} cancelled`);
agent.destroy();
if (working !== ids.length || cancelled !== ids.length) process.exit(1);
