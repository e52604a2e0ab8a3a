// `session: per_client`: each client session gets its own connection to the
// server (its own child process for a stdio server), started on its first
// call and stopped when the session ends; the catalog still comes from one
// shared connection. With a shared stdio connection, a server-to-client
// request cannot be tied to a call when several clients' calls are in
// flight (stdio carries no link), so it is refused with a reason; per_client
// routes every such request to its own client.
import path from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  BUILD,
  connectHttp,
  pidFromResult,
  procStat,
  requireBinaries,
  startGateway,
  toolboxStdio,
  waitGone,
  withDiagnostics,
} from './harness.mjs';
import { Client } from '../interop/common.mjs';

const CONFORMANCE = path.join(BUILD, 'examples', 'conformance-server');
const conf = (name, session) => ({ name, transport: 'stdio', command: CONFORMANCE, args: [], session, timeout_ms: 20000 });
let gw;

before(async () => {
  requireBinaries();
  gw = await startGateway({
    welcome: { strategy: 'none' },
    servers: [toolboxStdio({ session: 'per_client' }), toolboxStdio({ name: 'shared' }), conf('confpc', 'per_client'), conf('confsh', 'shared')],
  });
});

test(
  'each client session gets its own upstream process; the session\'s end stops it',
  withDiagnostics(async () => {
    const a = await connectHttp(gw.url);
    const b = await connectHttp(gw.url);
    const pa = pidFromResult(await a.callTool('toolbox:pid'));
    const pb = pidFromResult(await b.callTool('toolbox:pid'));
    assert.notEqual(pa, pb);
    assert.equal(pidFromResult(await a.callTool('toolbox:pid')), pa, 'a second call of the same session used another process');
    // A shared server keeps one process for everyone.
    assert.equal(pidFromResult(await a.callTool('shared:pid')), pidFromResult(await b.callTool('shared:pid')));
    await gw.proc.waitForLine('stderr', /upstream toolbox: connection for client session [0-9a-f]{8} started/);

    const stat = procStat(pa);
    assert.ok(stat, `process ${pa} is not running`);
    assert.equal(await a.close(), 200);
    assert.deepEqual(await waitGone([stat]), [], `the per-client process ${pa} outlived its session`);
    assert.ok(procStat(pb), 'the other session\'s process was stopped too');
    assert.equal(pidFromResult(await b.callTool('toolbox:pid')), pb);
    await b.close();
  }),
);

/** SDK clients that answer elicitation with their own name. */
async function answeringClients(n) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const c = new Client({ name: `pc-${i}`, version: '1' }, { capabilities: { elicitation: {} } });
      c.setRequestHandler(ElicitRequestSchema, (req) => ({ action: 'accept', content: { username: `pc-${i}`, email: `${req.params.message}@x.org` } }));
      await c.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
      return c;
    }),
  );
}

const text = (r) => r.content.map((c) => c.text).join('\n');

test(
  'per_client: concurrent elicitations of several clients through a stdio server each reach their own client',
  withDiagnostics(async () => {
    const clients = await answeringClients(3);
    const results = await Promise.all(
      clients.flatMap((c, i) => [0, 1].map((k) => c.callTool({ name: 'confpc:test_elicitation', arguments: { message: `m-${i}-${k}` } }).then((r) => ({ i, k, r })))),
    );
    for (const { i, k, r } of results) {
      assert.ok(!r.isError, JSON.stringify(r));
      assert.match(text(r), new RegExp(`"username":"pc-${i}".*"email":"m-${i}-${k}@x\\.org"`), text(r));
    }
    await Promise.all(clients.map((c) => c.close()));
  }),
);

test(
  'shared stdio server: a lone client\'s elicitation works; under concurrency a request is answered by its own client or refused with the reason, never misrouted',
  withDiagnostics(async () => {
    const [one] = await answeringClients(1);
    const alone = await one.callTool({ name: 'confsh:test_elicitation', arguments: { message: 'alone' } });
    assert.match(text(alone), /"username":"pc-0".*"email":"alone@x\.org"/, text(alone));
    await one.close();

    const clients = await answeringClients(2);
    const results = await Promise.all(
      clients.flatMap((c, i) => [0, 1, 2, 3, 4].map((k) => c.callTool({ name: 'confsh:test_elicitation', arguments: { message: `s-${i}-${k}` } }).then((r) => ({ i, k, r })))),
    );
    for (const { i, k, r } of results) {
      const t = text(r);
      const own = new RegExp(`"username":"pc-${i}".*"email":"s-${i}-${k}@x\\.org"`).test(t);
      const refused = /cannot tell which client elicitation\/create is for.*session: per_client/.test(t);
      assert.ok(own || refused, `call s-${i}-${k}: ${t}`);
    }
    await Promise.all(clients.map((c) => c.close()));
  }),
);
