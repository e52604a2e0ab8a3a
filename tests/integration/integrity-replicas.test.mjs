// Pins shared by replicas (integrity.pins with cluster.redis): what one
// replica pinned holds for another, and `mcpgw pins approve` against Redis
// reaches every running replica without a restart or a signal. Runs a real
// redis-server (tests/cluster/cluster-harness.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { requireClusterTools, startRedis } from '../cluster/cluster-harness.mjs';
import {
  MCPGW,
  Proc,
  REPO,
  connectHttp,
  openGetStream,
  pollUntil,
  startGateway,
  tempDir,
  textOf,
  withDiagnostics,
} from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/integrity-fixture.mjs');
const fixture = (variant) => ({ name: 'fx', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--variant', variant] });
const names = async (c) => (await c.listAllTools()).tools.map((t) => t.name).sort();

test(
  'two replicas share the pins in Redis; an approval reaches both at once',
  withDiagnostics(async () => {
    requireClusterTools();
    const dir = tempDir('mcpgw-pins-redis-');
    const redis = await startRedis(dir);
    const config = (variant) => ({ integrity: { pins: 'block' }, cluster: { redis: redis.url }, servers: [fixture(variant)] });
    try {
      // Replica A sees the server first: its tools are pinned in Redis.
      const a = await startGateway(config('v1'), { dir: tempDir('mcpgw-replica-a-'), label: 'replica-a' });
      const ca = await connectHttp(a.url);
      // Listed once the pins are read from Redis (until then every tool counts as new).
      await pollUntil(async () => (await names(ca)).length === 3, { what: 'replica A pins its tools' });
      assert.deepEqual(await names(ca), ['fx:add', 'fx:mutate', 'fx:start']);
      // Replica B's server lists another description of add: not its pin.
      const b = await startGateway(config('changed'), { dir: tempDir('mcpgw-replica-b-'), label: 'replica-b' });
      const cb = await connectHttp(b.url);
      await pollUntil(async () => (await names(cb)).length === 2, { what: 'replica B reads the pins' });
      assert.deepEqual(await names(cb), ['fx:mutate', 'fx:start']);
      const refused = await cb.callTool('fx:add', { a: 1, b: 2 });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /mcpgw pins approve fx:add/);

      const streamA = await openGetStream(ca);
      const streamB = await openGetStream(cb);
      const list = new Proc('pins-list', MCPGW, ['pins', 'list', '--config', b.configPath]);
      assert.equal((await list.waitExit(30000)).code, 0, list.stderrText);
      assert.match(list.stdoutText, /fx\s+fx:add\s+changed/);
      const approve = new Proc('pins-approve', MCPGW, ['pins', 'approve', '--config', b.configPath, 'fx:add']);
      assert.equal((await approve.waitExit(30000)).code, 0, approve.stderrText);
      // B now serves its definition; A's, the old one, is no longer the pin.
      await streamB.waitFor((m) => m.method === 'notifications/tools/list_changed', 20000);
      assert.deepEqual(await names(cb), ['fx:add', 'fx:mutate', 'fx:start']);
      assert.equal(textOf(await cb.callTool('fx:add', { a: 1, b: 2 })), '3');
      await streamA.waitFor((m) => m.method === 'notifications/tools/list_changed', 20000);
      assert.deepEqual(await names(ca), ['fx:mutate', 'fx:start']);
      streamA.close();
      streamB.close();
      await ca.close();
      await cb.close();
      await a.proc.stop();
      await b.proc.stop();
    } finally {
      await redis.proc.stop();
    }
  }),
);
