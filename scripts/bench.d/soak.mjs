// Soak driver (scripts/bench's soak section): CLIENTS sessions, each on a
// keep-alive connection of its own, call without pause for SECONDS through
// one mcpgw while its upstreams are killed, reloaded and flooded:
//   - fx, an HTTP upstream (tests/integration/fault-fixture.mjs) whose tool
//     `act {key}` records every execution's key in a file, and which drops
//     the connection after carrying out every 500th act (a crash after the
//     side effect); SIGKILLed and restarted on its port every 45 s, and
//     told to flood its log (2,000 notifications/message) every 10 s;
//   - tb, the stdio toolbox: its child SIGKILLed every 20 s;
//   - talker, a stdio server (tests/integration/talker-fixture.mjs) whose
//     calls report progress (1,000 notifications in every 100th call) and
//     send log messages while they run;
//   - every 30 s a SIGHUP with a changed setting (timeout_ms) of all three,
//     so each is replaced beside its old connection.
// Every request must be answered: a result, or a clean failure (an isError
// or a JSON-RPC error naming the server); none may hang or break. No act
// key may have run twice (counted at the upstream from its record file).
// The gateway's RSS and descriptors are sampled from /proc every 5 s and
// must stay flat: the mean of the last fifth of the run within 30 % of the
// mean of the second fifth (after warm-up); descriptors back to their level
// once the clients are gone (but for the up to 64 idle keep-alive
// connections the pool keeps to the HTTP upstream); no zombie child. Exits
// non-zero otherwise.
//   node scripts/bench.d/soak.mjs BUILD_DIR [SECONDS] [CLIENTS]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { post as postTo } from './mcp-post.mjs';

const [build, secsArg = '600', clientsArg = '1000'] = process.argv.slice(2);
if (!build) {
  console.error('usage: soak.mjs BUILD_DIR [SECONDS] [CLIENTS]');
  process.exit(2);
}
const SECONDS = Number(secsArg);
const CLIENTS = Number(clientsArg);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MCPGW = path.resolve(REPO, build, 'mcpgw');
const TOOLBOX = path.resolve(REPO, build, 'examples', 'toolbox-server');
const FAULT = path.join(REPO, 'tests', 'integration', 'fault-fixture.mjs');
const TALKER = path.join(REPO, 'tests', 'integration', 'talker-fixture.mjs');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-soak-'));
const RECORD = path.join(work, 'acts.log');
const children = [];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function start(cmd, args, { stderr = 'ignore' } = {}) {
  const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', stderr] });
  children.push(p);
  return p;
}
/** Resolves with the first match of `re` in `stream`'s lines. */
function lineOf(stream, re, what) {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: stream });
    const timer = setTimeout(() => reject(new Error(`soak: timed out waiting for ${what}`)), 60_000);
    rl.on('line', (l) => {
      const m = l.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
}
const proc = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    rssMb: Number(status.match(/VmRSS:\s+(\d+)/)[1]) / 1024,
    threads: Number(status.match(/Threads:\s+(\d+)/)[1]),
    fds: fs.readdirSync(`/proc/${pid}/fd`).length,
  };
};
const kids = (pid) =>
  fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => {
      try {
        const s = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
        const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
        return { pid: Number(n), comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), state: rest[0], ppid: Number(rest[1]) };
      } catch {
        return null;
      }
    })
    .filter((p) => p && p.ppid === pid);

// ---- the upstreams and the gateway
let fx;
let fxPort = 0;
async function startFx() {
  fx = start(process.execPath, [FAULT, '--get', 'stream', '--cut-every', '500', '--record', RECORD, '--port', String(fxPort)]);
  const m = await lineOf(fx.stdout, /^listening http:\/\/127\.0\.0\.1:(\d+)\/mcp$/, 'the fx upstream');
  fxPort = Number(m[1]);
}
await startFx();
const fxUrl = `http://127.0.0.1:${fxPort}/mcp`;
const config = (n) => `welcome: {strategy: none}
listen: {host: 127.0.0.1, port: 0}
servers:
  - {name: fx, transport: http, url: "${fxUrl}", timeout_ms: ${20000 + (n % 2)}}
  - {name: tb, transport: stdio, command: "${TOOLBOX}", timeout_ms: ${20000 + (n % 2)}}
  - {name: talker, transport: stdio, command: "${process.execPath}", args: ["${TALKER}"], timeout_ms: ${20000 + (n % 2)}}
`;
const configPath = path.join(work, 'gateway.yaml');
fs.writeFileSync(configPath, config(0));
const logPath = path.join(work, 'gateway.log');
const gw = start(MCPGW, ['--config', configPath, '--log-level', 'info'], { stderr: fs.openSync(logPath, 'w') });
const log = () => fs.readFileSync(logPath, 'utf8');
let gwUrl;
for (let i = 0; i < 600 && !gwUrl; i++) {
  gwUrl = log().match(/listening on (http:\/\/\S+)/)?.[1];
  if (!gwUrl || !/start-up: every upstream tried once/.test(log())) gwUrl = undefined;
  if (!gwUrl) await sleep(100);
}
if (!gwUrl) {
  console.log(`RESULT soak failed: the gateway did not start\n${log().slice(-2000)}`);
  process.exit(1);
}
const target = new URL(gwUrl);
const fdsIdle = proc(gw.pid).fds;

// ---- the clients
const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS + 16 });
const post = (body, session) => postTo(target, body, session, { agent, timeoutMs: 60_000 });
const sessions = [];
for (let i = 0; i < CLIENTS; i += 50) {
  const batch = await Promise.all(
    Array.from({ length: Math.min(50, CLIENTS - i) }, () =>
      post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '1' } } }),
    ),
  );
  for (const r of batch) {
    const sid = r.headers?.['mcp-session-id'];
    if (!sid) {
      console.log(`RESULT soak failed: initialize answered ${r.status} ${String(r.data).slice(0, 200)}`);
      process.exit(1);
    }
    sessions.push(sid);
  }
}

/** How an answer is counted: ok, a clean failure naming `server`, or bad. */
function classify(r, server, want) {
  if (r.status !== 200) return 'bad';
  const lastData = r.data.includes('data: ') ? r.data.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6) : r.data;
  let m;
  try {
    m = JSON.parse(lastData);
  } catch {
    return 'bad';
  }
  if (m.error) return m.error.message?.includes(`'${server}'`) ? 'clean' : 'bad';
  const text = m.result?.content?.[0]?.text ?? '';
  if (m.result?.isError) return text.includes(`'${server}'`) ? (/may have been carried out/.test(text) ? 'maybe_ran' : 'clean') : 'bad';
  return want === undefined || text === want ? 'ok' : 'bad';
}

const counts = { ok: 0, clean: 0, maybe_ran: 0, bad: 0 };
const reasons = new Map(); // why a call failed (numbers blanked) -> how often
const badSamples = [];
const end = Date.now() + SECONDS * 1000;
let sent = 0;
async function client(n) {
  const session = sessions[n];
  for (let i = 0; Date.now() < end; i++) {
    const k = i % 20;
    let server, params, want;
    if (k < 14) {
      const key = `${n}-${i}`;
      [server, params, want] = ['fx', { name: 'fx:act', arguments: { key } }, `done ${key}`];
    } else if (k < 18) {
      [server, params, want] = ['tb', { name: 'tb:echo', arguments: { text: `${n}-${i}` } }, `${n}-${i}`];
    } else if (k === 18) {
      const steps = i % 100 === 18 ? 1000 : 20;
      [server, params, want] = ['talker', { name: 'talker:progress', arguments: { steps }, _meta: { progressToken: `p${n}-${i}` } }, `progressed ${steps}`];
    } else {
      [server, params, want] = ['talker', { name: 'talker:log', arguments: {} }, undefined];
    }
    const r = await post({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params }, session);
    sent++;
    const verdict = classify(r, server, want);
    counts[verdict]++;
    if (verdict !== 'ok') {
      const why = `${params.name} ${verdict}: ${(r.data.match(/mcpgw: [^"]*/)?.[0] ?? r.data.slice(0, 120)).replace(/\d+/g, 'N')}`;
      reasons.set(why, (reasons.get(why) || 0) + 1);
    }
    if (verdict === 'bad' && badSamples.length < 5) badSamples.push(`${params.name}: ${r.status} ${String(r.data).slice(0, 300)}`);
  }
}

// ---- the faults
const chaos = { tbKills: 0, fxKills: 0, reloads: 0, floods: 0 };
const timers = [
  setInterval(() => {
    for (const c of kids(gw.pid).filter((p) => p.comm.startsWith('toolbox') && p.state !== 'Z')) {
      process.kill(c.pid, 'SIGKILL');
      chaos.tbKills++;
    }
  }, 20_000),
  setInterval(async () => {
    fx.kill('SIGKILL');
    chaos.fxKills++;
    await new Promise((r) => fx.once('exit', r));
    await startFx();
  }, 45_000),
  setInterval(() => {
    fs.writeFileSync(configPath, config(++chaos.reloads));
    gw.kill('SIGHUP');
  }, 30_000),
  setInterval(() => {
    fx.stdin.write('flood 2000\n');
    chaos.floods++;
  }, 10_000),
];

// ---- the samples
const samples = [];
const sampler = setInterval(() => samples.push({ t: Date.now(), ...proc(gw.pid) }), 5_000);

const started = Date.now();
await Promise.all(sessions.map((_, n) => client(n)));
for (const t of timers) clearInterval(t);
clearInterval(sampler);
const elapsed = (Date.now() - started) / 1000;
agent.destroy();
// The sessions' connections close; the gateway's descriptors come back down.
let fdsAfter = proc(gw.pid).fds;
for (let i = 0; i < 100 && fdsAfter > fdsIdle; i++) {
  await sleep(100);
  fdsAfter = proc(gw.pid).fds;
}
const zombies = kids(gw.pid).filter((c) => c.state === 'Z').length;
const fdKinds = {};
for (const fd of fs.readdirSync(`/proc/${gw.pid}/fd`)) {
  let kind = 'other';
  try {
    kind = fs.readlinkSync(`/proc/${gw.pid}/fd/${fd}`).match(/^(socket|pipe|anon_inode)/)?.[1] ?? 'file';
  } catch {
    /* closed meanwhile */
  }
  fdKinds[kind] = (fdKinds[kind] || 0) + 1;
}

// ---- none twice: executions per key, at the upstream
const executions = new Map();
for (const key of fs.readFileSync(RECORD, 'utf8').split('\n').filter(Boolean)) executions.set(key, (executions.get(key) || 0) + 1);
const twice = [...executions.values()].filter((v) => v > 1).length;

// ---- flat: the last fifth against the second
const window = (from, to) => samples.filter((s) => s.t >= started + from * elapsed * 1000 && s.t <= started + to * elapsed * 1000);
const mean = (xs, f) => xs.reduce((a, s) => a + f(s), 0) / Math.max(1, xs.length);
const [early, late] = [window(0.2, 0.4), window(0.8, 1)];
const rssEarly = mean(early, (s) => s.rssMb);
const rssLate = mean(late, (s) => s.rssMb);
const fdsEarly = mean(early, (s) => s.fds);
const fdsLate = mean(late, (s) => s.fds);
const flat = samples.length < 10 || (rssLate <= rssEarly * 1.3 && fdsLate <= fdsEarly * 1.3 + 16);
const logBytes = fs.statSync(logPath).size;
const suppressed = [...log().matchAll(/(\d+) log messages suppressed/g)].reduce((a, m) => a + Number(m[1]), 0);

console.log(
  `RESULT soak ${SECONDS}s clients=${CLIENTS} requests=${sent} ok=${counts.ok} clean_failures=${counts.clean} ` +
    `maybe_ran=${counts.maybe_ran} bad=${counts.bad} acts_executed=${[...executions.values()].reduce((a, b) => a + b, 0)} ` +
    `keys_twice=${twice} tb_kills=${chaos.tbKills} fx_kills=${chaos.fxKills} reloads=${chaos.reloads} ` +
    `log_floods=${chaos.floods} suppressed_log_lines=${suppressed} gateway_log_bytes=${logBytes}`,
);
console.log(
  `RESULT soak rss_mb early=${rssEarly.toFixed(1)} late=${rssLate.toFixed(1)} max=${Math.max(...samples.map((s) => s.rssMb)).toFixed(1)} ` +
    `fds idle=${fdsIdle} early=${fdsEarly.toFixed(0)} late=${fdsLate.toFixed(0)} after=${fdsAfter} ${JSON.stringify(fdKinds)} ` +
    `threads=${samples.at(-1)?.threads} zombies=${zombies} flat=${flat}`,
);
for (const s of badSamples) console.log(`  bad: ${s}`);
for (const [why, n] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${n} x ${why}`);
gw.kill('SIGTERM');
await new Promise((r) => gw.once('exit', r));
for (const c of children) c.kill('SIGKILL');
fs.rmSync(work, { recursive: true, force: true });
// Idle keep-alive connections to an HTTP upstream stay pooled (64 at most).
process.exit(counts.bad === 0 && twice === 0 && zombies === 0 && fdsAfter <= fdsIdle + 64 + 8 && flat ? 0 : 1);
