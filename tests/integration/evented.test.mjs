// Nothing holds a thread while it waits: hundreds of calls in flight, each
// waiting for its upstream, and dozens of per-client upstream connections
// (each supervised, with its own child) cost the gateway no thread each.
// The gateway's threads are its I/O threads and small pools, however many
// calls and connections wait.
import fs from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectHttp, httpGet, pollUntil, requireBinaries, startGateway, toolboxStdio, withDiagnostics } from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';

const threads = (pid) => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
// Two I/O threads, the router's and the plugin host's pools at rest, the
// signal and audit threads and the main one: far fewer than the calls.
const MAX_THREADS = 16;

test(
  '300 calls in flight on one stdio upstream and 40 per-client connections: the gateway keeps its few threads',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway(
      {
        shutdown_grace_ms: 200,
        servers: [toolboxStdio({ name: 'tb', timeout_ms: 60000 }), toolboxStdio({ name: 'own', session: 'per_client' })],
      },
      { extraArgs: ['--threads', '2'] },
    );
    try {
      const inFlight = async () => sample(parseMetrics((await httpGet(`${gw.base}/metrics`)).text), 'mcpgw_tool_calls_in_flight', { server: 'tb' });
      const c = await connectHttp(gw.url);
      // Each sleep returns when the test lets it: 20 s, far beyond the poll.
      const calls = Array.from({ length: 300 }, () => c.callTool('tb:sleep', { ms: 20000 }));
      await pollUntil(async () => (await inFlight()) === 300, { timeoutMs: 30000, what: '300 calls in flight' });
      assert.ok(threads(gw.proc.pid) <= MAX_THREADS, `${threads(gw.proc.pid)} threads with 300 calls waiting`);

      // Forty sessions, each with its own upstream child, connected and serving.
      const clients = await Promise.all(Array.from({ length: 40 }, () => connectHttp(gw.url)));
      const echoes = await Promise.all(clients.map((k, i) => k.callTool('own:echo', { text: `c${i}` })));
      echoes.forEach((r, i) => assert.equal(r.content[0].text, `c${i}`));
      assert.ok(threads(gw.proc.pid) <= MAX_THREADS, `${threads(gw.proc.pid)} threads with 40 per-client connections`);

      // Stopped with the calls in flight: the grace ends them, every child is reaped.
      assert.deepEqual(await gw.proc.stop(), { code: 0, signal: null, killed: false });
      await Promise.allSettled(calls);
    } finally {
      await gw.proc.stop();
    }
  }),
);
