// An upstream that floods its log: notifications/message it sends outside
// any call become gateway log lines at most 20 a second (bursts of 100);
// the rest is counted and told as one "N log messages suppressed" line a
// second. Every message is either written or counted, and the server's
// calls are unaffected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFault } from './fault.mjs';
import { connectHttp, httpServer, pollUntil, startGateway, textOf, withDiagnostics } from './harness.mjs';

const FLOOD = 5000;

test(
  `an upstream sending ${FLOOD} log messages at once: the gateway log stays bounded and says how many it suppressed`,
  withDiagnostics(async () => {
    const fx = await startFault(['--get', 'stream'], 'flooder');
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('fx', fx.url)] }, { label: 'mcpgw-flood', logLevel: 'info' });
    const c = await connectHttp(gw.url);
    // The gateway's GET stream is open once the fixture can flood it.
    await pollUntil(
      async () => {
        fx.proc.child.stdin.write('flood 0\n');
        const seen = fx.proc.stdoutText.match(/^flooded 0 on (\d+)$/gm) || [];
        return seen.some((l) => !l.endsWith(' 0'));
      },
      { what: 'the gateway GET stream at the fixture' },
    );
    const started = Date.now();
    fx.proc.child.stdin.write(`flood ${FLOOD}\n`);
    const logged = () => (gw.proc.stderrText.match(/upstream fx log: /g) || []).length;
    const suppressed = () => [...gw.proc.stderrText.matchAll(/upstream fx: (\d+) log messages suppressed \(it sent more than 20 a second\)/g)].reduce((n, m) => n + Number(m[1]), 0);
    await pollUntil(() => logged() + suppressed() === FLOOD, { timeoutMs: 20000, what: 'every message written or counted' });
    const seconds = (Date.now() - started) / 1000;
    assert.ok(logged() <= 100 + 20 * (seconds + 1), `${logged()} lines in ${seconds} s`);
    assert.ok(suppressed() >= FLOOD - 100 - 20 * (seconds + 1), `only ${suppressed()} suppressed`);
    assert.equal(textOf(await c.callTool('fx:echo', { text: 'unaffected' })), 'unaffected');
    await c.close();
    await gw.proc.stop();
    await fx.proc.stop();
  }),
);
