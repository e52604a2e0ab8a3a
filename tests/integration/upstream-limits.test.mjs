// The bounds and checks on what an upstream sends: servers[].max_response_bytes
// (an answer over it is an isError naming the server, and the next call
// works) for stdio and HTTP (JSON and SSE answers), and HTTPS upstreams
// (a self-signed certificate works with tls.ca_file or tls.verify: false,
// which logs a warning, and is refused otherwise, naming the server).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Proc, connectHttp, httpGet, httpServer, pollUntil, requireBinaries, startGateway, tempDir, textOf, withDiagnostics } from './harness.mjs';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sizer-fixture.mjs');
const LIMIT = 10000;

async function startSizer(args, label) {
  const proc = new Proc(label, process.execPath, [FIXTURE, '--http', ...args]);
  const m = await proc.waitForLine('stdout', /^listening (https?:\/\/localhost:\d+\/mcp)\s*$/);
  return m[1];
}

before(() => requireBinaries());

test(
  'max_response_bytes: an answer over it is an isError naming the server; the next call works (stdio, HTTP JSON, HTTP SSE)',
  withDiagnostics(async () => {
    const url = await startSizer([], 'sizer-http');
    const gw = await startGateway({
      servers: [
        { name: 'sizestdio', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--stdio'], max_response_bytes: LIMIT },
        httpServer('sizehttp', url, { max_response_bytes: LIMIT }),
      ],
    });
    const c = await connectHttp(gw.url);
    for (const [server, sse] of [['sizestdio', false], ['sizehttp', false], ['sizehttp', true]]) {
      const small = await c.callTool(`${server}:big`, { bytes: 100, sse });
      assert.equal(small.isError, undefined, JSON.stringify(small));
      assert.equal(textOf(small).length, 100);
      const big = await c.callTool(`${server}:big`, { bytes: 5 * LIMIT, sse });
      assert.equal(big.isError, true, `${server} sse=${sse}: ${JSON.stringify(big).slice(0, 300)}`);
      assert.match(textOf(big), new RegExp(server));
      assert.match(textOf(big), /max_response_bytes/);
      const next = await c.callTool(`${server}:echo`, { text: 'still here' });
      assert.equal(textOf(next), 'still here', JSON.stringify(next));
    }
    await c.close();
    const exit = await gw.proc.stop();
    assert.equal(exit.code, 0, JSON.stringify(exit));
  }),
);

test(
  'https upstream: tls.ca_file trusts a self-signed certificate, verify: false accepts it with a warning, without either it is refused naming the server',
  withDiagnostics(async () => {
    const dir = tempDir();
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', key, '-out', cert,
    ], { stdio: 'ignore' });
    const url = await startSizer(['--tls', cert, key], 'sizer-https');
    const gw = await startGateway({
      servers: [
        httpServer('trusted', url, { tls: { ca_file: cert } }),
        httpServer('insecure', url, { tls: { verify: false } }),
        httpServer('untrusted', url, { timeout_ms: 3000 }),
      ],
    });
    try {
      const c = await connectHttp(gw.url);
      for (const server of ['trusted', 'insecure']) {
        const r = await pollUntil(
          async () => {
            const x = await c.callTool(`${server}:echo`, { text: `over tls to ${server}` });
            return x.isError ? false : x;
          },
          { what: `${server}:echo to work` },
        );
        assert.equal(textOf(r), `over tls to ${server}`);
      }
      assert.match(gw.proc.stderrText, /upstream insecure: tls\.verify is false/);
      const { tools } = await c.listAllTools();
      assert.ok(!tools.some((t) => t.name.startsWith('untrusted:')), 'the untrusted server was connected');
      const ready = await pollUntil(
        async () => {
          const r = await httpGet(`${gw.base}/readyz`);
          return /certificate/.test(r.text) ? r : false;
        },
        { what: 'readyz to name the certificate problem' },
      );
      assert.equal(ready.status, 503);
      assert.match(ready.text, /untrusted/);
      assert.doesNotMatch(ready.text, /"trusted"|"insecure"/);
      await c.close();
    } finally {
      const exit = await gw.proc.stop();
      assert.equal(exit.code, 0, JSON.stringify(exit));
    }
  }),
);
