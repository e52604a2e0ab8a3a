// Per-tool policies (`policies:`) through the real binary, with several
// principals: static bearer tokens (alice, bob) and OAuth JWTs issued by a
// real OpenID provider (the npm `oidc-provider`) carrying a `groups` claim
// (dana: dba, erin: dev). Every rule form (tool globs, modes, principals,
// allow, deny, args, annotations, claims, matches, exists, all) and every
// place a tool runs: a direct call, a chain hop, a plugin composite's own
// upstream call, a task the gateway makes (tasks.gateway), call_tool of
// tool search, the listings (tools/list, search_tools) and
// `mcpgw check --principal`. The upstream remembers every call it gets, so
// each refusal is proved never to have reached it; refusals are audited
// with the rule's name, counted, shown on the status page; a reload
// replaces the rules, an invalid one keeps them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BUILD,
  MCPGW,
  Proc,
  REPO,
  closedPort,
  connectHttp,
  httpGet,
  pollUntil,
  readJsonLines,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  toYaml,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { modernClient, terminal } from '../interop/tasks-common.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/policy-upstream-fixture.mjs');
const PLUGIN = path.join(BUILD, 'plugins', 'libbanking_composites.so');
const CLIENTS = [
  { id: 'dana', secret: 'dana-secret', scope: 'mcp:read', claims: { groups: ['dba', 'ops'] } },
  { id: 'erin', secret: 'erin-secret', scope: 'mcp:read', claims: { groups: ['dev'] } },
];
const DROP_MESSAGE = 'mcpgw: refused by policy no-prod-drop: production tables are never dropped here';

export const POLICIES = [
  { name: 'no-prod-drop', match: { tools: ['db:drop_table'] }, deny: 'args.schema == "prod"', message: 'production tables are never dropped here' },
  { name: 'ops-reads', match: { tools: ['db:*'], modes: ['ops'] }, allow: 'tool.annotations.readOnlyHint == true', message: 'the ops mode only reads' },
  { name: 'bob-no-sql', match: { tools: ['db:query'], principals: ['b*'] }, deny: 'true', message: 'bob runs no SQL' },
  { name: 'safe-sql', match: { tools: ['db:query'] }, allow: '!args.sql.matches("(?i)\\\\b(drop|truncate)\\\\b")', message: 'destructive SQL is refused' },
  { name: 'bulk-rows', match: { tools: ['db:bulk'] }, allow: 'size(args.rows) <= 3 && args.rows.all(r, r.startsWith("row")) && !args.rows.exists(r, r == "row-secret")', message: 'at most three plain rows' },
  { name: 'dba-writes', match: { tools: ['db:*'] }, allow: 'tool.annotations.readOnlyHint == true || principal.name == "alice" || "dba" in principal.claims.groups', message: 'only DBAs may change the database' },
];

let idp, issuer, resource, gw, dir, auditFile;
const bearer = (t) => ({ headers: { authorization: `Bearer ${t}` } });
const ALICE = bearer('tok-alice');
const BOB = bearer('tok-bob');

async function startIdp(idpDir, resourceUrl, clients) {
  const proc = new Proc('idp', process.execPath, [path.join(REPO, 'tests/integration/idp-fixture.mjs'), idpDir, resourceUrl, JSON.stringify(clients)]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+)\s*$/);
  return { proc, issuer: m[1] };
}

/** An access token of `id` from the OpenID provider (client_credentials). */
async function tokenFor(id) {
  const c = CLIENTS.find((x) => x.id === id);
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`${c.id}:${c.secret}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: c.scope }),
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  const claims = JSON.parse(Buffer.from(json.access_token.split('.')[1], 'base64url').toString());
  assert.deepEqual(claims.groups, c.claims.groups, 'the provider put the groups claim in the token');
  return json.access_token;
}

function config(policies = POLICIES) {
  return {
    listen: { host: '127.0.0.1', port: Number(new URL(resource).port), path: '/mcp' },
    auth: {
      bearer_tokens: [{ token: 'tok-alice', name: 'alice' }, { token: 'tok-bob', name: 'bob' }],
      oauth: { issuer, audience: resource, jwks_url: `${issuer}/jwks`, leeway_s: 5 },
    },
    modes: { ops: { include_tools: ['db:*'] }, find: { discovery: 'search' } },
    audit: { path: auditFile },
    tasks: { gateway: true },
    welcome: { strategy: 'none' },
    servers: [{ name: 'db', transport: 'stdio', command: process.execPath, args: [FIXTURE] }],
    plugins: [{ path: PLUGIN, config: { get_chained_info: { server: 'db', tool: 'drop_table' } } }],
    policies,
  };
}

/** What the upstream received so far (its own record, read through an allowed call). */
async function upstreamCalls(client) {
  return (await client.callTool('db:calls')).structuredContent.calls;
}

/** Asserts `result` is the refusal of `policy` and that the upstream's calls did not change. */
async function assertRefused(client, result, text, callsBefore) {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(textOf(result), text);
  assert.deepEqual(await upstreamCalls(client), callsBefore, 'the refused call reached the upstream');
}

async function metric(name, want) {
  return sample(parseMetrics((await httpGet(`${gw.base}/metrics`)).text), name, want);
}

const names = (tools) => tools.map((t) => t.name).sort();

before(async () => {
  requireBinaries(PLUGIN);
  dir = tempDir('mcpgw-policies-');
  auditFile = path.join(dir, 'audit.jsonl');
  resource = `http://127.0.0.1:${await closedPort()}/mcp`;
  ({ issuer } = idp = await startIdp(dir, resource, CLIENTS));
  gw = await startGateway(config(), { dir });
});

after(async () => {
  await gw?.proc.stop();
  await idp?.proc.stop();
});

describe('calls', () => {
  test(
    'deny on args: refused with the rule\'s text, never reaching the upstream; other args pass',
    withDiagnostics(async () => {
      const bob = await connectHttp(gw.url, BOB);
      const seen = await upstreamCalls(bob);
      const refused = await bob.callTool('db:drop_table', { schema: 'prod', table: 'users' });
      await assertRefused(bob, refused, DROP_MESSAGE, seen);
      const ok = await bob.callTool('db:drop_table', { schema: 'dev', table: 'users' });
      assert.equal(textOf(ok), 'dropped dev.users');
      assert.deepEqual((await upstreamCalls(bob)).at(-1), { name: 'drop_table', arguments: { schema: 'dev', table: 'users' } });
      // A missing argument fails the expression: refused (fail closed).
      const before = await upstreamCalls(bob);
      await assertRefused(bob, await bob.callTool('db:drop_table', { table: 'users' }), DROP_MESSAGE, before);
      await bob.close();
    }),
  );

  test(
    'allow on annotations and claims: static and OAuth principals, and a principals glob',
    withDiagnostics(async () => {
      const writeText = 'mcpgw: refused by policy dba-writes: only DBAs may change the database';
      const dana = await connectHttp(gw.url, bearer(await tokenFor('dana')));
      const erin = await connectHttp(gw.url, bearer(await tokenFor('erin')));
      const bob = await connectHttp(gw.url, BOB);
      const alice = await connectHttp(gw.url, ALICE);
      // read_rows is read-only: everyone.
      for (const c of [dana, erin, bob, alice]) assert.equal(textOf(await c.callTool('db:read_rows', { table: 't' })), 'rows of t');
      // write_row falls to dba-writes: a DBA's groups claim, or alice by name.
      const seen = await upstreamCalls(dana);
      await assertRefused(erin, await erin.callTool('db:write_row', { table: 't' }), writeText, seen);
      // bob's static token has no claims: reading one fails, so the rule refuses.
      await assertRefused(bob, await bob.callTool('db:write_row', { table: 't' }), writeText, seen);
      assert.equal(textOf(await dana.callTool('db:write_row', { table: 'd' })), 'wrote a row to d');
      assert.equal(textOf(await alice.callTool('db:write_row', { table: 'a' })), 'wrote a row to a');
      assert.deepEqual((await upstreamCalls(dana)).slice(-2).map((c) => c.arguments.table), ['d', 'a']);
      // bob is caught by bob-no-sql (principals: ["b*"]) before safe-sql.
      const now = await upstreamCalls(dana);
      const bobSql = await bob.callTool('db:query', { sql: 'select 1' });
      await assertRefused(bob, bobSql, 'mcpgw: refused by policy bob-no-sql: bob runs no SQL', now);
      assert.equal(textOf(await erin.callTool('db:query', { sql: 'select 1' })), 'ran select 1');
      await Promise.all([dana.close(), erin.close(), bob.close(), alice.close()]);
    }),
  );

  test(
    'matches, size, all and exists over the arguments',
    withDiagnostics(async () => {
      const alice = await connectHttp(gw.url, ALICE);
      const seen = await upstreamCalls(alice);
      await assertRefused(alice, await alice.callTool('db:query', { sql: 'DROP table users' }), 'mcpgw: refused by policy safe-sql: destructive SQL is refused', seen);
      const bulk = 'mcpgw: refused by policy bulk-rows: at most three plain rows';
      await assertRefused(alice, await alice.callTool('db:bulk', { rows: ['row1', 'row2', 'row3', 'row4'] }), bulk, seen);
      await assertRefused(alice, await alice.callTool('db:bulk', { rows: ['row1', 'other'] }), bulk, seen);
      await assertRefused(alice, await alice.callTool('db:bulk', { rows: ['row1', 'row-secret'] }), bulk, seen);
      await assertRefused(alice, await alice.callTool('db:bulk', { rows: ['row1', 7] }), bulk, seen);
      assert.equal(textOf(await alice.callTool('db:bulk', { rows: ['row1', 'row2'] })), 'wrote 2 rows');
      assert.equal(textOf(await alice.callTool('db:query', { sql: 'select dropped from t' })), 'ran select dropped from t');
      await alice.close();
    }),
  );

  test(
    'modes: a rule for mode ops only applies there',
    withDiagnostics(async () => {
      const ops = await connectHttp(`${gw.base}/mcp/ops`, ALICE);
      const all = await connectHttp(gw.url, ALICE);
      const seen = await upstreamCalls(all);
      await assertRefused(all, await ops.callTool('db:bulk', { rows: ['row1'] }), 'mcpgw: refused by policy ops-reads: the ops mode only reads', seen);
      assert.equal(textOf(await all.callTool('db:bulk', { rows: ['row1'] })), 'wrote 1 rows');
      await Promise.all([ops.close(), all.close()]);
    }),
  );
});

describe('every place a tool runs', () => {
  test(
    'a chain hop is decided on its own: the hop is refused, the first call ran',
    withDiagnostics(async () => {
      const alice = await connectHttp(gw.url, ALICE);
      const seen = await upstreamCalls(alice);
      const r = await alice.callTool('db:next', { tool: 'db:drop_table', arguments: { schema: 'prod', table: 'x' } });
      assert.ok(JSON.stringify(r.content).includes(DROP_MESSAGE), JSON.stringify(r));
      const after = await upstreamCalls(alice);
      assert.deepEqual(after, [...seen, { name: 'next', arguments: { tool: 'db:drop_table', arguments: { schema: 'prod', table: 'x' } } }]);
      await alice.close();
    }),
  );

  test(
    'a plugin composite\'s upstream call is decided as the calling principal',
    withDiagnostics(async () => {
      const bob = await connectHttp(gw.url, BOB);
      const seen = await upstreamCalls(bob);
      const r = await bob.callTool('get_chained_info', { arguments: { schema: 'prod', table: 'y' } });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.equal(textOf(r), `Failed to get drop_table from db: ${DROP_MESSAGE}`);
      assert.deepEqual(await upstreamCalls(bob), seen, 'the composite\'s refused call reached the upstream');
      const ok = await bob.callTool('get_chained_info', { arguments: { schema: 'dev', table: 'y' } });
      assert.deepEqual(ok.structuredContent.data, { dropped: 'dev.y' });
      await bob.close();
    }),
  );

  test(
    'a task the gateway makes (tasks.gateway) completes with the refusal; the upstream is not called',
    withDiagnostics(async () => {
      const alice = await connectHttp(gw.url, ALICE);
      const seen = await upstreamCalls(alice);
      const c = modernClient(gw.url, { headers: { Authorization: 'Bearer tok-bob' } });
      const created = await c.result('tools/call', { name: 'db:drop_table', arguments: { schema: 'prod', table: 'z' } });
      assert.ok(created.taskId, JSON.stringify(created));
      const done = await c.until(created.taskId, terminal);
      assert.equal(done.status, 'completed');
      assert.equal(done.result.isError, true);
      assert.equal(done.result.content[0].text, DROP_MESSAGE);
      assert.deepEqual(await upstreamCalls(alice), seen);
      await alice.close();
    }),
  );

  test(
    'tool search: search_tools finds only what the principal may call; call_tool is decided like a call',
    withDiagnostics(async () => {
      const bob = await connectHttp(`${gw.base}/mcp/find`, BOB);
      const dana = await connectHttp(`${gw.base}/mcp/find`, bearer(await tokenFor('dana')));
      const found = async (c, q) => (await c.callTool('search_tools', { query: q, limit: 50 })).structuredContent.tools?.map((t) => t.name) ?? [];
      assert.ok(!(await found(bob, 'server:db')).includes('db:query'), 'bob finds db:query');
      assert.ok((await found(dana, 'server:db')).includes('db:query'));
      assert.ok((await found(bob, 'server:db')).includes('db:drop_table'), 'a tool some arguments allow is found');
      const alice = await connectHttp(gw.url, ALICE);
      const seen = await upstreamCalls(alice);
      const r = await bob.callTool('call_tool', { name: 'db:drop_table', arguments: { schema: 'prod', table: 'w' } });
      await assertRefused(alice, r, DROP_MESSAGE, seen);
      await Promise.all([bob.close(), dana.close(), alice.close()]);
    }),
  );

  test(
    'tools/list leaves out what no arguments could let the principal call',
    withDiagnostics(async () => {
      const listed = async (url, opts) => {
        const c = await connectHttp(url, opts);
        const tools = names((await c.listAllTools()).tools);
        await c.close();
        return tools;
      };
      // The plugin's other composites match no rule: allowed, listed.
      const every = ['account_overview', 'db:bulk', 'db:calls', 'db:drop_table', 'db:next', 'db:query', 'db:read_rows', 'db:write_row',
        'get_chained_info', 'safe_transfer'];
      assert.deepEqual(await listed(gw.url, ALICE), every);
      assert.deepEqual(await listed(gw.url, bearer(await tokenFor('dana'))), every);
      assert.deepEqual(await listed(gw.url, BOB), every.filter((n) => n !== 'db:query' && n !== 'db:write_row'));
      assert.deepEqual(await listed(gw.url, bearer(await tokenFor('erin'))), every.filter((n) => n !== 'db:write_row'));
      // In mode ops only what reads (or what its own earlier rule may allow) is listed.
      assert.deepEqual(await listed(`${gw.base}/mcp/ops`, ALICE), ['db:calls', 'db:drop_table', 'db:next', 'db:read_rows']);
    }),
  );
});

describe('operations', () => {
  test(
    'a refusal is audited with the rule\'s name, counted as reason policy, and shown on the status page',
    withDiagnostics(async () => {
      const before = await metric('mcpgw_refused_total', { reason: 'policy' });
      const bob = await connectHttp(gw.url, BOB);
      await bob.callTool('db:drop_table', { schema: 'prod', table: 'audited' });
      assert.equal(await metric('mcpgw_refused_total', { reason: 'policy' }), before + 1);
      const line = await pollUntil(() => readJsonLines(auditFile).find((l) => l.policy === 'no-prod-drop' && l.principal === 'bob' && l.upstream_tool === 'drop_table' && l.outcome === 'refused'), { what: 'the audit line' });
      assert.equal(line.event, 'refused');
      assert.equal(line.tool, 'db:drop_table');
      assert.equal(line.server, 'db');
      assert.equal(line.reason, 'policy no-prod-drop: production tables are never dropped here');
      const status = await httpGet(`${gw.base}/status.json`, { headers: { authorization: 'Bearer tok-alice' } });
      assert.equal(status.status, 200);
      const recent = JSON.parse(status.text).recent;
      assert.ok(recent.some((e) => e.reason === line.reason && e.principal === 'bob'), JSON.stringify(recent));
      await bob.close();
    }),
  );

  test(
    'mcpgw check --principal shows the catalog as that principal sees it',
    withDiagnostics(async () => {
      const file = writeConfig(tempDir(), config());
      const check = async (...extra) => {
        const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, '--json', ...extra]);
        const exit = await proc.waitExit(30000);
        return { exit, out: proc.stdoutText, err: proc.stderrText };
      };
      const tools = (r) => JSON.parse(r.out).tools.map((t) => t.name).sort();
      const bob = await check('--principal', 'bob');
      assert.equal(bob.exit.code, 0, bob.err);
      assert.equal(JSON.parse(bob.out).principal, 'bob');
      assert.ok(!tools(bob).includes('db:query'));
      assert.ok(tools(bob).includes('db:drop_table'));
      const alice = await check('--principal', 'alice');
      assert.ok(tools(alice).includes('db:query'));
      // An OAuth principal: its token's claims are given with --claims.
      assert.ok(!tools(bob).includes('db:write_row'));
      const dev = await check('--principal', 'zoe', '--claims', '{"groups":["dev"]}');
      assert.equal(dev.exit.code, 0, dev.err);
      assert.ok(!tools(dev).includes('db:write_row'));
      // Listed in mode find; in mode ops the rule ops-reads hides it.
      assert.deepEqual(JSON.parse(dev.out).tools.find((t) => t.name === 'db:bulk').modes, ['find']);
      const dba = await check('--principal', 'zoe', '--claims', '{"groups":["dba"]}');
      assert.ok(tools(dba).includes('db:write_row'));
      const plain = await check();
      assert.equal(JSON.parse(plain.out).principal, undefined);
      // No OAuth: only the bearer tokens' names are principals.
      const noOauth = writeConfig(tempDir(), { ...config(), auth: { bearer_tokens: [{ token: 'tok-alice', name: 'alice' }] } });
      const unknown = new Proc('mcpgw-check', MCPGW, ['check', '--config', noOauth, '--principal', 'mallory']);
      const exit = await unknown.waitExit(30000);
      assert.equal(exit.code, 2);
      assert.match(unknown.stderrText, /--principal: no bearer token is named "mallory" \(auth\.bearer_tokens: alice\)/);
    }),
  );

  test(
    'SIGHUP replaces the rules; an invalid expression keeps the old ones and says where',
    withDiagnostics(async () => {
      const reloadDir = tempDir('mcpgw-policies-reload-');
      const own = await startGateway(config(), { dir: reloadDir, label: 'mcpgw-reload' });
      try {
        const bob = await connectHttp(own.url, BOB);
        assert.equal((await bob.callTool('db:drop_table', { schema: 'prod', table: 'a' })).isError, true);
        const stricter = [{ name: 'no-drop', match: { tools: ['db:drop_table'] }, deny: 'true', message: 'no drops at all' }];
        const reloaded = own.proc.waitForLine('stderr', /reloaded /, 20000);
        writeFileSync(own.configPath, toYaml(config(stricter)));
        own.proc.child.kill('SIGHUP');
        await reloaded;
        assert.equal(textOf(await bob.callTool('db:drop_table', { schema: 'dev', table: 'a' })), 'mcpgw: refused by policy no-drop: no drops at all');
        // Invalid: an unknown variable. The old rules stay.
        const bad = [{ name: 'broken', match: { tools: ['db:*'] }, allow: 'principl.name == "x"' }];
        const text = toYaml(config(bad));
        const line = text.split('\n').findIndex((l) => l.includes('principl.name')) + 1;
        const logged = own.proc.waitForLine('stderr', /^.*reload failed.*$/, 20000);
        writeFileSync(own.configPath, text);
        own.proc.child.kill('SIGHUP');
        const [failed] = await logged;
        assert.ok(failed.includes(`${own.configPath}:${line}: policies[0].allow: column 1: unknown variable 'principl'`), failed);
        assert.equal(textOf(await bob.callTool('db:drop_table', { schema: 'dev', table: 'a' })), 'mcpgw: refused by policy no-drop: no drops at all');
        await bob.close();
      } finally {
        await own.proc.stop();
      }
    }),
  );
});
