// Claude Code (npm @anthropic-ai/claude-code, pinned) against the real mcpgw,
// its model replaced by the scripted stand-in (ANTHROPIC_BASE_URL on
// loopback), so the tests read what the model would see of the gateway:
// the welcome text in the system prompt, and the tool results of seed 003's
// locked-account transfer, a 3-hop chain, typed (outputSchema, open and
// closed) tools that chain and a tool that asks the user (elicitation).
//
// Two CLI runs: over Streamable HTTP (every case in one conversation), and
// over `mcpgw --stdio` launched by Claude Code from another working
// directory, with a config whose upstream commands are relative to the
// config file.
//
// Claude Code defers MCP tools behind its ToolSearch tool: the script loads
// them with ToolSearch "select:..." first, then calls them one per turn.
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
  CLAUDE_BIN,
  HANDOFF,
  INSTRUCTIONS,
  LOCKED,
  WELCOME_START,
  claudeScript,
  claudeSystemText,
  claudeToolResults,
  describeRun,
  elicitationAnswers,
  gatewayConfig,
  requireClients,
  runClaudeCode,
} from './agents.mjs';

const PROMPT = 'Please move 50 USD from my checking account to my savings account.';
/** Claude Code's name for a gateway tool of server `gw`: mcp__gw__<name with ":" as "_">. */
const claudeName = (tool) => `mcp__gw__${tool.replace(':', '_')}`;
const callOf = (c) => ({ name: claudeName(c.tool), input: c.input });

/** One run: its stand-in (requests), the CLI's exit, and the model's view of each call by case. */
async function session(cases, mcpServer, { cwd } = {}) {
  const model = await startModelStandin(claudeScript(cases.map(([, c]) => callOf(c))));
  try {
    const run = await runClaudeCode({ modelUrl: model.url, mcpServer, prompt: PROMPT, cwd });
    const results = claudeToolResults(model.requests).filter((r) => r.name !== 'ToolSearch');
    const byCase = Object.fromEntries(cases.map(([key, c]) => [key, results.find((r) => r.name === claudeName(c.tool))]));
    return { run, requests: model.requests, byCase, system: claudeSystemText(model.requests) };
  } finally {
    await model.close();
  }
}

function assertRanToTheEnd(s) {
  assert.equal(s.run.code, 0, describeRun(s.run));
  const out = JSON.parse(s.run.stdout);
  assert.equal(out.result, 'Done.', `the scripted conversation did not reach its end: ${s.run.stdout.slice(0, 2000)}`);
}

/** The model's view of one case's call, with the case named when it is missing. */
function seen(s, key) {
  const r = s.byCase[key];
  assert.ok(r, `no tool result for ${key} in the model's requests; calls: ${JSON.stringify(claudeToolResults(s.requests).map((x) => x.name))}\n${describeRun(s.run)}`);
  assert.equal(typeof r.text, 'string', `${key}: no tool_result for the call ${JSON.stringify(r)}`);
  return r;
}

function assertWelcome(t, s) {
  const i = s.system.indexOf('# MCP Server Instructions');
  assert.ok(i >= 0, 'no "MCP Server Instructions" section in the system prompt');
  const section = s.system.slice(i);
  t.diagnostic(`system prompt: ${section.slice(0, 700)}`);
  assert.match(section, /\n## gw\n/);
  assert.ok(section.includes(INSTRUCTIONS), 'the configured instructions are not in the system prompt');
  assert.ok(section.includes(WELCOME_START), 'the welcome tool\'s text is not in the system prompt');
  assert.ok(section.includes('Primary Checking (acc_checking_001): 2543.17 USD [locked'), section.slice(0, 1500));
}

function assertSeed003(t, s) {
  const r = seen(s, 'seed003');
  t.diagnostic(`model sees: ${r.text}`);
  assert.equal(r.isError, false, r.text);
  assert.ok(r.text.includes(LOCKED), `the locked-account message does not reach the model: ${r.text}`);
  assert.match(r.text, HANDOFF, `the handoff ticket does not reach the model: ${r.text}`);
}

function assertThreeHops(t, s) {
  const r = seen(s, 'threeHops');
  t.diagnostic(`model sees: ${r.text}`);
  assert.equal(r.isError, false, r.text);
  for (const hop of ['cart checked', 'card charged', 'parcel booked']) assert.ok(r.text.includes(hop), `hop "${hop}" missing: ${r.text}`);
}

describe('Claude Code over Streamable HTTP', () => {
  let s;
  let tapLog;
  before(async () => {
    requireBinaries();
    requireClients(CLAUDE_BIN);
    tapLog = path.join(tempDir(), 'bank-stdin.jsonl');
    const gw = await startGateway(gatewayConfig({ bankCommand: BANK, toolboxCommand: TOOLBOX, tapLog }));
    s = await session(Object.entries(CASES), { type: 'http', url: gw.url });
  });

  test('the conversation runs to its end (ToolSearch, five MCP calls, a final answer)', withDiagnostics(() => assertRanToTheEnd(s)));

  test('the welcome text is in the system prompt under "MCP Server Instructions"', withDiagnostics((t) => assertWelcome(t, s)));

  test('seed 003: the model sees the locked-account message AND the handoff ticket', withDiagnostics((t) => assertSeed003(t, s)));

  test('a 3-hop chain: the model sees every hop', withDiagnostics((t) => assertThreeHops(t, s)));

  test(
    'a typed tool (open outputSchema) that chains: no schema error, the model sees the order, the payment and the receipt',
    withDiagnostics((t) => {
      const r = seen(s, 'typed');
      t.diagnostic(`model sees: ${r.text}`);
      assert.doesNotMatch(r.text, /does not match the tool's output schema/);
      assert.equal(r.isError, false, r.text);
      // Something of every hop: the order (its cart), the payment (its status), the receipt.
      for (const bit of ['cart-42', 'captured', 'RCPT-7']) assert.ok(r.text.includes(bit), `${bit} missing: ${r.text}`);
    }),
  );

  test(
    'a typed tool (closed outputSchema) that chains: no schema error, the model sees every hop',
    withDiagnostics((t) => {
      const r = seen(s, 'typedClosed');
      // The listed outputSchema declares mcpgw/hops, so the closed schema
      // admits the later hops' text, which Claude Code shows the model.
      t.diagnostic(`model sees: ${r.text}`);
      assert.doesNotMatch(r.text, /does not match the tool's output schema/);
      assert.equal(r.isError, false, r.text);
      const shown = JSON.parse(r.text);
      assert.equal(shown.orderId, 'ORD-7');
      assert.deepEqual(shown['mcpgw/hops'].map((h) => h.tool), ['shop:checkout_strict', 'shop:charge_payment', 'shop:issue_receipt']);
      for (const bit of ['cart-42', 'captured', 'RCPT-7']) assert.ok(r.text.includes(bit), `${bit} missing: ${r.text}`);
    }),
  );

  test(
    'a tool that asks the user: claude -p answers the elicitation with cancel, and the model sees the refusal',
    withDiagnostics((t) => {
      const r = seen(s, 'asksUser');
      const answers = elicitationAnswers(readJsonLines(tapLog));
      t.diagnostic(`elicitation answered: ${JSON.stringify(answers)}; model sees: ${r.text}`);
      // The gateway forwarded the bank's elicitation/create to Claude Code
      // (it declares the capability), which, with nobody to ask in -p mode,
      // answered at once.
      assert.deepEqual(answers, [{ action: 'cancel' }]);
      assert.equal(r.isError, true);
      assert.match(r.text, /^Not transferred: you did not confirm the transfer of 10\.00 USD/);
    }),
  );
});

describe('Claude Code launching mcpgw --stdio from another directory', () => {
  let s;
  before(async () => {
    requireBinaries();
    requireClients(CLAUDE_BIN);
    // The config's upstream commands are relative to the config file's
    // directory; Claude Code runs (and launches mcpgw) somewhere else, at
    // another depth, where the same relative paths lead nowhere.
    const confDir = tempDir('mcpgw-claude-conf-');
    const config = {
      instructions: INSTRUCTIONS,
      servers: [
        { name: 'bank', transport: 'stdio', command: path.relative(confDir, BANK) },
        { name: 'toolbox', transport: 'stdio', command: path.relative(confDir, TOOLBOX), args: ['--chain-tool', 'chain'] },
      ],
    };
    const configPath = writeConfig(confDir, config);
    const cwd = path.join(tempDir('mcpgw-claude-elsewhere-'), 'a', 'b', 'c');
    mkdirSync(cwd, { recursive: true });
    const cases = [['seed003', CASES.seed003], ['threeHops', CASES.threeHops]];
    s = await session(cases, { type: 'stdio', command: MCPGW, args: ['--config', configPath, '--stdio', '--log-level', 'debug'] }, { cwd });
  });

  test('the conversation runs to its end', withDiagnostics(() => assertRanToTheEnd(s)));

  test('the welcome text is in the system prompt', withDiagnostics((t) => assertWelcome(t, s)));

  test('seed 003: the locked-account message AND the handoff ticket', withDiagnostics((t) => assertSeed003(t, s)));

  test('a 3-hop chain: every hop', withDiagnostics((t) => assertThreeHops(t, s)));
});
