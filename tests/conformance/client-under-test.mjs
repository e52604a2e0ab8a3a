// mcpgw as the *client* under test of the MCP conformance suite
// (`conformance client --command "node client-under-test.mjs" --scenario S`).
//
// The suite starts a mock MCP server and runs this script with the mock's URL
// as the last argument (and MCP_CONFORMANCE_SCENARIO,
// MCP_CONFORMANCE_PROTOCOL_VERSION, MCP_CONFORMANCE_CONTEXT in the
// environment). mcpgw is a gateway, so what the suite judges is what mcpgw
// sends its upstream: this script
//   1. writes a temporary gateway config with the mock as the one HTTP
//      upstream (`prefix: false`, so tool, resource and prompt names are the
//      mock's own),
//   2. starts build/mcpgw on a free port and connects at once (the gateway
//      answers whole while its upstream connects: startup_wait_ms),
//   3. drives a downstream client through mcpgw doing what the scenario
//      needs (the official v2 client, @modelcontextprotocol/client: in the
//      2026-07-28 era when the scenario speaks 2026-07-28, else in the
//      stateful era; CONFORMANCE_DOWNSTREAM=modern|legacy overrides), and
//      checks what that client gets back,
//   4. stops mcpgw with SIGTERM,
// and exits 0 when every step succeeded. Nothing here talks to the mock
// itself: every message the mock sees comes from mcpgw.
//
// MCPGW_BUILD_DIR (default build) picks the binary; when MCPGW_CUT_PIDS names
// a file, mcpgw's pid is appended to it (scripts/conformance-client stops
// leftovers by pid). The gateway's log goes to stderr (the suite keeps it as
// stderr.txt in its -o directory).
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MCPGW = path.join(path.resolve(REPO, process.env.MCPGW_BUILD_DIR || 'build'), 'mcpgw');
const upstreamUrl = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO || '';
const specVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION || '2025-11-25';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const downstream = process.env.CONFORMANCE_DOWNSTREAM || (specVersion === '2026-07-28' ? 'modern' : 'legacy');
// The suite kills the client after 30 s (its default --timeout); finish first.
const DEADLINE_MS = Number(process.env.CONFORMANCE_CUT_DEADLINE_MS || 26000);
const STEP_MS = 12000;

const say = (msg) => process.stderr.write(`client-under-test: ${msg}\n`);
const started = Date.now();

class Failed extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failed(msg);
}
const textOf = (r) => (r?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// ---------------------------------------------------------------------------
// the gateway

let gw; // {child, exited, log}
let tmp;

function writeConfig() {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'mcpgw-cut-'));
  const file = path.join(tmp, 'gateway.yaml');
  const q = JSON.stringify; // a JSON string is a YAML double-quoted scalar
  writeFileSync(
    file,
    [
      'listen:',
      '  host: 127.0.0.1',
      '  port: 0',
      '  path: /mcp',
      '  heartbeat_ms: 1000',
      'welcome:',
      '  strategy: none',
      'servers:',
      '  - name: mock',
      '    transport: http',
      `    url: ${q(upstreamUrl)}`,
      '    prefix: false',
      '    timeout_ms: 10000',
      '',
    ].join('\n'),
  );
  return file;
}

function startGateway(config) {
  const child = spawn(MCPGW, ['--config', config, '--log-level', 'debug'], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (process.env.MCPGW_CUT_PIDS && child.pid) appendFileSync(process.env.MCPGW_CUT_PIDS, `${child.pid}\n`);
  const g = { child, log: '', exitInfo: null };
  g.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve((g.exitInfo = { code, signal })));
    child.on('error', (err) => resolve((g.exitInfo = { code: null, signal: null, error: err.message })));
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => {
    g.log += c;
    process.stderr.write(c.replace(/^(?=.)/gm, 'mcpgw| '));
  });
  return g;
}

async function waitFor(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (gw.exitInfo) throw new Failed(`mcpgw exited (${JSON.stringify(gw.exitInfo)}) before ${what}`);
    if (Date.now() >= deadline) throw new Failed(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopGateway() {
  if (!gw || gw.exitInfo) return gw?.exitInfo;
  gw.child.kill('SIGTERM');
  const timer = setTimeout(() => gw.child.kill('SIGKILL'), 8000);
  const info = await gw.exited;
  clearTimeout(timer);
  return info;
}

// ---------------------------------------------------------------------------
// the downstream client

/** What the downstream client was asked by mcpgw (elicitation etc.). */
const asked = [];

async function connectDownstream(url) {
  const client = new Client(
    { name: 'mcpgw-conformance-downstream', version: '1.0.0' },
    {
      // applyDefaults: the client fills in the defaults of fields its user
      // leaves empty (SEP-1034), as a real client would.
      capabilities: { elicitation: { form: { applyDefaults: true } }, sampling: {}, roots: {} },
      versionNegotiation: { mode: downstream === 'modern' ? 'auto' : 'legacy' },
    },
  );
  client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(req);
    say(`downstream asked ${req.method}: ${JSON.stringify(req.params)}`);
    // The user accepts without typing anything, except where the scenario's
    // form has a field to confirm.
    const props = req.params?.requestedSchema?.properties || {};
    const content = {};
    for (const [k, v] of Object.entries(props)) if (v.type === 'boolean' && v.default === undefined) content[k] = true;
    return { action: 'accept', content };
  });
  client.setRequestHandler('sampling/createMessage', async (req) => {
    asked.push(req);
    return { role: 'assistant', content: { type: 'text', text: 'sampled by the conformance downstream' }, model: 'conformance-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler('roots/list', async (req) => {
    asked.push(req);
    return { roots: [] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  say(`downstream connected to mcpgw: era ${client.getProtocolEra()}, protocol ${client.getNegotiatedProtocolVersion()}`);
  if (downstream === 'modern') check(client.getProtocolEra() === 'modern', `the downstream client did not go modern with mcpgw (era ${client.getProtocolEra()})`);
  return client;
}

const opts = { timeout: STEP_MS };

async function listTools(client) {
  const { tools } = await client.listTools(undefined, opts);
  say(`tools through mcpgw: ${tools.map((t) => t.name).join(', ') || '(none)'}`);
  return tools;
}

async function call(client, name, args, { allowError = false } = {}) {
  const r = await client.callTool({ name, arguments: args }, opts);
  say(`${name} -> ${JSON.stringify(r).slice(0, 600)}`);
  if (!allowError) check(!r.isError, `${name} returned isError: ${textOf(r)}`);
  return r;
}

function toolNamed(tools, name) {
  const t = tools.find((x) => x.name === name);
  check(t, `mcpgw does not list ${name} (it lists: ${tools.map((x) => x.name).join(', ') || 'nothing'})`);
  return t;
}

// ---------------------------------------------------------------------------
// what each scenario needs

const INVALID_HEADER_TOOLS = [
  'invalid_empty_header',
  'invalid_object_header',
  'invalid_array_header',
  'invalid_null_header',
  'invalid_number_header',
  'invalid_duplicate_same_case',
  'invalid_duplicate_diff_case',
  'invalid_space_in_name',
  'invalid_colon_in_name',
  'invalid_non_ascii_name',
  'invalid_control_char_name',
];

const scenarios = {
  async initialize(client) {
    // mcpgw initialized the mock when it started; the downstream just lists.
    const tools = await listTools(client);
    check(tools.length === 0, `the mock has no tools, mcpgw lists ${tools.length}`);
  },

  async tools_call(client) {
    const tools = await listTools(client);
    toolNamed(tools, 'add_numbers');
    const r = await call(client, 'add_numbers', { a: 5, b: 3 });
    check(textOf(r) === 'The sum of 5 and 3 is 8', `add_numbers answered ${JSON.stringify(textOf(r))}`);
  },

  async 'elicitation-sep1034-client-defaults'(client) {
    const tools = await listTools(client);
    toolNamed(tools, 'test_client_elicitation_defaults');
    await call(client, 'test_client_elicitation_defaults', {});
    check(asked.filter((r) => r.method === 'elicitation/create').length === 1, `the downstream was asked ${asked.length} times, not once`);
  },

  async 'sse-retry'(client) {
    const tools = await listTools(client);
    toolNamed(tools, 'test_reconnection');
    const r = await call(client, 'test_reconnection', {});
    check(textOf(r) === 'Reconnection test completed successfully', `test_reconnection answered ${JSON.stringify(textOf(r))}`);
  },

  async 'request-metadata'(client) {
    // The mock refuses the first request mcpgw sends (-32022) and serves the
    // rest: mcpgw must have retried its discovery at 2026-07-28.
    const tools = await listTools(client);
    check(tools.length === 0, `the mock has no tools, mcpgw lists ${tools.length}`);
  },

  async 'sep-2322-client-request-state'(client) {
    const tools = await listTools(client);
    const expect = {
      test_mrtr_echo_state: 'echo-state-ok',
      test_mrtr_no_state: 'no-state-ok',
      test_mrtr_unrelated: 'unrelated-ok',
      test_mrtr_no_result_type: 'no-result-type-test-ok',
    };
    for (const [name, text] of Object.entries(expect)) {
      toolNamed(tools, name);
      const r = await call(client, name, {});
      check(textOf(r) === text, `${name} answered ${JSON.stringify(textOf(r))}, not ${JSON.stringify(text)}`);
    }
  },

  async 'http-standard-headers'(client) {
    // Every method is tried even when one fails, so that the mock sees as
    // much as mcpgw can send; the failures are reported together.
    const failures = [];
    const attempt = async (what, fn) => {
      try {
        await fn();
      } catch (e) {
        failures.push(`${what}: ${e?.message ?? e}`);
        say(`${what} failed: ${e?.message ?? e}`);
      }
    };
    const tools = await listTools(client);
    check(tools.length > 0, 'mcpgw lists no tools');
    for (const t of tools) await attempt(`tools/call ${t.name}`, () => call(client, t.name, {}));
    const { resources } = await client.listResources(undefined, opts);
    say(`resources through mcpgw: ${resources.map((r) => r.uri).join(', ')}`);
    check(resources.length > 0, 'mcpgw lists no resources');
    for (const r of resources) await attempt(`resources/read ${r.uri}`, () => client.readResource({ uri: r.uri }, opts));
    const { prompts } = await client.listPrompts(undefined, opts);
    say(`prompts through mcpgw: ${prompts.map((p) => p.name).join(', ')}`);
    check(prompts.length > 0, 'mcpgw lists no prompts');
    for (const p of prompts) await attempt(`prompts/get ${p.name}`, () => client.getPrompt({ name: p.name }, opts));
    check(failures.length === 0, failures.join('; '));
  },

  async 'http-custom-headers'(client) {
    const tools = await listTools(client);
    check(Array.isArray(context.toolCalls) && context.toolCalls.length > 0, `no toolCalls in MCP_CONFORMANCE_CONTEXT: ${JSON.stringify(context)}`);
    for (const c of context.toolCalls) {
      toolNamed(tools, c.name);
      await call(client, c.name, c.arguments);
    }
  },

  async 'http-invalid-tool-headers'(client) {
    const tools = await listTools(client);
    const listed = INVALID_HEADER_TOOLS.filter((n) => tools.some((t) => t.name === n));
    check(listed.length === 0, `mcpgw lists tools with invalid x-mcp-header declarations: ${listed.join(', ')}`);
    toolNamed(tools, 'valid_tool');
    await call(client, 'valid_tool', { region: 'us-west1' });
  },

  async 'json-schema-ref-no-deref'(client) {
    const tools = await listTools(client);
    const t = toolNamed(tools, 'lookup_user');
    const s = t.inputSchema;
    check(s?.properties?.id?.$ref === '#/$defs/userId', `lookup_user's id is not the local $ref any more: ${JSON.stringify(s)}`);
    check(typeof s?.properties?.profile?.$ref === 'string' && s.properties.profile.$ref.endsWith('/canary/profile-schema.json'), `lookup_user's profile is not the remote $ref any more: ${JSON.stringify(s)}`);
    check(s?.$defs?.userId?.pattern === '^[a-z0-9-]+$', `lookup_user's $defs changed: ${JSON.stringify(s)}`);
  },

  async 'json-schema-2020-12-preservation'(client) {
    const tools = await listTools(client);
    const focal = toolNamed(tools, 'json_schema_2020_12_tool');
    toolNamed(tools, 'json_schema_echo');
    say(`json_schema_2020_12_tool inputSchema as mcpgw lists it: ${JSON.stringify(focal.inputSchema)}`);
    await call(client, 'json_schema_echo', { schema: focal.inputSchema });
  },
};

// ---------------------------------------------------------------------------

async function main() {
  const run = scenarios[scenario];
  check(run, `no steps for scenario '${scenario}' (known: ${Object.keys(scenarios).join(', ')})`);
  check(/^https?:\/\//.test(upstreamUrl), `the last argument is not the mock's URL: ${upstreamUrl}`);
  say(`scenario ${scenario}, spec ${specVersion}, mock ${upstreamUrl}, downstream ${downstream}`);
  gw = startGateway(writeConfig());
  const m = await waitFor('listening line', () => gw.log.match(/listening on (http:\/\/[^\s"'\],}]+)/), 10000);
  const url = m[1];
  // No wait for /readyz: the downstream's initialize waits for the mock
  // (startup_wait_ms), as any client's first request after a start does.
  say(`mcpgw listening at ${url} after ${Date.now() - started} ms`);
  const client = await connectDownstream(url);
  try {
    await run(client);
  } finally {
    await client.close().catch(() => {});
  }
}

let status = 0;
const watchdog = setTimeout(async () => {
  say(`gave up after ${DEADLINE_MS} ms`);
  await stopGateway();
  process.exit(1);
}, DEADLINE_MS);
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, async () => {
    await stopGateway();
    process.exit(1);
  });

try {
  await main();
  say('every step succeeded');
} catch (e) {
  status = 1;
  say(`FAILED: ${e instanceof Failed ? e.message : e?.stack || e}`);
}
const info = await stopGateway();
if (info && !(info.code === 0 && info.signal === null)) {
  say(`mcpgw did not exit cleanly on SIGTERM: ${JSON.stringify(info)}`);
  status = 1;
}
clearTimeout(watchdog);
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(status);
