// Soak driver (used by scripts/bench): WORKERS keep-alive connections call
// tb:echo for SECONDS while the gateway's stdio upstream is SIGKILLed up to
// KILLS times. Every request must get an answer: a result, or a
// clean isError naming the server (never a transport error or a hang). Then
// the gateway's open descriptors must be back to what they were, and no
// child of it may be a zombie.
//   node scripts/bench.d/soak.mjs URL GATEWAY_PID [SECONDS] [WORKERS] [KILLS]
import fs from 'node:fs';
import http from 'node:http';
import { post as postTo } from './mcp-post.mjs';

const [url, gwPid, secs = '40', workers = '32', kills = '10'] = process.argv.slice(2);
if (!url || !gwPid) {
  console.error('usage: soak.mjs URL GATEWAY_PID [SECONDS] [WORKERS] [KILLS]');
  process.exit(2);
}
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(workers) });

const post = (body, session) => postTo(target, body, session, { agent, timeoutMs: 30_000 });

const children = (pid) =>
  fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => {
      try {
        const s = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
        const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
        return { pid: Number(n), state: rest[0], ppid: Number(rest[1]) };
      } catch {
        return null;
      }
    })
    .filter((p) => p && p.ppid === Number(pid));
const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;

const init = await post({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
});
const session = init.headers?.['mcp-session-id'];
if (!session) {
  console.log(`RESULT soak failed: initialize answered ${init.status}`);
  process.exit(1);
}
const fdsBefore = fdCount(gwPid);
const end = Date.now() + Number(secs) * 1000;
const counts = { ok: 0, isError: 0, bad: 0 };
const badSamples = [];
// Each new child is killed once it has served for a second. The gateway
// restarts a crashed upstream after a backoff that doubles (100 ms to 30 s)
// until a child lives 10 s, so the kills come further and further apart.
let killed = 0;
const seen = new Map();  // child pid -> when first seen alive
const killer = setInterval(() => {
  if (killed >= Number(kills)) return;
  for (const c of children(gwPid).filter((p) => p.state !== 'Z')) {
    if (!seen.has(c.pid)) seen.set(c.pid, Date.now());
    if (Date.now() - seen.get(c.pid) >= 1000) {
      process.kill(c.pid, 'SIGKILL');
      ++killed;
      return;
    }
  }
}, 100);

await Promise.all(
  Array.from({ length: Number(workers) }, async (_, w) => {
    for (let i = 0; Date.now() < end; ++i) {
      const r = await post(
        { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'tb:echo', arguments: { text: `w${w}-${i}` } } },
        session,
      );
      if (r.status === 200 && r.data.includes(`w${w}-${i}`) && !r.data.includes('"isError":true')) ++counts.ok;
      else if (r.status === 200 && r.data.includes('"isError":true') && r.data.includes("'tb'")) ++counts.isError;
      else {
        ++counts.bad;
        if (badSamples.length < 3) badSamples.push(`${r.status} ${r.data.slice(0, 200)}`);
      }
    }
  }),
);
clearInterval(killer);
agent.destroy();
// The descriptors of the calls just answered close as their connections do.
let fdsAfter = fdCount(gwPid);
for (let i = 0; i < 50 && fdsAfter > fdsBefore; ++i) {
  await new Promise((r) => setTimeout(r, 100));
  fdsAfter = fdCount(gwPid);
}
const zombies = children(gwPid).filter((c) => c.state === 'Z').length;
console.log(
  `RESULT soak ${secs}s workers=${workers} kills=${killed} ok=${counts.ok} isError=${counts.isError} bad=${counts.bad} ` +
    `fds_before=${fdsBefore} fds_after=${fdsAfter} zombies=${zombies}`,
);
for (const s of badSamples) console.log(`  bad: ${s}`);
process.exit(counts.bad === 0 && zombies === 0 && fdsAfter <= fdsBefore ? 0 : 1);
