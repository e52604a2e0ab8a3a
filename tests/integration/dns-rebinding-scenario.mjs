// The DNS-rebinding scenario of dns-rebinding.test.mjs, run inside a
// network and mount namespace of its own (the test starts it under
// `unshare`), where this process is the name server the system resolver
// asks (/etc/resolv.conf, bind-mounted there, names 127.0.0.1) and a public
// address and the cloud metadata address are on the namespace's loopback
// interface. Nothing leaves the namespace.
//
//   node dns-rebinding-scenario.mjs PUBLIC CERT KEY
//
// The name server answers the first A query for each name with PUBLIC and
// every later one with the name's forbidden address (lo.rebind.test:
// 127.0.0.1, md.rebind.test: 169.254.169.254); AAAA queries get no answer.
// One HTTPS server (CERT, KEY: for PUBLIC and both names; an upstream
// with OAuth off loopback must be https) on every address of the namespace (0.0.0.0) is both the
// upstream (at PUBLIC: its 401 points OAuth discovery at the rebinding
// name) and, had the gateway connected there, the forbidden target: each
// request is recorded with the address it arrived at. Every answer closes
// its connection, so each fetch resolves anew. A gateway in front of the
// two upstreams is called once per upstream; the scenario prints one JSON
// line: {queries, hits, errors}.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { HttpClient, startGateway, tempDir, textOf } from './harness.mjs';

const [PUBLIC, CERT, KEY] = process.argv.slice(2);
const forbidden = { 'lo.rebind.test': '127.0.0.1', 'md.rebind.test': '169.254.169.254' };

// --- the name server ---
const queries = [];
const seen = new Map();

/** The question of DNS message `msg`: {name, type, end} (end: where it ends). */
function question(msg) {
  const labels = [];
  let i = 12;
  while (msg[i] !== 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]).toString('latin1'));
    i += msg[i] + 1;
  }
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(i + 1), end: i + 5 };
}

/** The answer to query `msg`: A for the two names (see above), nothing else. */
function answer(msg) {
  const q = question(msg);
  const known = q.name in forbidden;
  let address = null;
  if (known && q.type === 1) {
    const n = seen.get(q.name) || 0;
    seen.set(q.name, n + 1);
    address = n === 0 ? PUBLIC : forbidden[q.name];
  }
  queries.push({ name: q.name, type: q.type, answer: address });
  const head = Buffer.alloc(12);
  msg.copy(head, 0, 0, 2);  // the id
  // QR, the query's opcode and RD, RA; NXDOMAIN for a name it does not know.
  head.writeUInt16BE(0x8180 | (msg.readUInt16BE(2) & 0x7900) | (known ? 0 : 3), 2);
  head.writeUInt16BE(1, 4);
  head.writeUInt16BE(address ? 1 : 0, 6);
  const parts = [head, msg.subarray(12, q.end)];
  if (address) {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0);  // the name of the question
    rr.writeUInt16BE(1, 2);  // A
    rr.writeUInt16BE(1, 4);  // IN
    rr.writeUInt32BE(0, 6);  // TTL 0: nothing may keep it
    rr.writeUInt16BE(4, 10);
    address.split('.').forEach((b, k) => rr.writeUInt8(Number(b), 12 + k));
    parts.push(rr);
  }
  return Buffer.concat(parts);
}

const dns = dgram.createSocket('udp4');
dns.on('message', (msg, from) => {
  if (msg.length < 17) return;
  dns.send(answer(msg), from.port, from.address);
});
await new Promise((resolve, reject) => {
  dns.once('error', reject);
  dns.bind(53, '127.0.0.1', resolve);
});

// --- the upstream and the forbidden targets ---
const hits = [];
let port = 0;
const web = https.createServer({ cert: readFileSync(CERT), key: readFileSync(KEY) }, (req, res) => {
  const path = req.url.split('?')[0];
  hits.push({ method: req.method, path, at: req.socket.localAddress });
  req.resume();
  const reply = (status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers });
    res.end(JSON.stringify(body));
  };
  const m = /^\/(u|prm)\/(lo|md)(\/mcp)?$/.exec(path);
  if (m && m[1] === 'u')
    return reply(401, { error: 'invalid_token' }, {
      'www-authenticate': `Bearer error="invalid_token", resource_metadata="https://${m[2]}.rebind.test:${port}/prm/${m[2]}"`,
    });
  if (m && m[1] === 'prm')
    return reply(200, {
      resource: `https://${PUBLIC}:${port}/u/${m[2]}/mcp`,
      authorization_servers: [`https://${m[2]}.rebind.test:${port}/as`],
    });
  reply(404, { error: 'not_found' });
});
await new Promise((resolve) => web.listen(0, '0.0.0.0', resolve));
port = web.address().port;

// --- the gateway, and one call per upstream ---
const upstream = (name) => ({
  name, transport: 'http', url: `https://${PUBLIC}:${port}/u/${name}/mcp`, required: false, tls: { ca_file: CERT },
  oauth: { grant: 'client_credentials', client_id: 'gw', client_secret: 'secret' },
});
const gw = await startGateway({ auth: { bearer_tokens: [{ token: 't', name: 'alice' }] }, servers: [upstream('lo'), upstream('md')] },
  { dir: tempDir('mcpgw-rebind-') });
const errors = {};
try {
  for (const name of ['lo', 'md']) {
    const c = new HttpClient(gw.url, { headers: { authorization: 'Bearer t' } });
    await c.initialize();
    const r = await c.request('tools/call', { name: `${name}:whoami`, arguments: {} });
    errors[name] = r.result ? textOf(r.result) : JSON.stringify(r);
  }
} finally {
  await gw.proc.stop();
  dns.close();
  web.close();
}
process.stdout.write(`${JSON.stringify({ queries, hits, errors })}\n`);
