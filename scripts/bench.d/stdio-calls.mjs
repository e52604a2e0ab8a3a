// The placement section's stdio client (scripts/bench.d/placement.sh): runs
// `mcpgw --config CONFIG --stdio [ARGS...]`, initializes, warms up, then
// makes N tools/call of TOOL one after the other (as an agent does) and
// prints the gateway's CPU per call (utime+stime from /proc/PID/stat over
// the N calls) and calls per second. Every answer must be the echo.
//   CLK_TCK=$(getconf CLK_TCK) node stdio-calls.mjs MCPGW CONFIG TOOL N LABEL [ARGS...]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [mcpgw, config, tool, count, label, ...args] = process.argv.slice(2);
const n = Number(count);
const gw = spawn(mcpgw, ['--config', config, '--stdio', '--log-level', 'error', ...args], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const waiting = new Map();
let buffered = '';
gw.stdout.setEncoding('utf8');
gw.stdout.on('data', (chunk) => {
  buffered += chunk;
  for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
    const message = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  }
});
const exited = new Promise((resolve) => gw.on('exit', resolve));
gw.on('exit', (code) => {
  if (waiting.size) {
    console.error(`mcpgw exited (${code}) with ${waiting.size} calls unanswered`);
    process.exit(1);
  }
});

let nextId = 0;
function rpc(method, params) {
  const id = ++nextId;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    gw.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
}
async function echo() {
  const answer = await rpc('tools/call', { name: tool, arguments: { text: 'hello' } });
  if (answer.result?.content?.[0]?.text !== 'hello') throw new Error(`not the echo: ${JSON.stringify(answer)}`);
}
/** The gateway's user+system time so far, in clock ticks (fields 14 and 15 of stat). */
function ticks() {
  const fields = readFileSync(`/proc/${gw.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
gw.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
for (let i = 0; i < Math.min(2000, n); i++) await echo();
const t0 = ticks();
const started = process.hrtime.bigint();
for (let i = 0; i < n; i++) await echo();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const used = ticks() - t0;
const hz = Number(process.env.CLK_TCK || 100); // what /proc/PID/stat counts in (getconf CLK_TCK)
console.log(
  `PLACEMENT ${label} calls=${n} rps=${(n / seconds).toFixed(0)} cpu_us_per_call=${((used / hz) * 1e6 / n).toFixed(1)}`,
);
gw.stdin.end();
await exited;
