// scripts/bench's large section, for a stdio client (Claude Desktop's way
// in): `mcpgw --stdio` in front of tests/bench/echo_upstream over HTTP, one
// tools/call of its `blob` tool (an image of MIB MiB of base64) after the
// other, and the gateway's CPU per MiB of answer (from the scheduler:
// /proc/PID/task/*/schedstat) and peak RSS growth per MiB (VmHWM after the
// calls against VmRSS after a small warm-up call). Every answer must be
// whole. With LARGE_UPSTREAM=stdio the upstream is echo_upstream over
// stdio (a child of the gateway) instead.
//   node stdio-large.mjs BUILD [rounds] [mib]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const [buildArg, rounds = '5', mib = '16'] = process.argv.slice(2);
const build = path.resolve(buildArg);  // the gateway reads a command relative to its config
const n = Number(rounds);
const size = Number(mib) << 20;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stdio-large-'));
const overStdio = process.env.LARGE_UPSTREAM === 'stdio';
const echo = path.join(build, 'tests/echo_upstream');
const up = overStdio ? null : spawn(echo, ['--http', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const server = overStdio
  ? `{name: eh, transport: stdio, command: "${echo}"}`
  : `{name: eh, transport: http, url: "${await new Promise((resolve) =>
      readline.createInterface({ input: up.stdout }).on('line', (l) => {
        const m = /(http:\/\/\S+)/.exec(l);
        if (m) resolve(m[1]);
      }),
    )}"}`;
const config = path.join(dir, 'gw.yaml');
fs.writeFileSync(config, `servers:\n  - ${server}\nwelcome: {strategy: none}\n`);
const gw = spawn(path.join(build, 'mcpgw'), ['--config', config, '--stdio', '--log-level', 'error'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const waiting = new Map();
readline.createInterface({ input: gw.stdout, crlfDelay: Infinity }).on('line', (line) => {
  const id = Number(/"id":(\d+)/.exec(line.slice(0, 40))?.[1]);
  waiting.get(id)?.(line);
  waiting.delete(id);
});
let next = 1;
const call = (method, params) =>
  new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    gw.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
const status = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${gw.pid}/status`, 'utf8'))[1]);
const cpuNs = () =>
  fs.readdirSync(`/proc/${gw.pid}/task`).reduce((sum, t) => {
    try {
      return sum + Number(fs.readFileSync(`/proc/${gw.pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      return sum;  // a thread that ended meanwhile
    }
  }, 0);

try {
  await call('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  gw.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  // The upstream is listed once the gateway has connected to it.
  for (let tries = 0; !(await call('tools/list', {})).includes('"eh:blob"'); tries++) {
    if (tries === 300) throw new Error('the upstream was not listed within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  await call('tools/call', { name: 'eh:blob', arguments: { bytes: 1024 } });
  const base = status('VmRSS');
  let cpu = 0;
  for (let i = 1; i <= n; i++) {
    const before = cpuNs();
    const line = await call('tools/call', { name: 'eh:blob', arguments: { bytes: size } });
    const spent = cpuNs() - before;
    cpu += spent;
    if (line.length <= size) throw new Error(`short answer: ${line.slice(0, 300)}`);
    console.log(`STDIO-LARGE round=${i} mib=${mib} gateway_cpu_ms=${(spent / 1e6).toFixed(1)}`);
  }
  const growth = (status('VmHWM') - base) / 1024 / Number(mib);
  console.log(
    `STDIO-LARGE-SUMMARY upstream=${overStdio ? 'stdio' : 'http'} mib=${mib} rounds=${n} gateway_cpu_ms_per_mib=${(cpu / 1e6 / n / Number(mib)).toFixed(2)} ` +
      `peak_rss_growth_mib_per_mib=${growth.toFixed(2)}`,
  );
} finally {
  gw.kill();
  up?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
