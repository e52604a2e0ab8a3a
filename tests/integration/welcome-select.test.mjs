// Welcome selection strategies other than `first`: priority (highest
// servers[].welcome_priority, ties by config order), tool (welcome.tool
// names an exposed tool, flagged or not, called with welcome.arguments) and
// none; and `mcpgw check` showing the selection per mode and why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MCPGW, Proc, TOOLBOX, connectHttp, requireBinaries, startGateway, tempDir, textOf, withDiagnostics, writeConfig } from './harness.mjs';

const toolbox = (name, args = [], extra = {}) => ({ name, transport: 'stdio', command: TOOLBOX, args: ['--name', name, ...args], ...extra });

/** alpha: no welcome tool; beta: one; gamma: two (the second ignored). */
function servers({ beta = 0, gamma = 0 } = {}) {
  return [
    toolbox('alpha'),
    toolbox('beta', ['--welcome-tool', 'hello_beta'], { welcome_priority: beta }),
    toolbox('gamma', ['--welcome-tool', 'hello_gamma', '--welcome-tool', 'hello_gamma2'], { welcome_priority: gamma }),
  ];
}

async function callsOf(c, server) {
  return Number(textOf(await c.callTool(`${server}:welcome_calls`)));
}

test(
  'priority: the highest welcome_priority wins (gamma 5 over beta 1), whatever the config order',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ welcome: { strategy: 'priority' }, servers: servers({ beta: 1, gamma: 5 }) });
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, 'welcome from gamma');
    assert.equal(await callsOf(c, 'gamma'), 1);
    assert.equal(await callsOf(c, 'beta'), 0);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'priority: a tie goes to the first in config order; a negative priority loses to the default 0',
  withDiagnostics(async () => {
    requireBinaries();
    const tie = await startGateway({ welcome: { strategy: 'priority' }, servers: servers({ beta: 3, gamma: 3 }) });
    const c = await connectHttp(tie.url);
    assert.equal(c.initResult.instructions, 'welcome from beta');
    await c.close();
    await tie.proc.stop();

    const neg = await startGateway({ welcome: { strategy: 'priority' }, servers: servers({ beta: -1, gamma: 0 }) });
    const d = await connectHttp(neg.url);
    assert.equal(d.initResult.instructions, 'welcome from gamma');
    await d.close();
    await neg.proc.stop();
  }),
);

test(
  'tool: welcome.tool names any exposed tool (alpha:echo, not flagged) and welcome.arguments are its arguments; a mode hiding it gets none',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({
      instructions: 'Use the tools wisely.',
      welcome: { strategy: 'tool', tool: 'alpha:echo', arguments: { text: 'hello from alpha:echo' } },
      modes: { noecho: { description: 'no alpha:echo', exclude_tools: ['alpha:echo'] } },
      servers: servers({ beta: 9, gamma: 9 }),
    });
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, 'Use the tools wisely.\n\nhello from alpha:echo');
    assert.equal(await callsOf(c, 'beta'), 0, 'a flagged tool was called although welcome.tool names another');
    assert.equal(await callsOf(c, 'gamma'), 0);
    const h = await connectHttp(`${gw.url}/noecho`);
    assert.equal(h.initResult.instructions, 'Use the tools wisely.');
    await Promise.all([c.close(), h.close()]);
    await gw.proc.stop();
  }),
);

test(
  'tool: welcome.tool may name a flagged tool that is not its server\'s first (gamma:hello_gamma2)',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ welcome: { strategy: 'tool', tool: 'gamma:hello_gamma2' }, servers: servers() });
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, 'welcome from gamma');
    assert.equal(await callsOf(c, 'gamma'), 1);
    assert.equal(await callsOf(c, 'beta'), 0);
    await c.close();
    await gw.proc.stop();
  }),
);

test(
  'none: no welcome call, no welcome text',
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ welcome: { strategy: 'none' }, servers: servers({ beta: 1, gamma: 5 }) });
    const c = await connectHttp(gw.url);
    assert.ok(!c.initResult.instructions, `instructions: ${JSON.stringify(c.initResult.instructions)}`);
    assert.equal(await callsOf(c, 'beta'), 0);
    assert.equal(await callsOf(c, 'gamma'), 0);
    await c.close();
    await gw.proc.stop();
  }),
);

async function runCheck(config, extra = []) {
  requireBinaries();
  const file = writeConfig(tempDir(), config);
  const proc = new Proc('mcpgw-check', MCPGW, ['check', '--config', file, ...extra]);
  const exit = await proc.waitExit(20000);
  return { exit, stdout: proc.stdoutText, stderr: proc.stderrText };
}

const CHECK_CONFIG = {
  welcome: { strategy: 'priority' },
  modes: {
    nogamma: { description: 'gamma hidden', exclude_tools: ['gamma:*'] },
    nowelcome: { description: 'no welcome tool', exclude_tools: ['beta:hello_beta', 'gamma:hello_*'] },
  },
  servers: servers({ beta: 1, gamma: 5 }),
};

test(
  'check --json: welcome: [{mode, tool, reason}] per mode, and the second flag as a warning',
  withDiagnostics(async () => {
    const { exit, stdout, stderr } = await runCheck(CHECK_CONFIG, ['--json']);
    assert.equal(exit.code, 0, `${stdout}\n${stderr}`);
    const doc = JSON.parse(stdout);
    assert.ok(Array.isArray(doc.welcome), `no welcome array: ${stdout}`);
    const byMode = Object.fromEntries(doc.welcome.map((w) => [w.mode, w]));
    assert.deepEqual(Object.keys(byMode).sort(), ['all', 'nogamma', 'nowelcome'], JSON.stringify(doc.welcome));
    assert.equal(byMode.all.tool, 'gamma:hello_gamma');
    assert.equal(byMode.nogamma.tool, 'beta:hello_beta');
    assert.ok(!byMode.nowelcome.tool, JSON.stringify(byMode.nowelcome));
    for (const w of doc.welcome) assert.ok(typeof w.reason === 'string' && w.reason.length > 0, `no reason: ${JSON.stringify(w)}`);
    assert.match(byMode.all.reason, /priority/i, byMode.all.reason);
    assert.ok(
      doc.warnings.some((w) => w.includes('hello_gamma2')),
      `no warning about gamma's second welcome flag: ${JSON.stringify(doc.warnings)}`,
    );
    // The welcome tools themselves are not called by check.
  }),
);

test(
  'check (text): the selected welcome tool of each mode is printed',
  withDiagnostics(async () => {
    const { exit, stdout, stderr } = await runCheck(CHECK_CONFIG);
    assert.equal(exit.code, 0, `${stdout}\n${stderr}`);
    const lines = stdout.split('\n');
    // Lines about the welcome selection (not catalog rows that merely list mode nowelcome or the welcome_calls tool).
    const welcomeLines = lines.filter((l) => /welcome/i.test(l.replace(/nowelcome|welcome_calls/g, '')));
    const forMode = (m) => welcomeLines.find((l) => new RegExp(`\\b${m}\\b`).test(l));
    assert.ok(forMode('all')?.includes('gamma:hello_gamma'), `mode all:\n${stdout}`);
    assert.ok(forMode('nogamma')?.includes('beta:hello_beta'), `mode nogamma:\n${stdout}`);
    assert.ok(forMode('nowelcome'), `mode nowelcome:\n${stdout}`);
    assert.ok(!/hello_(beta|gamma)\b/.test(forMode('nowelcome')), forMode('nowelcome'));
    assert.ok(stdout.includes('hello_gamma2') || stderr.includes('hello_gamma2'), `the second flag is not reported:\n${stdout}\n${stderr}`);
  }),
);
