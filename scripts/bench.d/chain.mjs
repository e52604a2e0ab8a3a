// Chain benchmark driver (used by scripts/bench): the same 3-hop nextTool
// chain (tb:chain → chain → chain → echo: the client's call plus 3 hops, four
// upstream calls) done two ways, with the same client, the same number of
// concurrent workers and the same duration:
//   gateway: one tools/call; mcpgw (chain.resolve: true) follows the hops;
//   client:  mcpgw with chain.resolve: false; the client reads each result's
//            _meta.nextTool and makes the next call itself (four requests).
// Prints one RESULT line per way (chains/s, p50 and p99 latency of a whole
// chain in µs, errors).
//   node scripts/bench.d/chain.mjs SECONDS WORKERS GATEWAY_URL CLIENT_URL
import http from 'node:http';

const [secs = '10', workers = '16', resolvedUrl, clientUrl] = process.argv.slice(2);
if (!resolvedUrl || !clientUrl) {
  console.error('usage: chain.mjs SECONDS WORKERS GATEWAY_URL CLIENT_URL');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(workers) });

const FIRST = {
  text: 'a',
  next: 'chain',
  next_arguments: { text: 'b', next: 'chain', next_arguments: { text: 'c', next: 'echo', next_arguments: { text: 'done' } } },
};

function post(url, body, session) {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(payload),
          ...(session ? { 'mcp-session-id': session } : {}),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          data += c;
        });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, data }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function session(url) {
  const r = await post(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-chain', version: '1' } },
  });
  const sid = r.headers['mcp-session-id'];
  if (r.status !== 200 || !sid) throw new Error(`initialize at ${url}: HTTP ${r.status} ${r.data}`);
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
  return sid;
}

let nextId = 1;
async function call(url, sid, name, args) {
  const r = await post(url, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }, sid);
  if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
  const m = JSON.parse(r.data);
  if (m.error || m.result.isError) throw new Error(r.data);
  return m.result;
}

/** One chain, resolved by the gateway: one request. */
async function viaGateway(url, sid) {
  const r = await call(url, sid, 'tb:chain', FIRST);
  if (r.content.at(-1)?.text !== 'done' || r.content.length !== 4) throw new Error(`unexpected: ${JSON.stringify(r)}`);
}

/** The same chain, followed by the client: one request per call. */
async function viaClient(url, sid) {
  let r = await call(url, sid, 'tb:chain', FIRST);
  let calls = 1;
  for (let next = r._meta?.nextTool; next; next = r._meta?.nextTool) {
    r = await call(url, sid, `tb:${next.tool ?? next.name}`, next.arguments ?? {});
    calls++;
  }
  if (calls !== 4 || r.content.at(-1)?.text !== 'done') throw new Error(`unexpected: ${calls} calls, ${JSON.stringify(r)}`);
}

async function measure(label, url, once) {
  const sid = await session(url);
  for (let i = 0; i < 50; i++) await once(url, sid); // warm-up
  const latencies = [];
  let errors = 0;
  const end = Date.now() + Number(secs) * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Number(workers) }, async () => {
      while (Date.now() < end) {
        const s = process.hrtime.bigint();
        try {
          await once(url, sid);
          latencies.push(Number(process.hrtime.bigint() - s) / 1000);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  latencies.sort((a, b) => a - b);
  const pct = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0);
  console.log(`RESULT ${label} chains_per_s=${(latencies.length / seconds).toFixed(1)} p50_us=${pct(50)} p99_us=${pct(99)} errors=${errors}`);
  return { rate: latencies.length / seconds, p50: pct(50) };
}

const g = await measure('chain-gateway', resolvedUrl, viaGateway);
const c = await measure('chain-client ', clientUrl, viaClient);
console.log(
  `ratio chain gateway/client:        chains/s ${(g.rate / c.rate).toFixed(2)}, p50 latency ${(g.p50 / c.p50).toFixed(2)}`,
);
agent.destroy();
