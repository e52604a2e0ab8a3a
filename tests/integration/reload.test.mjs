// SIGHUP reload: a server added to the file is started without dropping the
// client sessions, which are told through notifications/tools/list_changed on
// their GET stream; an invalid new file is logged (file and key) and the
// previous configuration keeps serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import {
  bankStdio,
  connectHttp,
  descendants,
  pidFromResult,
  pollUntil,
  waitGone,
  openGetStream,
  requireBinaries,
  startGateway,
  textOf,
  toYaml,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';

const listen = { host: '127.0.0.1', port: 0, path: '/mcp' };

test(
  'SIGHUP adds a server: list_changed on the open GET stream, new tools work, old session kept; an invalid file keeps the old config',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ listen, servers: [bankStdio()] }, { label: 'mcpgw-reload' });
    const old = await connectHttp(gw.url);
    const before = (await old.listAllTools()).tools.map((t) => t.name);
    assert.ok(before.includes('bank:list_accounts'));
    assert.ok(!before.some((n) => n.startsWith('toolbox:')), before.join(','));
    const stream = await openGetStream(old);
    assert.equal(stream.status, 200);

    writeFileSync(gw.configPath, toYaml({ listen, servers: [bankStdio(), toolboxStdio()] }));
    gw.proc.child.kill('SIGHUP');

    const note = await stream.waitFor((m) => m.method === 'notifications/tools/list_changed', 10000);
    assert.equal(note.jsonrpc, '2.0');
    assert.equal(note.id, undefined);

    const after = (await old.listAllTools()).tools.map((t) => t.name);
    assert.ok(after.includes('toolbox:echo'), after.join(','));
    assert.ok(after.includes('bank:list_accounts'), after.join(','));
    assert.deepEqual(await old.callTool('toolbox:echo', { text: 'reloaded' }), { content: [{ type: 'text', text: 'reloaded' }] });
    const bal = await old.callTool('bank:get_account_balance', { accountId: 'acc_savings_001' });
    assert.deepEqual(bal.structuredContent, { accountId: 'acc_savings_001', balance: 15020.5, currency: 'USD' });
    // A session opened after the reload sees the same catalog.
    const fresh = await connectHttp(gw.url);
    assert.deepEqual((await fresh.listAllTools()).tools.map((t) => t.name).sort(), [...after].sort());
    assert.equal(textOf(await fresh.callTool('toolbox:echo', { text: 'new session' })), 'new session');

    // An invalid file: logged with file and key; the previous config stays.
    const logged = gw.proc.waitForLine('stderr', /^.*bogus_reload_key.*$/, 10000);
    const valid = toYaml({ listen, servers: [bankStdio(), toolboxStdio()] });
    const badLine = valid.split('\n').length; // the line after the valid part
    writeFileSync(gw.configPath, `${valid}bogus_reload_key: 1\n`);
    gw.proc.child.kill('SIGHUP');
    const [line] = await logged;
    assert.ok(line.includes(`${gw.configPath}:${badLine}: bogus_reload_key`), `the log line does not name ${gw.configPath}:${badLine}: bogus_reload_key: ${line}`);
    assert.ok(gw.proc.alive, 'the gateway exited on an invalid reload');
    const still = (await old.listAllTools()).tools.map((t) => t.name);
    assert.deepEqual([...still].sort(), [...after].sort());
    assert.equal(textOf(await old.callTool('toolbox:echo', { text: 'still here' })), 'still here');
    assert.equal((await old.callTool('bank:list_accounts')).structuredContent.accounts.length, 3);
    assert.deepEqual(await fresh.result('ping'), {});
    assert.ok(!stream.ended, 'the GET stream was dropped');
    stream.close();
    await Promise.all([old.close(), fresh.close()]);
  }),
);

test(
  'SIGHUP with a changed server restarts it (new pid, new tools); a removed server is stopped and unlisted',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ listen, servers: [bankStdio(), toolboxStdio()] }, { label: 'mcpgw-reload-2' });
    const c = await connectHttp(gw.url);
    const pid = pidFromResult(await c.callTool('toolbox:pid'));
    const bankChild = descendants(gw.proc.pid).find((s) => s.comm.startsWith('bank-server'));
    const toolboxFirst = descendants(gw.proc.pid).find((s) => s.pid === pid);
    assert.ok(bankChild && toolboxFirst, JSON.stringify(descendants(gw.proc.pid)));
    const stream = await openGetStream(c);
    assert.equal(stream.status, 200);

    // toolbox changed (two generated tools), bank unchanged.
    writeFileSync(gw.configPath, toYaml({ listen, servers: [bankStdio(), toolboxStdio({ args: ['--tools', '2'] })] }));
    gw.proc.child.kill('SIGHUP');
    const names = await pollUntil(
      async () => {
        const n = (await c.listAllTools()).tools.map((t) => t.name);
        return n.includes('toolbox:gen_1') && n;
      },
      { timeoutMs: 10000, what: 'toolbox:gen_1 to be listed after the reload' },
    );
    assert.deepEqual(names.filter((n) => n.startsWith('toolbox:gen_')).sort(), ['toolbox:gen_0', 'toolbox:gen_1']);
    await stream.waitFor((m) => m.method === 'notifications/tools/list_changed', 5000);
    const pid2 = pidFromResult(await c.callTool('toolbox:pid'));
    assert.notEqual(pid2, pid, 'the changed server was not restarted');
    assert.deepEqual(await waitGone([toolboxFirst]), [], 'the old toolbox process is still there');
    // The unchanged server kept its process.
    assert.ok(descendants(gw.proc.pid).some((s) => s.pid === bankChild.pid && s.starttime === bankChild.starttime), 'bank was restarted though unchanged');

    // toolbox removed.
    const toolboxChild = descendants(gw.proc.pid).find((s) => s.pid === pid2);
    assert.ok(toolboxChild);
    const changes = stream.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
    writeFileSync(gw.configPath, toYaml({ listen, servers: [bankStdio()] }));
    gw.proc.child.kill('SIGHUP');
    await stream.waitFor((m) => m.method === 'notifications/tools/list_changed' && stream.messages.filter((x) => x.method === m.method).length > changes, 10000);
    assert.deepEqual(await waitGone([toolboxChild]), [], 'the removed server process is still there');
    const left = (await c.listAllTools()).tools.map((t) => t.name);
    assert.ok(!left.some((n) => n.startsWith('toolbox:')), left.join(','));
    const gone = await c.request('tools/call', { name: 'toolbox:echo', arguments: { text: 'x' } });
    assert.equal(gone.error?.code, -32602, JSON.stringify(gone));
    assert.equal((await c.callTool('bank:list_accounts')).structuredContent.accounts.length, 3);
    stream.close();
    await c.close();
  }),
);
