// scripts/bench's redact section, end to end: two gateways in front of the
// same kind of upstream (tests/integration/secrets-fixture.mjs, stdio), one
// with `redact: {builtin: [all]}` and one without, each asked in turn for a
// tool result of 1 MiB of text (none of it a secret, then a secret every
// 8 KiB). What each gateway's process spent (user + system CPU from
// /proc/PID/stat) over ROUNDS calls, per call; the difference is what
// redaction costs a 1 MiB result, everything else (parsing, writing,
// sockets) being the same on both sides.
//   node redact.mjs MCPGW_BINARY [ROUNDS]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [bin, roundsArg = '40'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.resolve(here, '..', '..', 'tests', 'integration', 'secrets-fixture.mjs');
const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgw-bench-redact-'));
const ticks = 100; // USER_HZ on Linux

function start(name, redact) {
  const config = path.join(dir, `${name}.yaml`);
  const server = `  - {name: sec, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixture)}, /dev/null]}`;
  writeFileSync(config, ['listen: {port: 0}', 'welcome: {strategy: none}', ...(redact ? ['redact: {builtin: [all]}'] : []), 'servers:', server, ''].join('\n'));
  const child = spawn(bin, ['--config', config, '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/\S+)/);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}): ${err}`)));
  });
}

function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / ticks;
}

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
async function session(url) {
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
  await r.text();
  return { ...headers, 'mcp-session-id': r.headers.get('mcp-session-id') };
}

async function call(url, h, every) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sec:bulk', arguments: { bytes: 1 << 20, every } } };
  const r = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const text = await r.text();
  if (!text.includes('"content"')) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
  return text;
}

const gws = { off: await start('off', false), on: await start('on', true) };
try {
  for (const g of Object.values(gws)) g.h = await session(g.url);
  console.log(`result: 1 MiB of text in one content item; ${rounds} calls per gateway, alternated; gateway CPU (user+system) per call`);
  for (const every of [0, 8192]) {
    // Warm: the upstream makes its text once, each gateway's buffers grow once.
    for (const g of Object.values(gws)) await call(g.url, g.h, every);
    const spent = { off: 0, on: 0 };
    for (let i = 0; i < rounds; i++) {
      for (const [name, g] of Object.entries(gws)) {
        const before = cpuMs(g.child.pid);
        const text = await call(g.url, g.h, every);
        spent[name] += cpuMs(g.child.pid) - before;
        if (name === 'on' && every && !text.includes('[REDACTED:')) throw new Error('redaction on, nothing masked');
      }
    }
    const off = spent.off / rounds;
    const on = spent.on / rounds;
    console.log(`RESULT ${every ? 'secret-every-8KiB' : 'no-secret'} off_ms=${off.toFixed(2)} on_ms=${on.toFixed(2)} redaction_ms=${(on - off).toFixed(2)}`);
  }
} finally {
  for (const g of Object.values(gws)) g.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
