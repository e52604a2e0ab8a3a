// Tool integrity (CONTRACT wave 4 "Integrity"; docs/operations.md "Tool
// integrity") end to end, against an upstream that changes its definitions
// at run time and says so with tools/list_changed: under pins: block
// nothing unapproved reaches a client (lists, calls, search, chains,
// tasks), `mcpgw pins approve` restores it without a restart, the pins
// survive a restart (file store); under warn the audit names what changed
// (a schema-only change included); hidden instructions of the published
// tool-poisoning examples are withheld on first sight and named by
// `mcpgw check`; invisible characters never reach a client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  MCPGW,
  Proc,
  REPO,
  connectHttp,
  httpGet,
  openGetStream,
  pollUntil,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/integrity-fixture.mjs');
const fixture = (name, variant = 'v1', extra = {}) => ({
  name, transport: 'stdio', command: process.execPath, args: [FIXTURE, '--variant', variant], ...extra,
});

/** Runs `mcpgw ARGS...`; resolves with its exit code and output. */
async function mcpgw(args) {
  requireBinaries(MCPGW);
  const proc = new Proc(`mcpgw ${args[0]} ${args[1] || ''}`, MCPGW, args);
  const exit = await proc.waitExit(30000);
  return { code: exit.code, stdout: proc.stdoutText, stderr: proc.stderrText };
}

const names = async (c) => (await c.listAllTools()).tools.map((t) => t.name).sort();
const approveHint = (r, tool) => {
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.match(textOf(r), new RegExp(`tool ${tool} is withheld`), JSON.stringify(r));
  assert.match(textOf(r), new RegExp(`mcpgw pins approve ${tool}`), JSON.stringify(r));
};

/** Waits for a tools/list_changed on `stream` after message index `from`. */
const listChanged = (stream, from) =>
  stream.waitFor((m) => m.method === 'notifications/tools/list_changed' && stream.messages.indexOf(m) >= from, 20000);

test(
  'block: a rug pull and a new tool reach no list, call, search, chain or task until approved; approval needs no restart; pins survive a restart',
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-pins-');
    const store = path.join(dir, 'pins.json');
    const config = {
      integrity: { pins: 'block', store },
      tasks: { gateway: true },
      modes: { find: { discovery: 'search' } },
      servers: [fixture('fx')],
    };
    const gw = await startGateway(config, { dir });
    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    assert.deepEqual(await names(c), ['fx:add', 'fx:mutate', 'fx:start']);
    assert.equal(textOf(await c.callTool('fx:add', { a: 2, b: 3 })), '5');
    // First sight pinned every tool, in the store file.
    const pinned = JSON.parse(readFileSync(store, 'utf8'));
    assert.deepEqual(Object.keys(pinned.servers.fx).sort(), ['fx:add', 'fx:mutate', 'fx:start']);

    // The rug pull: add's description changes at run time.
    let from = stream.messages.length;
    assert.equal(textOf(await c.callTool('fx:mutate', { change: 'description' })), 'mutated description');
    await listChanged(stream, from);
    assert.deepEqual(await names(c), ['fx:mutate', 'fx:start']);
    approveHint(await c.callTool('fx:add', { a: 2, b: 3 }), 'fx:add');
    // A chain hop to it is refused with the same words.
    const chained = await c.callTool('fx:start');
    assert.match(JSON.stringify(chained), /withheld: mcpgw: tool fx:add is withheld/);
    assert.doesNotMatch(JSON.stringify(chained), /"text":"3"/);
    // So is a task.
    const t = await connectHttp(gw.url, { protocolVersion: '2025-11-25', capabilities: { tasks: {} } });
    approveHint(await t.result('tools/call', { name: 'fx:add', arguments: { a: 1, b: 1 }, task: {} }), 'fx:add');
    await t.close();
    // Search finds it not; call_tool is refused.
    const s = await connectHttp(gw.url.replace(/\/mcp$/, '/mcp/find'));
    const found = await s.callTool('search_tools', { query: 'adds two numbers' });
    assert.doesNotMatch(JSON.stringify(found), /fx:add/);
    approveHint(await s.callTool('call_tool', { name: 'fx:add', arguments: { a: 1, b: 1 } }), 'fx:add');

    // A new tool of the pinned server waits too.
    from = stream.messages.length;
    await c.callTool('fx:mutate', { change: 'new' });
    await pollUntil(async () => (await gw.proc.stderrText).includes('tool fx:mul of server fx is new'), { what: 'fx:mul reported' });
    assert.deepEqual(await names(c), ['fx:mutate', 'fx:start']);
    approveHint(await c.callTool('fx:mul', { a: 2, b: 3 }), 'fx:mul');

    // Reported: the log, the metric, the status page, `mcpgw pins list`.
    assert.match(gw.proc.stderrText, /integrity: tool fx:add of server fx is changed \(description\); withheld until approved/);
    const metrics = (await httpGet(`${gw.base}/metrics`)).text;
    assert.match(metrics, /mcpgw_integrity_changes_total\{server="fx",state="changed"\} 1/);
    assert.match(metrics, /mcpgw_integrity_withheld_tools 2/);
    const status = JSON.parse((await httpGet(`${gw.base}/status.json`)).text);
    assert.equal(status.integrity.pins, 'block');
    assert.deepEqual(status.integrity.waiting.map((w) => [w.tool, w.state, w.withheld]).sort(),
      [['fx:add', 'changed', true], ['fx:mul', 'new', true]]);
    const list = await mcpgw(['pins', 'list', '--config', gw.configPath]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /fx\s+fx:add\s+changed\s+\S+Z\s+description/);
    assert.match(list.stdout, /fx\s+fx:mul\s+new\s+\S+Z\s+new tool/);
    assert.match(list.stdout, /fx\s+fx:start\s+pinned/);

    // Approval reaches the running gateway: no signal, no restart.
    assert.equal((await mcpgw(['pins', 'approve', '--config', gw.configPath, 'nope'])).code, 1);
    from = stream.messages.length;
    const approved = await mcpgw(['pins', 'approve', '--config', gw.configPath, 'fx:add']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /approved fx:add \(server fx\)/);
    await listChanged(stream, from);
    assert.deepEqual(await names(c), ['fx:add', 'fx:mutate', 'fx:start']);
    const listed = (await c.listAllTools()).tools.find((t) => t.name === 'fx:add');
    assert.match(listed.description, /rounding the sum/);
    assert.equal(textOf(await c.callTool('fx:add', { a: 2, b: 3 })), '5');
    assert.equal(textOf(await c.callTool('fx:start')).includes('3'), true);
    from = stream.messages.length;
    assert.equal((await mcpgw(['pins', 'approve', '--config', gw.configPath, '--server', 'fx'])).code, 0);
    await listChanged(stream, from);
    assert.equal(textOf(await c.callTool('fx:mul', { a: 2, b: 3 })), '6');
    stream.close();
    await c.close();
    await s.close();
    await gw.proc.stop();

    // A restart: the fixture starts over with its first description, which
    // is no longer the approved pin.
    const again = await startGateway(config, { dir });
    const c2 = await connectHttp(again.url);
    assert.deepEqual(await names(c2), ['fx:mutate', 'fx:start']);
    approveHint(await c2.callTool('fx:add', { a: 1, b: 1 }), 'fx:add');
    await c2.close();
    await again.proc.stop();
  }),
);

test(
  'warn: changes are served, and the log and the audit name what changed, a schema-only change (a new sidenote) included',
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-pins-warn-');
    const audit = path.join(dir, 'audit.log');
    const gw = await startGateway({ integrity: { pins: 'warn' }, audit: { path: audit }, servers: [fixture('fx')] }, { dir });
    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    const from = stream.messages.length;
    await c.callTool('fx:mutate', { change: 'schema' });
    await listChanged(stream, from);
    const add = (await c.listAllTools()).tools.find((t) => t.name === 'fx:add');
    assert.ok(add.inputSchema.properties.sidenote, 'the changed tool is served under warn');
    assert.equal(textOf(await c.callTool('fx:add', { a: 1, b: 2 })), '3');
    await pollUntil(() => readFileSync(audit, 'utf8').includes('"event":"integrity"'), { what: 'the integrity audit line' });
    const line = JSON.parse(readFileSync(audit, 'utf8').split('\n').find((l) => l.includes('"event":"integrity"')));
    assert.equal(line.tool, 'fx:add');
    assert.equal(line.server, 'fx');
    assert.equal(line.outcome, 'served');
    assert.equal(line.reason, 'changed: inputSchema: property sidenote added');
    assert.match(gw.proc.stderrText, /tool fx:add of server fx is changed \(inputSchema: property sidenote added\); served \(pins: warn\)/);
    stream.close();
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'hidden instructions (the published poisoning and shadowing examples) are withheld on first sight and named by mcpgw check',
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-pins-poison-');
    const config = { integrity: { pins: 'block', store: path.join(dir, 'pins.json') }, servers: [fixture('fx', 'poison'), fixture('mail', 'mail')] };
    const gw = await startGateway(config, { dir });
    const c = await connectHttp(gw.url);
    assert.deepEqual(await names(c), ['fx:add', 'fx:mutate', 'fx:start', 'mail:send_email']);
    const r = await c.callTool('fx:note', { a: 1, b: 2, sidenote: 'x' });
    approveHint(r, 'fx:note');
    assert.match(textOf(r), /hidden instructions \(rule markup\)/);
    approveHint(await c.callTool('fx:relay', { text: 'x' }), 'fx:relay');
    assert.match(gw.proc.stderrText, /tool fx:note of server fx is new \(first sight; hidden instructions: markup at description: [^\n]*conceal at description[^\n]*credential at description/);
    assert.match(gw.proc.stderrText, /tool fx:relay of server fx is new \(first sight; hidden instructions: other-tool at description: [^\n]*send_email/);
    await c.close();

    const check = await mcpgw(['check', '--config', gw.configPath]);
    assert.match(check.stdout, /warning: integrity: tool fx:note of server fx is new \(first sight; hidden instructions: markup at description/);
    assert.match(check.stdout, /withheld until approved \(mcpgw pins approve fx:note\)/);
    assert.match(check.stdout, /warning: integrity: tool fx:relay of server fx is new \(first sight; hidden instructions: other-tool/);
    assert.doesNotMatch(check.stdout, /^\s+fx:note\b/m, 'check lists a withheld tool');
    await gw.proc.stop();
  }),
);

test(
  'invisible characters: tag characters, zero-width and bidi controls and terminal escapes are removed from what clients see, logged once',
  withDiagnostics(async () => {
    const gw = await startGateway({ servers: [fixture('fx', 'invisible')] });
    const c = await connectHttp(gw.url);
    const add = (await c.listAllTools()).tools.find((t) => t.name === 'fx:add');
    assert.equal(add.description, '[Proxied from fx] Adds two numbers. hidden');
    assert.equal(add.title, 'Add');
    const greet = (await c.result('prompts/list')).prompts.find((p) => p.name === 'fx:greet');
    assert.equal(greet.description, '[Proxied from fx] Greets someone.');
    assert.equal(textOf(await c.callTool('fx:add', { a: 1, b: 1 })), '2');
    const logged = gw.proc.stderrText.match(/invisible characters removed from tool fx:add: \d+ removed/g) || [];
    assert.equal(logged.length, 1, gw.proc.stderrText);
    assert.match(gw.proc.stderrText, /invisible characters removed from prompt fx:greet/);
    await c.close();
    await gw.proc.stop();

    // strip_invisible: false relays them as they are.
    const raw = await startGateway({ integrity: { strip_invisible: false }, servers: [fixture('fx', 'invisible')] });
    const r = await connectHttp(raw.url);
    const kept = (await r.listAllTools()).tools.find((t) => t.name === 'fx:add');
    assert.match(kept.description, /\u200B/);
    await r.close();
    await raw.proc.stop();
  }),
);

test(
  'integrity configuration: unknown keys and values are errors naming file, line and key; pins commands without a store say so',
  withDiagnostics(async () => {
    const dir = tempDir('mcpgw-pins-config-');
    const bad = writeConfig(dir, { integrity: { pins: 'sometimes' }, servers: [] }, 'bad.yaml');
    const r1 = await mcpgw(['--config', bad]);
    assert.equal(r1.code, 2);
    assert.match(r1.stderr, /bad\.yaml:\d+: integrity\.pins: /);
    const typo = writeConfig(dir, { integrity: { pin: 'warn' }, servers: [] }, 'typo.yaml');
    const r2 = await mcpgw(['--config', typo]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /typo\.yaml:\d+: integrity\.pin: /);
    const memory = writeConfig(dir, { servers: [] }, 'memory.yaml');
    const r3 = await mcpgw(['pins', 'list', '--config', memory]);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /memory only/);
    const r4 = await mcpgw(['pins', 'approve', '--config', memory]);
    assert.equal(r4.code, 2);
  }),
);
