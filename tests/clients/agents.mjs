// Real agent CLIs (Claude Code and Codex, pinned in package.json) driven
// against the real gateway, their model replaced by the scripted stand-in of
// model-standin.mjs, so that every request a CLI sends to "the model" can be
// read: what the model would see of mcpgw (system prompt, tool list, tool
// results).
//
// Offline: the CLIs get a minimal environment (no variable of the outer
// session leaks in), HOME / CLAUDE_CONFIG_DIR / CODEX_HOME in a fresh temp
// dir, telemetry, auto-update, error reporting and Codex's plugin sync off;
// the only sockets they open are to the stand-in and the gateway on
// loopback (checked with strace when these tests were written).
//
// Every run is bounded (timeoutMs) and reaped: each CLI runs in its own
// process group, which is killed when the CLI exits or its time is up, so
// that a `mcpgw --stdio` it launched never outlives the test.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after } from 'node:test';
import { REPO, tempDir } from '../integration/harness.mjs';

export const CLAUDE_BIN = path.join(REPO, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
export const CODEX_BIN = path.join(
  REPO,
  'node_modules',
  '@openai',
  'codex-linux-x64',
  'vendor',
  'x86_64-unknown-linux-musl',
  'bin',
  'codex',
);
export const SHOP = path.join(REPO, 'tests', 'clients', 'shop-server.mjs');
export const TAP = path.join(REPO, 'tests', 'interop', 'stdio-tap.mjs');

const RUN_MS = Number(process.env.MCPGW_CLIENT_RUN_MS || 120000);

/** Fails (never skips) when a CLI is not installed. */
export function requireClients(...bins) {
  const missing = bins.filter((b) => !existsSync(b));
  if (missing.length) throw new Error(`missing agent CLIs: ${missing.join(', ')} (run scripts/setup: npm ci installs them from package-lock.json)`);
}

// ---------------------------------------------------------------------------
// running a CLI

const running = new Set();
after(() => {
  for (const pgid of running) killGroup(pgid, 'SIGKILL');
});

function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* the group is gone */
  }
}

/**
 * Runs `command args` in its own process group with exactly `env`; resolves
 * with {code, signal, stdout, stderr, timedOut, ms} once it exited (killed,
 * with its whole group, after timeoutMs). Whatever it started is killed too.
 */
export function runCli(command, args, { env, cwd, timeoutMs = RUN_MS } = {}) {
  const started = Date.now();
  const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    if (stdout.length < 4 << 20) stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c) => {
    if (stderr.length < 1 << 20) stderr += c;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, 'SIGKILL');
  }, timeoutMs);
  return new Promise((resolve) => {
    const finish = async (code, signal, error) => {
      clearTimeout(timer);
      // Anything the CLI left behind in its group (an MCP server it
      // launched): asked to stop (mcpgw then stops its own upstreams), killed
      // if still there after a deadline.
      await stopGroup(child.pid);
      running.delete(child.pid);
      resolve({ code, signal, error, stdout, stderr, timedOut, ms: Date.now() - started });
    };
    child.on('error', (err) => finish(null, null, err));
    // 'close': the process exited and its output pipes are drained.
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** Whether any process of group `pgid` is left (a zombie counts until reaped). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the group, then SIGKILL if any member is left after `graceMs` (polled). */
async function stopGroup(pgid, graceMs = 5000) {
  if (!groupAlive(pgid)) return;
  killGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  killGroup(pgid, 'SIGKILL');
}

/** A one-line account of a run for assertion messages. */
export function describeRun(run) {
  return `exit ${run.code} signal ${run.signal}${run.timedOut ? ' (timed out)' : ''} after ${run.ms} ms${run.error ? ` error ${run.error}` : ''}\n--- stdout ---\n${run.stdout.slice(-4000)}\n--- stderr ---\n${run.stderr.slice(-4000)}`;
}

function baseEnv(home) {
  return { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', TMPDIR: home, NO_COLOR: '1', TERM: 'dumb' };
}

// ---------------------------------------------------------------------------
// Claude Code

/**
 * `claude -p PROMPT` with one MCP server `gw` (`mcpServer` as in .mcp.json:
 * {type: 'http', url} or {type: 'stdio', command, args}) and the model at
 * `modelUrl`. Runs in `cwd` (default: a fresh temp dir).
 */
export function runClaudeCode({ modelUrl, mcpServer, prompt, cwd, timeoutMs }) {
  const home = tempDir('mcpgw-claude-home-');
  const env = {
    ...baseEnv(home),
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_API_KEY: 'sk-ant-standin',
    ANTHROPIC_BASE_URL: modelUrl,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
  };
  const args = [
    '-p',
    prompt,
    '--output-format',
    'json',
    '--strict-mcp-config',
    '--mcp-config',
    JSON.stringify({ mcpServers: { gw: mcpServer } }),
    '--allowedTools',
    'mcp__gw__*',
    'ToolSearch',
  ];
  return runCli(CLAUDE_BIN, args, { env, cwd: cwd || tempDir('mcpgw-claude-cwd-'), timeoutMs });
}

/**
 * The stand-in's script for Claude Code: in the main conversation (the
 * request that offers ToolSearch), load every tool of `calls` with one
 * ToolSearch "select:..." (Claude Code defers MCP tools behind it), then
 * call them one per turn in order, then answer "Done.". Any other request
 * (none is expected in -p mode) gets a short text.
 */
export function claudeScript(calls) {
  return (req) => {
    const body = req.body;
    if (!body?.tools?.some((t) => t.name === 'ToolSearch')) return { text: 'OK.' };
    const uses = claudeToolUses(body);
    const loaded = calls.every((c) => body.tools.some((t) => t.name === c.name));
    if (!loaded && !uses.some((u) => u.name === 'ToolSearch')) {
      return { toolCalls: [{ name: 'ToolSearch', input: { query: `select:${calls.map((c) => c.name).join(',')}`, max_results: calls.length } }] };
    }
    const done = uses.filter((u) => u.name !== 'ToolSearch').length;
    if (done < calls.length) return { toolCalls: [calls[done]] };
    return { text: 'Done.' };
  };
}

function claudeToolUses(body) {
  const uses = [];
  for (const m of body.messages || []) {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const c of m.content) if (c.type === 'tool_use') uses.push(c);
  }
  return uses;
}

/** Text of a tool_result's content as the model gets it (string, or text blocks joined by newlines). */
function blockText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content.map((b) => (b.type === 'text' ? b.text : JSON.stringify(b))).join('\n');
}

/**
 * What the model saw of each tool call in the main conversation, in order:
 * [{name, input, isError, text, content}], from the last main request (which
 * holds the whole history).
 */
export function claudeToolResults(requests) {
  const main = requests.filter((r) => r.path === '/v1/messages' && r.body?.tools?.some((t) => t.name === 'ToolSearch'));
  const last = main.at(-1)?.body;
  if (!last) return [];
  const results = new Map();
  for (const m of last.messages || []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const c of m.content) if (c.type === 'tool_result') results.set(c.tool_use_id, c);
  }
  return claudeToolUses(last).map((u) => {
    const r = results.get(u.id);
    return { name: u.name, input: u.input, isError: Boolean(r?.is_error), text: r ? blockText(r.content) : undefined, content: r?.content };
  });
}

/** The system prompt of the main conversation as one string (system blocks and system-role messages). */
export function claudeSystemText(requests) {
  const main = requests.filter((r) => r.path === '/v1/messages' && r.body?.tools?.some((t) => t.name === 'ToolSearch'));
  const body = main[0]?.body;
  if (!body) return '';
  const parts = [];
  const sys = body.system;
  if (typeof sys === 'string') parts.push(sys);
  else if (Array.isArray(sys)) parts.push(...sys.map((b) => b.text || ''));
  for (const m of body.messages || []) if (m.role === 'system') parts.push(blockText(m.content));
  return parts.join('\n');
}

// ---------------------------------------------------------------------------
// Codex

/**
 * `codex exec PROMPT` with one MCP server `gw` (`mcpToml`: the lines of its
 * [mcp_servers.gw] table) and the model at `modelUrl` (a model_providers
 * entry speaking the Responses API).
 */
export function runCodex({ modelUrl, mcpToml, prompt, cwd, timeoutMs }) {
  const home = tempDir('mcpgw-codex-home-');
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome);
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      // Top-level keys before any table.
      'model = "gpt-standin"',
      'model_provider = "standin"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.standin]',
      'name = "standin"',
      `base_url = "${modelUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "STANDIN_API_KEY"',
      'supports_websockets = false',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      // Without this Codex syncs its curated plugins from GitHub at start.
      '[features]',
      'plugins = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
      '[history]',
      'persistence = "none"',
      '',
      '[mcp_servers.gw]',
      mcpToml,
      '',
    ].join('\n'),
  );
  const env = { ...baseEnv(home), CODEX_HOME: codexHome, STANDIN_API_KEY: 'sk-standin' };
  const args = ['exec', '--dangerously-bypass-approvals-and-sandbox', '--skip-git-repo-check', '--json', prompt];
  return runCli(CODEX_BIN, args, { env, cwd: cwd || tempDir('mcpgw-codex-cwd-'), timeoutMs });
}

/** A TOML string. */
export const toml = (s) => JSON.stringify(String(s));

/**
 * The stand-in's script for Codex: call the tools of `calls` ({name, input},
 * names as Codex shows them inside the namespace mcp__gw) one per turn, then
 * answer "Done.".
 */
export function codexScript(calls) {
  return (req) => {
    const input = req.body?.input;
    if (!Array.isArray(input)) return { text: 'OK.' };
    const done = input.filter((i) => i.type === 'function_call').length;
    if (done < calls.length) return { toolCalls: [{ ...calls[done], namespace: 'mcp__gw' }] };
    return { text: 'Done.' };
  };
}

/** What the model saw of each function call, in order: [{name, namespace, input, text}]. */
export function codexToolResults(requests) {
  const last = requests.filter((r) => r.path === '/v1/responses' && Array.isArray(r.body?.input)).at(-1)?.body;
  if (!last) return [];
  const outputs = new Map();
  for (const i of last.input) if (i.type === 'function_call_output') outputs.set(i.call_id, i.output);
  return last.input
    .filter((i) => i.type === 'function_call')
    .map((c) => {
      const out = outputs.get(c.call_id);
      const text = typeof out === 'string' ? out : Array.isArray(out) ? out.map((b) => b.text ?? JSON.stringify(b)).join('\n') : JSON.stringify(out);
      return { name: c.name, namespace: c.namespace, input: JSON.parse(c.arguments || '{}'), text };
    });
}

/** Codex's namespace tool for the MCP server `gw`, as the model gets it. */
export function codexNamespace(requests) {
  const first = requests.find((r) => r.path === '/v1/responses' && Array.isArray(r.body?.tools));
  return first?.body.tools.find((t) => t.type === 'namespace' && t.name === 'mcp__gw');
}

// ---------------------------------------------------------------------------
// the cases

export const LOCKED =
  "I'm sorry, but your Primary Checking account (acc_checking_001) is currently locked. You'll need to speak with a " +
  'customer service agent to resolve this issue before you can transfer funds from this account.';
export const HANDOFF = /I've requested a handoff to a customer service agent \(ticket (HO-\d+)\)\. An agent will join shortly\./;
export const WELCOME_START = 'Welcome to Example Bank! Here is a summary of your accounts:';
export const INSTRUCTIONS = 'Tools of the client-test gateway: a bank, a toolbox and a shop.';

/** The calls every client makes, by exposed (gateway) name. */
export const CASES = {
  seed003: { tool: 'bank:prepare_money_transfer', input: { fromAccountId: 'acc_checking_001', toAccountId: 'acc_savings_001', amount: 50 } },
  threeHops: {
    tool: 'toolbox:chain',
    input: { text: 'cart checked', next: 'chain', next_arguments: { text: 'card charged', next: 'chain', next_arguments: { text: 'parcel booked' } } },
  },
  typed: { tool: 'shop:checkout', input: { cartId: 'cart-42' } },
  typedClosed: { tool: 'shop:checkout_strict', input: { cartId: 'cart-42' } },
  asksUser: { tool: 'bank:transfer_money', input: { fromAccountId: 'acc_savings_001', toAccountId: 'acc_checking_001', amount: 10 } },
};

/**
 * The gateway of these tests: the bank (seed 003, with the transfer tool that
 * asks the user; behind the stdio tap so its stdin, where the client's
 * answer to the elicitation arrives, is logged to `tapLog`), the toolbox with
 * the chain fixture, and the typed checkout. Commands are absolute paths.
 */
export function gatewayConfig({ bankCommand, toolboxCommand, tapLog, withShop = true }) {
  const servers = [
    { name: 'bank', transport: 'stdio', command: 'node', args: [TAP, tapLog, '--', bankCommand, '--transfer-tool', 'transfer_money'] },
    { name: 'toolbox', transport: 'stdio', command: toolboxCommand, args: ['--chain-tool', 'chain'] },
  ];
  if (withShop) servers.push({ name: 'shop', transport: 'stdio', command: 'node', args: [SHOP] });
  // After a Claude Code session over HTTP, SIGTERM finds "calls still
  // running" and waits the whole grace period (10 s by default), longer than
  // the harness waits before SIGKILL, which would orphan the upstreams.
  return { instructions: INSTRUCTIONS, shutdown_grace_ms: 500, servers };
}

/** The elicitation answers the bank received from the client (through the gateway), from the tap log. */
export function elicitationAnswers(tapLines) {
  return tapLines.filter((m) => m && !('method' in m) && m.result && typeof m.result.action === 'string').map((m) => m.result);
}
