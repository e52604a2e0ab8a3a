// Welcome tools (seed 001; CONTRACT "Welcome tool"), strategy `first`: three
// upstreams, two with welcome tools (gamma flags two), the first flagged tool
// in config order visible in the client's mode is called once per new
// session and its text is appended to the initialize result's
// `instructions`, after the configured ones, separated by a blank line.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOLBOX, connectHttp, pollUntil, requireBinaries, startGateway, textOf, withDiagnostics } from './harness.mjs';

const CONFIGURED = 'Configured instructions.';
let gw;
let observer; // one long-lived session (mode all) that reads the counters

const toolbox = (name, args = [], extra = {}) => ({ name, transport: 'stdio', command: TOOLBOX, args: ['--name', name, ...args], ...extra });

before(async () => {
  requireBinaries();
  gw = await startGateway({
    instructions: CONFIGURED,
    welcome: { strategy: 'first' },
    modes: {
      nobeta: { description: 'beta\'s welcome tool hidden', exclude_tools: ['beta:hello_beta'] },
      nowelcome: { description: 'every welcome tool hidden', exclude_tools: ['beta:hello_beta', 'gamma:hello_*'] },
    },
    servers: [
      toolbox('alpha'),
      toolbox('beta', ['--welcome-tool', 'hello_beta']),
      toolbox('gamma', ['--welcome-tool', 'hello_gamma', '--welcome-tool', 'hello_gamma2']),
    ],
  });
  observer = await connectHttp(gw.url);
});

const calls = async (server) => Number(textOf(await observer.callTool(`${server}:welcome_calls`)));
const counts = async () => ({ beta: await calls('beta'), gamma: await calls('gamma') });

test(
  'mode all: beta:hello_beta (first flagged in config order) — instructions = configured + blank line + its text',
  withDiagnostics(async () => {
    const before = await counts();
    const c = await connectHttp(gw.url);
    assert.equal(c.initResult.instructions, `${CONFIGURED}\n\nwelcome from beta`);
    assert.deepEqual(await counts(), { beta: before.beta + 1, gamma: before.gamma });
    await c.close();
  }),
);

test(
  'one welcome call per session: later requests of the session call it no more; each new session calls it once',
  withDiagnostics(async () => {
    const start = await calls('beta');
    const c = await connectHttp(gw.url);
    assert.equal(await calls('beta'), start + 1);
    await c.listAllTools();
    await c.callTool('alpha:echo', { text: 'x' });
    await c.result('ping');
    assert.equal(await calls('beta'), start + 1);
    const d = await connectHttp(gw.url);
    const e = await connectHttp(gw.url);
    assert.equal(d.initResult.instructions, `${CONFIGURED}\n\nwelcome from beta`);
    assert.equal(e.initResult.instructions, `${CONFIGURED}\n\nwelcome from beta`);
    assert.equal(await calls('beta'), start + 3);
    await Promise.all([c.close(), d.close(), e.close()]);
  }),
);

test(
  'mode nobeta (beta\'s welcome tool hidden): gamma:hello_gamma is selected',
  withDiagnostics(async () => {
    const before = await counts();
    const c = await connectHttp(`${gw.url}/nobeta`);
    assert.equal(c.initResult.instructions, `${CONFIGURED}\n\nwelcome from gamma`);
    assert.deepEqual(await counts(), { beta: before.beta, gamma: before.gamma + 1 });
    await c.close();
  }),
);

test(
  'mode nowelcome (every welcome tool hidden): no welcome call, only the configured instructions',
  withDiagnostics(async () => {
    const before = await counts();
    const c = await connectHttp(`${gw.url}/nowelcome`);
    assert.equal(c.initResult.instructions, CONFIGURED);
    await c.listAllTools();
    assert.deepEqual(await counts(), before);
    await c.close();
  }),
);

test(
  'the welcome tool stays listed (with _meta.welcomeTool) and callable',
  withDiagnostics(async () => {
    const { tools } = await observer.listAllTools();
    const hello = tools.find((t) => t.name === 'beta:hello_beta');
    assert.ok(hello, tools.map((t) => t.name).join(', '));
    assert.equal(hello._meta?.welcomeTool, true);
    assert.equal(tools.find((t) => t.name === 'gamma:hello_gamma2')?._meta?.welcomeTool, true, 'the ignored second flag is still passed through');
    const before = await calls('beta');
    const r = await observer.callTool('beta:hello_beta');
    assert.deepEqual(r, { content: [{ type: 'text', text: 'welcome from beta' }] });
    assert.equal(await calls('beta'), before + 1);
  }),
);

test(
  'a second welcome flag on one server (gamma:hello_gamma2) is reported as a warning',
  withDiagnostics(async () => {
    const line = await pollUntil(
      () => gw.proc.stderrText.split('\n').find((l) => /warn/i.test(l) && l.includes('hello_gamma2')),
      { timeoutMs: 5000, what: 'a warning naming hello_gamma2' },
    );
    assert.ok(line.includes('gamma'), line);
  }),
);
