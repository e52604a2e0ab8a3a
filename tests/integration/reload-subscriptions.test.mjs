// Resource subscriptions outlive a reload that replaces their server: the
// upstream subscription is made again on the new connection, so a client
// subscribed before the SIGHUP keeps hearing of updates from the server's
// new process, with no new resources/subscribe of its own. The upstream
// (the conformance fixture over stdio) sends notifications/resources/updated
// only to a session that subscribed, so updates after the old child is gone
// prove the subscription moved.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILD,
  connectHttp,
  descendants,
  openGetStream,
  pollUntil,
  requireBinaries,
  startGateway,
  toYaml,
  waitGone,
  withDiagnostics,
} from './harness.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');

test(
  'a reload that replaces a server moves its resource subscriptions to the new connection',
  withDiagnostics(async () => {
    requireBinaries(CONFORMANCE);
    const config = (timeout) => ({
      welcome: { strategy: 'none' },
      servers: [{ name: 'conf', transport: 'stdio', command: CONFORMANCE, args: ['--watch-interval-ms', '200'], timeout_ms: timeout }],
    });
    const gw = await startGateway(config(20000), { label: 'mcpgw-reload-subscriptions' });
    const c = await connectHttp(gw.url);
    const { resources } = await c.result('resources/list', {});
    const watched = resources.find((r) => r.uri.endsWith('test://watched-resource'));
    assert.ok(watched, JSON.stringify(resources));
    const stream = await openGetStream(c);
    assert.deepEqual(await c.result('resources/subscribe', { uri: watched.uri }), {});
    const updates = () => stream.messages.filter((m) => m.method === 'notifications/resources/updated' && m.params?.uri === watched.uri).length;
    await pollUntil(() => updates() > 0, { what: 'an update before the reload' });

    const old = descendants(gw.proc.pid).filter((p) => p.comm.startsWith('conformance'));
    assert.equal(old.length, 1, JSON.stringify(old));
    writeFileSync(gw.configPath, toYaml({ ...config(20001), listen: { host: '127.0.0.1', path: '/mcp', port: 0 } }));
    gw.proc.child.kill('SIGHUP');
    await gw.proc.waitForLine('stderr', /upstream conf: 1 resource subscriptions moved to its new connection/, 30000);
    assert.deepEqual(await waitGone(old, 10000), [], 'the replaced child was not reaped');
    const before = updates();
    await pollUntil(() => updates() > before, { what: "an update from the new server's process" });
    stream.close();
    await c.close();
    await gw.proc.stop();
  }),
);
