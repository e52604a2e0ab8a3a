// The HTTP core itself (sockets, TLS, deadlines, bounded queues): a port in
// use is one clear error; HTTPS works with listen.tls; slow and hostile
// peers cost nothing but their own socket (slowloris, a reader that stops
// reading its GET stream); many open GET streams at once are fine.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import {
  MCPGW,
  Proc,
  bankStdio,
  connectHttp,
  httpGet,
  openGetStream,
  pollUntil,
  requireBinaries,
  startGateway,
  tempDir,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const sockets = new Set();
after(() => {
  for (const s of sockets) s.destroy();
});

/** A raw TCP connection to the gateway, destroyed when the file ends. */
async function connect(port) {
  const sock = net.connect(port, '127.0.0.1');
  sockets.add(sock);
  sock.on('error', () => {});
  await new Promise((res, rej) => sock.once('connect', res).once('error', rej));
  return sock;
}

test(
  'a port in use: exit 1 with one line on stderr naming the address',
  withDiagnostics(async () => {
    requireBinaries();
    const holder = net.createServer();
    await new Promise((res, rej) => holder.listen(0, '127.0.0.1', res).on('error', rej));
    const { port } = holder.address();
    try {
      const dir = tempDir();
      const cfg = writeConfig(dir, { listen: { host: '127.0.0.1', port }, servers: [bankStdio()] });
      const proc = new Proc('mcpgw-port-in-use', MCPGW, ['--config', cfg, '--log-level', 'warn']);
      const exit = await proc.waitExit(10000);
      assert.deepEqual(exit, { code: 1, signal: null }, proc.stderrText);
      const lines = proc.stderrText.split('\n').filter((l) => l.trim());
      assert.deepEqual(lines, [`mcpgw: cannot listen on 127.0.0.1:${port}: address already in use`]);
    } finally {
      await new Promise((res) => holder.close(res));
    }
  }),
);

/** A self-signed certificate for localhost and 127.0.0.1, made by openssl. */
function selfSigned(dir) {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key };
}

/** One HTTPS request trusting only `ca`; resolves {status, headers, body}. */
function httpsRequest(url, { method = 'GET', headers = {}, body, ca }) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca, agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        data += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.setTimeout(10000, () => req.destroy(new Error('HTTPS request timed out')));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

test(
  'listen.tls serves HTTPS: initialize, a tool call and /healthz over TLS',
  withDiagnostics(async () => {
    requireBinaries();
    const dir = tempDir();
    const { cert, key } = selfSigned(dir);
    const gw = await startGateway({ listen: { tls: { cert_file: cert, key_file: key } }, servers: [bankStdio()] }, { dir });
    assert.match(gw.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const ca = readFileSync(cert);
    const post = (msg, session) =>
      httpsRequest(gw.url, {
        method: 'POST',
        ca,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
        },
        body: JSON.stringify(msg),
      });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'tls', version: '1' } } });
    assert.equal(init.status, 200, init.body);
    const session = init.headers['mcp-session-id'];
    assert.ok(session, JSON.stringify(init.headers));
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bank:list_accounts', arguments: {} } }, session);
    assert.equal(call.status, 200, call.body);
    assert.ok(JSON.parse(call.body).result.structuredContent.accounts.length > 0, call.body);
    const health = await httpsRequest(`${gw.base}/healthz`, { ca });
    assert.equal(health.status, 200);
    // A client that does not trust the certificate is refused by TLS itself.
    await assert.rejects(httpsRequest(`${gw.base}/healthz`, {}), /self[- ]signed|certificate/i);
  }),
);

test(
  '300 slowloris connections trickling header bytes do not keep a normal client out',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ servers: [bankStdio()] }, { label: 'mcpgw-slowloris' });
    const slow = [];
    for (let i = 0; i < 300; i++) {
      const s = await connect(gw.port);
      s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nX-Slow-${i}: `);
      slow.push(s);
    }
    // Keep them trickling while the normal client works: one byte each, now and then.
    const trickle = setInterval(() => {
      for (const s of slow) if (!s.destroyed) s.write('a');
    }, 200);
    try {
      const c = await connectHttp(gw.url);
      const r = await c.callTool('bank:list_accounts');
      assert.ok(r.structuredContent.accounts.length > 0);
    } finally {
      clearInterval(trickle);
      for (const s of slow) s.destroy();
    }
  }),
);

/** A stdio upstream with one subscribable resource and a tool that floods its updates. */
const FLOOD_SERVER = `
import readline from 'node:readline';
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  const p = m.params || {};
  if (m.id === undefined) return;
  switch (m.method) {
    case 'initialize':
      return out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: p.protocolVersion, capabilities: { tools: {}, resources: { subscribe: true } }, serverInfo: { name: 'flood', version: '1' } } });
    case 'tools/list':
      return out({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'flood', description: 'floods resource updates', inputSchema: { type: 'object' } }] } });
    case 'resources/list':
      return out({ jsonrpc: '2.0', id: m.id, result: { resources: [{ uri: 'flood://r', name: 'r' }] } });
    case 'tools/call': {
      const { n, size } = p.arguments;
      const pad = 'x'.repeat(size);
      for (let i = 0; i < n; i++) out({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'flood://r', _meta: { i, pad } } });
      return out({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'flooded ' + n }] } });
    }
    default:
      return out({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
`;

/** Resident memory of `pid` in MiB. */
function rssMiB(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(m[1]) / 1024;
}

test(
  'a client that never reads its GET stream while notifications flood in gets the stream closed; memory stays bounded',
  withDiagnostics(async () => {
    requireBinaries();
    const dir = tempDir();
    const script = path.join(dir, 'flood.mjs');
    writeFileSync(script, FLOOD_SERVER);
    const gw = await startGateway({ servers: [{ name: 'flood', transport: 'stdio', command: process.execPath, args: [script] }] }, { dir, label: 'mcpgw-flood' });
    const c = await connectHttp(gw.url);
    const { resources } = await c.result('resources/list', {});
    const uri = resources[0].uri;
    assert.deepEqual(await c.result('resources/subscribe', { uri }), {});
    // The GET stream on a raw socket that stops reading once the stream is up.
    const sock = await connect(gw.port);
    let got = '';
    sock.setEncoding('utf8');
    const onData = (d) => {
      got += d;
    };
    sock.on('data', onData);
    sock.write(
      `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nAccept: text/event-stream\r\n` +
        `Mcp-Session-Id: ${c.session}\r\nMcp-Protocol-Version: ${c.protocolVersion}\r\n\r\n`,
    );
    await pollUntil(() => /: ping/.test(got), { timeoutMs: 10000, intervalMs: 10, what: 'the GET stream to open' });
    assert.match(got, /^HTTP\/1\.1 200/);
    sock.pause();
    let ended = false;
    sock.on('end', () => {
      ended = true;
    });
    // 4000 updates of 64 KiB: 256 MiB, far more than one client may queue.
    const n = 4000;
    const size = 64 * 1024;
    const r = await c.callTool('flood:flood', { n, size });
    assert.equal(r.content[0].text, `flooded ${n}`);
    assert.ok(rssMiB(gw.proc.pid) < 200, `gateway RSS ${rssMiB(gw.proc.pid)} MiB after a ${(n * size) >> 20} MiB flood`);
    // Reading again, the client finds its stream ended, well short of the flood.
    sock.resume();
    await pollUntil(() => ended, { timeoutMs: 20000, intervalMs: 20, what: 'the GET stream to be closed' });
    assert.ok(got.length < (n * size) / 2, `the stream carried ${got.length} bytes`);
    // The session itself still works, and a new GET stream can be opened.
    assert.deepEqual(await c.result('ping'), {});
    const again = await openGetStream(c);
    assert.equal(again.status, 200);
    again.close();
  }),
);

test(
  '150 sessions each holding a GET stream: every stream opens, the gateway keeps answering',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ servers: [bankStdio()] }, { label: 'mcpgw-streams' });
    const clients = [];
    for (let i = 0; i < 150; i++) clients.push(await connectHttp(gw.url));
    const streams = await Promise.all(clients.map((c) => openGetStream(c)));
    try {
      assert.deepEqual(streams.map((s) => s.status).filter((s) => s !== 200), []);
      const r = await clients[0].callTool('bank:list_accounts');
      assert.ok(r.structuredContent.accounts.length > 0);
      assert.deepEqual(await clients[149].result('ping'), {});
    } finally {
      for (const s of streams) s.close();
    }
  }),
);

test(
  'a client that closes its GET stream is noticed at once, not at the next heartbeat: the stream is gone and a new one may open',
  withDiagnostics(async () => {
    requireBinaries();
    // A heartbeat far beyond the poll's deadline: only the peer watch can
    // notice the close in time.
    const gw = await startGateway({ listen: { heartbeat_ms: 3600000 }, servers: [bankStdio()] }, { label: 'mcpgw-watch' });
    const openStreams = async () => {
      const text = (await httpGet(`${gw.base}/metrics`)).text;
      return Number(/^mcpgw_open_streams (\d+)/m.exec(text)[1]);
    };
    const c = await connectHttp(gw.url);
    const first = await openGetStream(c);
    assert.equal(first.status, 200);
    assert.equal(await openStreams(), 1);
    // One GET stream per session: a second is refused while the first is held.
    const second = await openGetStream(c);
    assert.equal(second.status, 409);
    first.close();
    await pollUntil(async () => (await openStreams()) === 0, { what: 'the closed stream noticed' });
    const third = await openGetStream(c);
    try {
      assert.equal(third.status, 200);
      assert.deepEqual(await c.result('ping'), {});
    } finally {
      third.close();
    }
  }),
);

test(
  'listen.session_idle_s: an idle session ends (its id then gets 404); one holding a GET stream stays',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ listen: { session_idle_s: 1 }, servers: [bankStdio()] }, { label: 'mcpgw-idle' });
    const idle = await connectHttp(gw.url);
    const streaming = await connectHttp(gw.url);
    const stream = await openGetStream(streaming);
    try {
      assert.equal(stream.status, 200);
      await gw.proc.waitForLine('stderr', new RegExp(`session ${idle.session.slice(0, 8)} ended after 1 s idle`), 15000);
      const gone = await idle.send('ping');
      assert.equal(gone.status, 404, gone.text);
      assert.deepEqual(await streaming.result('ping'), {});
    } finally {
      stream.close();
    }
  }),
);

test(
  '--stdio with stdin and stdout redirected to regular files (which epoll refuses): answered, exit 0',
  withDiagnostics(async () => {
    requireBinaries();
    const dir = tempDir();
    const cfg = writeConfig(dir, { servers: [bankStdio()] });
    const input = path.join(dir, 'in.jsonl');
    const output = path.join(dir, 'out.jsonl');
    writeFileSync(
      input,
      [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'file', version: '1' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bank:list_accounts', arguments: {} } },
      ].map((m) => JSON.stringify(m) + '\n').join(''),
    );
    const inFd = openSync(input, 'r');
    const outFd = openSync(output, 'w');
    const child = spawn(MCPGW, ['--config', cfg, '--stdio', '--log-level', 'warn'], { stdio: [inFd, outFd, 'ignore'] });
    closeSync(inFd);
    closeSync(outFd);
    const exit = await new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
    assert.deepEqual(exit, { code: 0, signal: null });
    // Both were read at once: the answers may come in either order. (A
    // list_changed may come too: the bank lists again as it starts.)
    const answers = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((m) => 'id' in m)
      .sort((a, b) => a.id - b.id);
    assert.deepEqual(answers.map((m) => m.id), [1, 2]);
    assert.ok(answers[1].result.structuredContent.accounts.length > 0, JSON.stringify(answers[1]));
  }),
);
