// Welcome tools that fail: a welcome tool slower than welcome.timeout_ms or
// answering isError gives no welcome text and a logged warning, and the
// session starts normally; a welcome.tool that names no tool of the catalog
// is a configuration error (exit 2; `check` exits 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MCPGW, Proc, TOOLBOX, connectHttp, pollUntil, requireBinaries, startGateway, tempDir, textOf, withDiagnostics, writeConfig } from './harness.mjs';

const toolbox = (name, args = [], extra = {}) => ({ name, transport: 'stdio', command: TOOLBOX, args: ['--name', name, ...args], ...extra });

function warningAbout(proc, re) {
  return pollUntil(() => proc.stderrText.split('\n').find((l) => /warn/i.test(l) && re.test(l)), {
    timeoutMs: 5000,
    what: `a warning matching ${re}`,
  });
}

test(
  'a welcome tool sleeping past welcome.timeout_ms: initialize still answers, without welcome text; a warning is logged',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({
      instructions: 'Configured.',
      welcome: { strategy: 'first', timeout_ms: 300 },
      servers: [toolbox('alpha'), toolbox('slow', ['--welcome-tool', 'hello_slow', '--welcome-sleep-ms', '8000'])],
    });
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, 'Configured.');
    // The session started because welcome.timeout_ms ended the wait (the
    // tool sleeps 8000 ms), not because the tool finished.
    const warning = await warningAbout(gw.proc, /welcome|hello_slow/i);
    assert.match(warning, /hello_slow failed, starting without it: .*tim(ed|e) ?out/i);
    // The session works normally.
    assert.equal(textOf(await c.callTool('alpha:echo', { text: 'after a slow welcome' })), 'after a slow welcome');
    const { tools } = await c.listAllTools();
    assert.ok(tools.some((t) => t.name === 'slow:hello_slow'), 'the welcome tool stays listed');
    assert.equal(Number(textOf(await c.callTool('slow:welcome_calls'))), 1, 'the welcome tool was called once');
    await c.close();
    // The slow tool's thread still sleeps upstream; don't wait for it.
    await gw.proc.stop({ signal: 'SIGKILL' });
  }),
);

test(
  'a welcome tool answering isError: no welcome text, a warning, the session starts',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({
      instructions: 'Configured.',
      welcome: { strategy: 'tool', tool: 'alpha:fail', arguments: { message: 'the welcome failed' } },
      servers: [toolbox('alpha')],
    });
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, 'Configured.');
    await warningAbout(gw.proc, /welcome|alpha:fail/i);
    assert.deepEqual(await c.result('ping'), {});
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'welcome.tool naming a tool that does not exist: mcpgw exits 2 naming it; check exits 1',
  withDiagnostics(async () => {
    requireBinaries();
    const config = {
      listen: { host: '127.0.0.1', port: 0 },
      welcome: { strategy: 'tool', tool: 'alpha:no_such_welcome' },
      servers: [toolbox('alpha')],
    };
    const file = writeConfig(tempDir(), config);
    const proc = new Proc('mcpgw-bad-welcome', MCPGW, ['--config', file]);
    const exit = await proc.waitExit(20000);
    assert.equal(exit.code, 2, proc.diagnostics());
    assert.ok(proc.stderrText.includes('alpha:no_such_welcome'), `the message does not name the tool:\n${proc.stderrText}`);
    // It serves while upstreams connect; the tool is missing once alpha has listed its tools.
    assert.match(proc.stderrText, /start-up: every upstream tried once \(1 of 1 connected\)/);

    const check = new Proc('mcpgw-check-bad-welcome', MCPGW, ['check', '--config', file]);
    const cexit = await check.waitExit(20000);
    assert.equal(cexit.code, 1, check.diagnostics());
    assert.ok(`${check.stdoutText}\n${check.stderrText}`.includes('alpha:no_such_welcome'), check.diagnostics());
  }),
);
