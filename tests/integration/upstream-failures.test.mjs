// Upstream failures: a crashing stdio upstream, a slow one past its
// timeout_ms, an HTTP upstream that is not running, noise on an upstream's
// stdout, and many concurrent calls from several sessions.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  bankStdio,
  closedPort,
  connectHttp,
  httpGet,
  httpServer,
  pidFromResult,
  pollUntil,
  requireBinaries,
  startGateway,
  textOf,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';

let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({
    servers: [bankStdio(), toolboxStdio(), toolboxStdio({ name: 'slowbox', timeout_ms: 300 })],
  });
});

test(
  'a crashing upstream yields an isError result naming it; others keep working; it comes back',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const pidBefore = pidFromResult(await c.callTool('toolbox:pid'));

    const crash = await c.callTool('toolbox:crash');
    assert.equal(crash.isError, true, JSON.stringify(crash));
    assert.match(textOf(crash), /toolbox/, JSON.stringify(crash));
    // Answered because the gateway saw the child go, not by the call's timeout.
    assert.doesNotMatch(textOf(crash), /timed out/, JSON.stringify(crash));

    const accounts = await c.callTool('bank:list_accounts');
    assert.equal(accounts.isError, undefined);
    assert.equal(accounts.structuredContent.accounts.length, 3);

    // The gateway restarts the upstream; poll until an echo goes through again.
    const echo = await pollUntil(
      async () => {
        const r = await c.callTool('toolbox:echo', { text: 'back again' });
        return r.isError ? false : r;
      },
      { timeoutMs: 20000, intervalMs: 200, what: 'toolbox:echo to work after the crash' },
    );
    assert.equal(textOf(echo), 'back again');
    const pidAfter = pidFromResult(await c.callTool('toolbox:pid'));
    assert.notEqual(pidAfter, pidBefore, 'the upstream was not restarted');
    await c.close();
  }),
);

test(
  'a call past the server timeout_ms yields an isError result naming it, well before the upstream answers',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('slowbox:sleep', { ms: 5000 });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /slowbox/, JSON.stringify(r));
    // The server's timeout_ms ended it, not the upstream's answer.
    assert.match(textOf(r), /timed out after 300 ms/, JSON.stringify(r));
    // Other servers are not held up by the slow one.
    const echo = await c.callTool('toolbox:echo', { text: 'unaffected' });
    assert.equal(textOf(echo), 'unaffected');
    await c.close();
  }),
);

test(
  'a non-JSON line on an upstream stdout does not break the connection',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const r = await c.callTool('toolbox:garbage');
    assert.deepEqual(r, { content: [{ type: 'text', text: 'ok' }] });
    const echo = await c.callTool('toolbox:echo', { text: 'after garbage' });
    assert.equal(textOf(echo), 'after garbage');
    await c.close();
  }),
);

test(
  '20 concurrent calls from 5 sessions each get their own answer',
  withDiagnostics(async () => {
    const sessions = await Promise.all(Array.from({ length: 5 }, () => connectHttp(gw.url)));
    assert.equal(new Set(sessions.map((s) => s.session)).size, 5);
    const calls = [];
    for (let i = 0; i < 5; i++) {
      for (let j = 0; j < 4; j++) {
        const text = `session ${i} call ${j} ${Math.random().toString(36).slice(2)}`;
        calls.push(sessions[i].callTool('toolbox:echo', { text }).then((r) => ({ r, want: text })));
      }
      // Interleaved calls to a second upstream, answered with tool errors.
      const acc = `acc_missing_${i}`;
      calls.push(sessions[i].callTool('bank:get_account_balance', { accountId: acc }).then((r) => ({ r, want: `Account not found: ${acc}`, isError: true })));
    }
    const results = await Promise.all(calls);
    assert.equal(results.length, 25);
    for (const { r, want, isError } of results) {
      assert.deepEqual(r.content, [{ type: 'text', text: want }]);
      assert.equal(r.isError, isError);
    }
    await Promise.all(sessions.map((s) => s.close()));
  }),
);

test(
  'an HTTP upstream that is not running: /readyz 503 naming it, the other servers still work',
  withDiagnostics(async () => {
    const port = await closedPort();
    const gw2 = await startGateway(
      { servers: [bankStdio(), httpServer('ghost', `http://127.0.0.1:${port}/mcp`, { timeout_ms: 2000 })] },
      { label: 'mcpgw-ghost' },
    );
    try {
      const health = await httpGet(`${gw2.base}/healthz`);
      assert.equal(health.status, 200);
      const c = await connectHttp(gw2.url);
      const accounts = await c.callTool('bank:list_accounts');
      assert.equal(accounts.structuredContent.accounts.length, 3);
      const { tools } = await c.listAllTools();
      assert.ok(tools.some((t) => t.name === 'bank:list_accounts'));
      assert.ok(!tools.some((t) => t.name.startsWith('ghost:')));

      const ready = await httpGet(`${gw2.base}/readyz`);
      assert.equal(ready.status, 503, ready.text);
      let body;
      assert.doesNotThrow(() => {
        body = JSON.parse(ready.text);
      }, `readyz body is not JSON: ${ready.text}`);
      assert.match(JSON.stringify(body), /ghost/);
      await c.close();
    } finally {
      const exit = await gw2.proc.stop();
      assert.equal(exit.code, 0, JSON.stringify(exit));
    }
  }),
);

test(
  'an upstream retrying after a failure keeps that failure in its status: "<why it failed>; connecting again", not a bare "connecting"',
  withDiagnostics(async () => {
    // Accepts, never answers: each attempt fails at its timeout, and the
    // next one is under way for as long.
    const hang = net.createServer(() => {});
    await new Promise((r) => hang.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${hang.address().port}/mcp`;
    const gw2 = await startGateway(
      { servers: [bankStdio(), httpServer('hung', url, { timeout_ms: 300 })] },
      { label: 'mcpgw-hung' },
    );
    try {
      const status = await pollUntil(async () => {
        const ready = await httpGet(`${gw2.base}/readyz`);
        const hung = JSON.parse(ready.text).down.find((d) => d.server === 'hung');
        return hung && hung.status.endsWith('; connecting again') ? hung.status : null;
      }, { timeoutMs: 30000, intervalMs: 20, what: 'a retry of upstream hung' });
      assert.match(status, /^initialize: timed out after 300 ms; connecting again$/, status);
    } finally {
      await gw2.proc.stop();
      hang.close();
    }
  }),
);

test(
  'readyz is 200 when every required upstream is up',
  withDiagnostics(async () => {
    const r = await httpGet(`${gw.base}/readyz`);
    assert.equal(r.status, 200, r.text);
  }),
);
