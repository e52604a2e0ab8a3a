// `mcpgw --config F --stdio`: one client over newline-delimited JSON-RPC on
// stdin/stdout; nothing else on stdout; EOF on stdin ends the process with 0
// and takes the upstream children with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  bankStdio,
  descendants,
  pidFromResult,
  pollUntil,
  requireBinaries,
  startGatewayStdio,
  textOf,
  toolByName,
  toolboxStdio,
  waitGone,
  withDiagnostics,
} from './harness.mjs';

test(
  'stdio mode: initialize, tools/list, tools/call, clean stdout, exit 0 on EOF, children reaped',
  withDiagnostics(async () => {
    requireBinaries();
    const { proc, client } = startGatewayStdio({ servers: [bankStdio(), toolboxStdio()] });

    const init = await client.initialize({ protocolVersion: '2025-06-18' });
    assert.equal(init.protocolVersion, '2025-06-18');
    assert.equal(typeof init.serverInfo.name, 'string');
    assert.ok(init.capabilities.tools);
    assert.deepEqual(await client.result('ping'), {});

    const { tools } = await client.listAllTools();
    const pmt = toolByName(tools, 'bank:prepare_money_transfer');
    assert.ok(pmt, `bank:prepare_money_transfer missing from ${tools.map((t) => t.name)}`);
    assert.match(pmt.description, /^\[Proxied from bank\] /);
    assert.deepEqual(pmt.inputSchema.required?.slice().sort(), ['amount', 'fromAccountId', 'toAccountId']);
    assert.ok(toolByName(tools, 'toolbox:echo'));

    const echo = await client.callTool('toolbox:echo', { text: 'over stdio' });
    assert.deepEqual(echo, { content: [{ type: 'text', text: 'over stdio' }] });
    const transfer = await client.callTool('bank:prepare_money_transfer', { fromAccountId: 'acc_savings_001', toAccountId: 'acc_credit_001', amount: 12.5, memo: 'card' });
    assert.equal(transfer.isError, undefined, JSON.stringify(transfer));
    assert.equal(transfer.structuredContent.status, 'prepared');
    assert.equal(transfer.structuredContent.amount, 12.5);
    assert.equal(transfer.structuredContent.memo, 'card');
    const garbage = await client.callTool('toolbox:garbage');
    assert.equal(textOf(garbage), 'ok');

    const unknown = await client.request('tools/call', { name: 'toolbox:nope', arguments: {} });
    assert.equal(unknown.error?.code, -32602, JSON.stringify(unknown));

    // A malformed line gets a -32700 answer and does not end the session.
    client.write('{"jsonrpc":"2.0","id":');
    await pollUntil(() => client.messages.some((m) => m.error?.code === -32700), { timeoutMs: 5000, what: 'a -32700 response' });
    assert.deepEqual(await client.result('ping'), {});

    const toolboxPid = pidFromResult(await client.callTool('toolbox:pid'));
    const children = descendants(proc.pid);
    assert.ok(children.some((s) => s.pid === toolboxPid), `toolbox pid ${toolboxPid} is not a descendant of mcpgw: ${JSON.stringify(children)}`);
    assert.ok(children.some((s) => s.comm.startsWith('bank-server')), `no bank-server child: ${JSON.stringify(children)}`);

    client.closeStdin();
    const exit = await proc.waitExit(10000);
    assert.deepEqual(exit, { code: 0, signal: null });

    assert.deepEqual(client.badLines, [], 'stdout carried non-JSON-RPC lines');
    assert.ok(client.lines.length >= 8);
    for (const m of client.messages) assert.equal(m.jsonrpc, '2.0', JSON.stringify(m));

    const survivors = await waitGone(children, 5000);
    assert.deepEqual(survivors, [], 'upstream children outlived the gateway');
  }),
);

test(
  'stdio mode: one I/O thread unless --threads says otherwise (the one client and its stdio upstreams share it)',
  withDiagnostics(async () => {
    requireBinaries();
    const threadsOf = (pid) => Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    const plain = startGatewayStdio({ servers: [toolboxStdio()] });
    const three = startGatewayStdio({ servers: [toolboxStdio()] }, { extraArgs: ['--threads', '3'] });
    try {
      for (const { client } of [plain, three]) {
        await client.initialize({ protocolVersion: '2025-06-18' });
        assert.deepEqual(await client.callTool('toolbox:echo', { text: 'one' }), { content: [{ type: 'text', text: 'one' }] });
      }
      // Both did the same, so they differ by the two extra I/O threads alone.
      await pollUntil(() => threadsOf(three.proc.pid) - threadsOf(plain.proc.pid) === 2, {
        timeoutMs: 5000,
        what: `two more threads with --threads 3 (now ${threadsOf(three.proc.pid)} against ${threadsOf(plain.proc.pid)})`,
      });
    } finally {
      for (const { client, proc } of [plain, three]) {
        client.closeStdin();
        await proc.waitExit(10000);
      }
    }
  }),
);
