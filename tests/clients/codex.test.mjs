// Codex CLI (npm @openai/codex, pinned; its prebuilt linux-x64 binary comes
// inside the registry package @openai/codex@<version>-linux-x64) against the
// real mcpgw, its model replaced by the scripted stand-in of the Responses
// API through a model_providers entry with a loopback base_url. The tests
// read what the model would see: the gateway's instructions (with the
// welcome text) as the description of Codex's namespace mcp__gw, and the
// function_call_output of seed 003's locked-account transfer, a 3-hop chain,
// typed (outputSchema, open and closed) tools that chain and a tool that
// asks the user.
//
// Two CLI runs: over Streamable HTTP (every case in one conversation), and
// over `mcpgw --stdio` launched by Codex from another working directory,
// with a config whose upstream commands are relative to the config file.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  BANK,
  MCPGW,
  TOOLBOX,
  readJsonLines,
  requireBinaries,
  startGateway,
  tempDir,
  withDiagnostics,
  writeConfig,
} from '../integration/harness.mjs';
import { startModelStandin } from './model-standin.mjs';
import {
  CASES,
  CODEX_BIN,
  HANDOFF,
  INSTRUCTIONS,
  LOCKED,
  WELCOME_START,
  codexNamespace,
  codexScript,
  codexToolResults,
  describeRun,
  elicitationAnswers,
  gatewayConfig,
  requireClients,
  runCodex,
  toml,
} from './agents.mjs';

const PROMPT = 'Please move 50 USD from my checking account to my savings account.';
/** Codex's name for a gateway tool inside its namespace mcp__gw: ":" becomes "_". */
const codexName = (tool) => tool.replace(':', '_');

async function session(cases, mcpToml, { cwd } = {}) {
  const model = await startModelStandin(codexScript(cases.map(([, c]) => ({ name: codexName(c.tool), input: c.input }))));
  try {
    const run = await runCodex({ modelUrl: model.url, mcpToml, prompt: PROMPT, cwd });
    const results = codexToolResults(model.requests);
    const byCase = Object.fromEntries(cases.map(([key, c]) => [key, results.find((r) => r.name === codexName(c.tool))]));
    return { run, requests: model.requests, byCase, namespace: codexNamespace(model.requests) };
  } finally {
    await model.close();
  }
}

function assertRanToTheEnd(s) {
  assert.equal(s.run.code, 0, describeRun(s.run));
  const events = s.run.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const last = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').at(-1);
  assert.equal(last?.item.text, 'Done.', `the scripted conversation did not reach its end:\n${describeRun(s.run)}`);
}

function seen(s, key) {
  const r = s.byCase[key];
  assert.ok(r, `no function_call_output for ${key}; calls: ${JSON.stringify(codexToolResults(s.requests).map((x) => x.name))}\n${describeRun(s.run)}`);
  assert.equal(typeof r.text, 'string');
  return r;
}

function assertWelcome(t, s) {
  assert.ok(s.namespace, `no namespace mcp__gw among the tools of the first request:\n${describeRun(s.run)}`);
  t.diagnostic(`namespace description: ${s.namespace.description}`);
  assert.ok(s.namespace.description.includes(INSTRUCTIONS), s.namespace.description);
  assert.ok(s.namespace.description.includes(WELCOME_START), s.namespace.description);
  assert.ok(s.namespace.description.includes('Primary Checking (acc_checking_001): 2543.17 USD [locked'), s.namespace.description);
  // ":" names mapped to "_" inside the namespace.
  assert.ok(s.namespace.tools.some((x) => x.name === 'bank_prepare_money_transfer'), JSON.stringify(s.namespace.tools.map((x) => x.name)));
}

function assertSeed003(t, s) {
  const r = seen(s, 'seed003');
  t.diagnostic(`model sees: ${r.text}`);
  assert.ok(r.text.includes(LOCKED), `the locked-account message does not reach the model: ${r.text}`);
  assert.match(r.text, HANDOFF, `the handoff ticket does not reach the model: ${r.text}`);
}

function assertThreeHops(t, s) {
  const r = seen(s, 'threeHops');
  t.diagnostic(`model sees: ${r.text}`);
  for (const hop of ['cart checked', 'card charged', 'parcel booked']) assert.ok(r.text.includes(hop), `hop "${hop}" missing: ${r.text}`);
}

describe('Codex over Streamable HTTP', () => {
  let s;
  let tapLog;
  before(async () => {
    requireBinaries();
    requireClients(CODEX_BIN);
    tapLog = path.join(tempDir(), 'bank-stdin.jsonl');
    const gw = await startGateway(gatewayConfig({ bankCommand: BANK, toolboxCommand: TOOLBOX, tapLog }));
    s = await session(Object.entries(CASES), `url = ${toml(gw.url)}`);
  });

  test('the conversation runs to its end (five MCP calls, a final answer)', withDiagnostics(() => assertRanToTheEnd(s)));

  test('the welcome text is the description of the namespace mcp__gw', withDiagnostics((t) => assertWelcome(t, s)));

  test('seed 003: the model sees the locked-account message AND the handoff ticket', withDiagnostics((t) => assertSeed003(t, s)));

  test('a 3-hop chain: the model sees every hop', withDiagnostics((t) => assertThreeHops(t, s)));

  test(
    'a typed tool (open outputSchema) that chains: the model sees the order, the payment and the receipt',
    withDiagnostics((t) => {
      const r = seen(s, 'typed');
      t.diagnostic(`model sees: ${r.text}`);
      // Something of every hop: the order (its cart), the payment (its status), the receipt.
      for (const bit of ['cart-42', 'captured', 'RCPT-7']) assert.ok(r.text.includes(bit), `${bit} missing: ${r.text}`);
    }),
  );

  test(
    'a typed tool (closed outputSchema) that chains: the model sees every hop',
    withDiagnostics((t) => {
      const r = seen(s, 'typedClosed');
      // The listed outputSchema declares mcpgw/hops, so the closed schema
      // admits the later hops' text, which Codex shows the model.
      t.diagnostic(`model sees: ${r.text}`);
      const shown = JSON.parse(r.text.slice(r.text.indexOf('{')));
      assert.equal(shown.orderId, 'ORD-7');
      assert.deepEqual(shown['mcpgw/hops'].map((h) => h.tool), ['shop:checkout_strict', 'shop:charge_payment', 'shop:issue_receipt']);
      for (const bit of ['cart-42', 'captured', 'RCPT-7']) assert.ok(r.text.includes(bit), `${bit} missing: ${r.text}`);
    }),
  );

  test(
    'a tool that asks the user: codex exec answers the elicitation with decline, and the model sees the refusal',
    withDiagnostics((t) => {
      const r = seen(s, 'asksUser');
      const answers = elicitationAnswers(readJsonLines(tapLog));
      t.diagnostic(`elicitation answered: ${JSON.stringify(answers)}; model sees: ${r.text}`);
      assert.deepEqual(answers, [{ action: 'decline' }]);
      assert.match(r.text, /Not transferred: you did not confirm the transfer of 10\.00 USD/);
    }),
  );
});

describe('Codex launching mcpgw --stdio from another directory', () => {
  let s;
  before(async () => {
    requireBinaries();
    requireClients(CODEX_BIN);
    // Upstream commands relative to the config file's directory; Codex runs
    // (and launches mcpgw) elsewhere, at another depth.
    const confDir = tempDir('mcpgw-codex-conf-');
    const configPath = writeConfig(confDir, {
      instructions: INSTRUCTIONS,
      servers: [
        { name: 'bank', transport: 'stdio', command: path.relative(confDir, BANK) },
        { name: 'toolbox', transport: 'stdio', command: path.relative(confDir, TOOLBOX), args: ['--chain-tool', 'chain'] },
      ],
    });
    const cwd = path.join(tempDir('mcpgw-codex-elsewhere-'), 'a', 'b', 'c');
    mkdirSync(cwd, { recursive: true });
    const mcpToml = [
      `command = ${toml(MCPGW)}`,
      `args = [${['--config', configPath, '--stdio', '--log-level', 'debug'].map(toml).join(', ')}]`,
      `cwd = ${toml(cwd)}`,
    ].join('\n');
    s = await session([['seed003', CASES.seed003], ['threeHops', CASES.threeHops]], mcpToml, { cwd });
  });

  test('the conversation runs to its end', withDiagnostics(() => assertRanToTheEnd(s)));

  test('the welcome text is the description of the namespace mcp__gw', withDiagnostics((t) => assertWelcome(t, s)));

  test('seed 003: the locked-account message AND the handoff ticket', withDiagnostics((t) => assertSeed003(t, s)));

  test('a 3-hop chain: every hop', withDiagnostics((t) => assertThreeHops(t, s)));
});
