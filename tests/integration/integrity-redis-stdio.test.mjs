// Pins kept in Redis (integrity.pins with cluster.redis) hold for a
// gateway serving one client on stdio and for `mcpgw check`, not only for
// HTTP replicas: what a --stdio gateway pinned on first sight is in Redis,
// a changed definition is withheld by the next --stdio gateway and named by
// `mcpgw check`, and `mcpgw pins approve` reaches the running --stdio
// gateway without a restart. Runs a real redis-server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { requireClusterTools, startRedis } from '../cluster/cluster-harness.mjs';
import {
  MCPGW,
  Proc,
  REPO,
  closedPort,
  pollUntil,
  startGatewayStdio,
  tempDir,
  textOf,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/integrity-fixture.mjs');
const fixture = (variant) => ({ name: 'fx', transport: 'stdio', command: process.execPath, args: [FIXTURE, '--variant', variant] });
const names = async (c) => (await c.listAllTools()).tools.map((t) => t.name).sort();

/** Runs `mcpgw ARGS...`; resolves with its exit code and output. */
async function mcpgw(args) {
  const proc = new Proc(`mcpgw ${args[0]} ${args[1] || ''}`, MCPGW, args);
  const exit = await proc.waitExit(60000);
  return { code: exit.code, stdout: proc.stdoutText, stderr: proc.stderrText };
}

test(
  '--stdio and mcpgw check honour the pins in Redis; an approval reaches a running --stdio gateway',
  withDiagnostics(async () => {
    requireClusterTools();
    const dir = tempDir('mcpgw-pins-redis-stdio-');
    const redis = await startRedis(dir);
    const config = (variant) => ({ integrity: { pins: 'block' }, cluster: { redis: redis.url }, servers: [fixture(variant)] });
    try {
      // A first --stdio gateway sees the server first: its tools are pinned in Redis.
      const first = startGatewayStdio(config('v1'), { dir: tempDir('mcpgw-stdio-a-'), label: 'stdio-a' });
      await first.client.initialize();
      // Listed once the pins are read from Redis (until then every tool counts as new).
      await pollUntil(async () => (await names(first.client)).length === 3, { what: 'the first --stdio gateway pins its tools' });
      assert.deepEqual(await names(first.client), ['fx:add', 'fx:mutate', 'fx:start']);
      first.client.closeStdin();
      assert.equal((await first.proc.waitExit(20000)).code, 0);

      const changedConfig = writeConfig(tempDir('mcpgw-stdio-cfg-'), config('changed'));
      const listed = await mcpgw(['pins', 'list', '--config', changedConfig]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /fx\s+fx:add\s+pinned/);

      // mcpgw check judges the changed server against Redis's pins: add is
      // withheld (not in its tool table) and named with the approval.
      const checked = await mcpgw(['check', '--config', changedConfig]);
      assert.match(
        checked.stdout,
        /warning: integrity: tool fx:add of server fx is changed \(description\); withheld until approved \(mcpgw pins approve fx:add\)/,
        checked.stdout + checked.stderr,
      );
      assert.doesNotMatch(checked.stdout, /^\s+fx:add\s/m, checked.stdout);
      assert.match(checked.stdout, /^\s+fx:mutate\s/m, checked.stdout);
      // check looks, never pins: the changed definition is not recorded as seen.
      const after = await mcpgw(['pins', 'list', '--config', changedConfig]);
      assert.match(after.stdout, /fx\s+fx:add\s+pinned/);

      // A --stdio gateway whose server changed add's description withholds it.
      const second = startGatewayStdio(config('changed'), { dir: tempDir('mcpgw-stdio-b-'), label: 'stdio-b' });
      const c = second.client;
      await c.initialize();
      await pollUntil(async () => (await names(c)).length === 2, { what: 'the second --stdio gateway reads the pins' });
      assert.deepEqual(await names(c), ['fx:mutate', 'fx:start']);
      const refused = await c.callTool('fx:add', { a: 1, b: 2 });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /tool fx:add is withheld/);
      assert.match(textOf(refused), /mcpgw pins approve fx:add/);

      const seen = c.messages.length;
      const approved = await mcpgw(['pins', 'approve', '--config', changedConfig, 'fx:add']);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, /approved fx:add \(server fx\)/);
      // Told through Redis's channel: the running gateway lists it and says so.
      await pollUntil(
        () => c.messages.slice(seen).some((m) => m.method === 'notifications/tools/list_changed'),
        { what: 'tools/list_changed after the approval', timeoutMs: 20000 },
      );
      assert.deepEqual(await names(c), ['fx:add', 'fx:mutate', 'fx:start']);
      assert.equal(textOf(await c.callTool('fx:add', { a: 1, b: 2 })), '3');
      c.closeStdin();
      assert.equal((await second.proc.waitExit(20000)).code, 0);
    } finally {
      await redis.proc.stop();
    }
  }),
);

test(
  'mcpgw check fails naming Redis when the pins in it cannot be read; with pins: off it needs no Redis',
  withDiagnostics(async () => {
    const port = await closedPort();
    const cfgPath = writeConfig(tempDir('mcpgw-pins-noredis-'), {
      integrity: { pins: 'block' },
      cluster: { redis: `redis://127.0.0.1:${port}/0` },
      servers: [fixture('v1')],
    });
    const checked = await mcpgw(['check', '--config', cfgPath]);
    assert.equal(checked.code, 1, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /error: integrity: the pins could not be read from Redis at redis:\/\/127\.0\.0\.1:\d+\/0 within 10 s \(.+\)/);
    assert.match(checked.stdout, /^invalid$/m);
    // pins: off judges nothing, so Redis is not needed for the check.
    const offPath = writeConfig(tempDir('mcpgw-pins-off-noredis-'), {
      integrity: { pins: 'off' },
      cluster: { redis: `redis://127.0.0.1:${port}/0` },
      servers: [fixture('v1')],
    });
    const off = await mcpgw(['check', '--config', offPath]);
    assert.equal(off.code, 0, off.stdout + off.stderr);
    assert.doesNotMatch(off.stdout, /the pins could not be read/);
    assert.match(off.stdout, /^valid$/m);
  }),
);
