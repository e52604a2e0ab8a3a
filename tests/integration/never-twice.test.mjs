// Never twice: a request that may have reached an upstream is not sent to
// it again, through the real binary.
//   - the fault fixture carries out a tools/call, then closes the
//     connection without answering (a crash after the side effect): the
//     call ends in an isError naming the server and saying it may have run
//     and was not sent again; the fixture counts one execution;
//   - the bank example's transfer_money over HTTP (2026-07-28, so the
//     confirmed transfer is a request of its own) behind a proxy that lets
//     the confirmed request reach the bank and then cuts the gateway's
//     connection (harness startTap with `cut`): the money moves once, the client is told it may have.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFault } from './fault.mjs';
import { BANK, connectHttp, httpServer, pollUntil, requireBinaries, startGateway, startTap, startUpstreamHttp, textOf, withDiagnostics } from './harness.mjs';
import { srpc } from './stateless.mjs';

before(() => requireBinaries(BANK));

const MAY_HAVE_RUN = /^mcpgw: upstream 'fx' failed: http:\/\/127\.0\.0\.1:\d+\/mcp: .+; the request may have been carried out there and was not sent again$/;

test(
  'a tools/call the upstream carried out before its connection broke is not sent again: isError naming the server, one execution',
  withDiagnostics(async () => {
    const fx = await startFault(['--cut', 'act', '--get', '405']);
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('fx', fx.url)] }, { label: 'mcpgw-cut' });
    const c = await connectHttp(gw.url);
    // Warm the pool: the next request goes out on a kept-alive connection.
    assert.equal(textOf(await c.callTool('fx:echo', { text: 'warm' })), 'warm');
    for (const key of ['k1', 'k2', 'k3']) {
      const r = await c.callTool('fx:act', { key });
      assert.equal(textOf(await c.callTool('fx:count', { key })), '1', `act ${key} ran more than once`);
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), MAY_HAVE_RUN);
    }
    // The server is still usable.
    assert.equal(textOf(await c.callTool('fx:echo', { text: 'after' })), 'after');
    await c.close();
    await gw.proc.stop();
    await fx.proc.stop();
  }),
);

test(
  'a kept-alive connection the upstream closed while idle is found closed before use: the next call goes on a fresh one and succeeds',
  withDiagnostics(async () => {
    const fx = await startFault(['--get', '405', '--idle-close-ms', '50']);
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('fx', fx.url)] }, { label: 'mcpgw-idle' });
    const c = await connectHttp(gw.url);
    const closed = () => fx.proc.stdoutText.split('\n').filter((l) => l === 'closed').length;
    for (const key of ['i1', 'i2', 'i3']) {
      const before = closed();
      assert.equal(textOf(await c.callTool('fx:act', { key })), `done ${key}`);
      // The fixture closes that connection once it has been idle a while.
      await pollUntil(() => closed() > before, { what: 'the upstream to close the idle connection' });
      assert.equal(textOf(await c.callTool('fx:count', { key })), '1');
    }
    await c.close();
    await gw.proc.stop();
    await fx.proc.stop();
  }),
);

test(
  'bank transfer_money over HTTP whose confirmed request loses its connection after the bank carried it out: the money moves once',
  withDiagnostics(async () => {
    const bank = await startUpstreamHttp(BANK, ['--transfer-tool', 'transfer_money', '--era', 'both'], { label: 'bank-http' });
    // The confirmed transfer (a tools/call carrying inputResponses) reaches
    // the bank; its answer is dropped with the gateway's connection.
    let cuts = 0;
    const confirmed = (b) => {
      const yes = b.method === 'tools/call' && b.params?.inputResponses !== undefined;
      if (yes) cuts++;
      return yes;
    };
    const proxy = await startTap(bank.url, { cut: confirmed });
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: [httpServer('bank', proxy.url, { timeout_ms: 20000 })] }, { label: 'mcpgw-bank-cut' });
    const call = (name, args, extra = {}) => srpc(gw.url, 'tools/call', { name, arguments: args, ...extra }, { caps: { elicitation: {} } });
    const balance = async (accountId) => (await call('bank:get_account_balance', { accountId })).message.result.structuredContent.balance;
    const args = { fromAccountId: 'acc_savings_001', toAccountId: 'acc_credit_001', amount: 250 };
    assert.equal(await balance('acc_savings_001'), 15020.5);

    const asked = (await call('bank:transfer_money', args)).message.result;
    assert.equal(asked.resultType, 'input_required', JSON.stringify(asked));
    const done = await call('bank:transfer_money', args, { inputResponses: { confirm: { action: 'accept', content: { confirm: true } } }, requestState: asked.requestState });
    const result = done.message.result;
    assert.equal(cuts, 1, 'the confirmed transfer reached the bank more than once');
    assert.equal(await balance('acc_savings_001'), 14770.5);
    assert.equal(await balance('acc_credit_001'), -182.1);
    assert.equal(result.isError, true, JSON.stringify(done.message));
    assert.match(textOf(result), /^mcpgw: upstream 'bank' failed: .+; the request may have been carried out there and was not sent again$/);
    await gw.proc.stop();
    await bank.proc.stop();
  }),
);
