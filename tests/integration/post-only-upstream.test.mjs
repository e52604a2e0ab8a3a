// An HTTP upstream with only a POST route: its GET on /mcp gets 404 (as a
// framework answers a route it does not have), 400 or 405. Right after a
// successful initialize, with POSTs on that session working, that means
// "no stream" (the server can push nothing outside a call), not a lost
// session: the gateway stays connected, calls work, and it does not
// initialize again. Only a POST answered 404 means the session is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFault } from './fault.mjs';
import { connectHttp, httpGet, httpServer, startGateway, textOf, withDiagnostics } from './harness.mjs';

for (const status of ['404', '400', '405']) {
  test(
    `an upstream answering the GET stream with ${status}: connected, every call works, one initialize, no reconnect loop`,
    withDiagnostics(async () => {
      const fx = await startFault(['--get', status], `post-only-${status}`);
      const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('fx', fx.url)] }, { label: `mcpgw-post-only-${status}` });
      await gw.proc.waitForLine('stderr', new RegExp(`upstream fx: offers no GET stream \\(HTTP ${status}\\): it can send messages only while a call runs`));
      const c = await connectHttp(gw.url);
      for (let i = 0; i < 5; i++) assert.equal(textOf(await c.callTool('fx:echo', { text: `e${i}` })), `e${i}`);
      const ready = await httpGet(`${gw.base}/readyz`);
      assert.equal(ready.status, 200, ready.text);
      const log = gw.proc.stderrText;
      assert.equal(log.match(/upstream fx: connected/g).length, 1, 'the gateway initialized more than once');
      assert.doesNotMatch(log, /not connected|forgot the session|initializing a new session/);
      await c.close();
      await gw.proc.stop();
      await fx.proc.stop();
    }),
  );
}
