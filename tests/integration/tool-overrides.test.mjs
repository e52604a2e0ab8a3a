// servers[].tools (CONTRACT wave 4, "Tool overrides"): the exposed
// definition is the overridden one (tools/list, search, check), calls are
// mapped back to the upstream's names and values (the fixture answers with
// what it received), a fixed argument sent by the client is -32602 naming
// it, a default is sent when omitted, `_meta.nextTool` naming the
// upstream's tool and an MCP Apps view's call by the upstream's name still
// reach it, tasks and call_tool go the same way, and an override of a tool
// the server does not have is a warning in check and in the log.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HttpClient,
  MCPGW,
  Proc,
  chainTrace,
  httpGet,
  requireBinaries,
  startGateway,
  tempDir,
  textsOf,
  withDiagnostics,
  writeConfig,
} from './harness.mjs';
import { CONFIG, CONTRACT_TEXT, MAPPED, TRACKER } from './overrides-config.mjs';

/** What the fixture says it received: {tool, arguments}. */
function received(result) {
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return result.structuredContent;
}

/** The fixture's answers among a (merged) result's texts. */
function receivedTexts(result) {
  return textsOf(result).filter((t) => t.startsWith('{')).map((t) => JSON.parse(t));
}

let gw;
let client;

before(async () => {
  requireBinaries(MCPGW);
  gw = await startGateway(CONFIG);
  client = new HttpClient(gw.url);
  await client.initialize({ protocolVersion: '2025-11-25' });
});

after(async () => {
  await client?.close();
  await gw?.proc.stop();
});

describe('the exposed definition', () => {
  test(
    'tools/list shows the override: new name, description (with the naming prefix), title, merged annotations, rewritten schema',
    withDiagnostics(async () => {
      const { tools } = await client.listAllTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('tracker:open_ticket'), names.join(', '));
      assert.ok(!names.includes('tracker:create_issue'), 'the upstream name is listed too');
      const t = tools.find((x) => x.name === 'tracker:open_ticket');
      assert.equal(t.description, `[Proxied from tracker] ${CONTRACT_TEXT}`);
      assert.equal(t.title, 'Open ticket');
      assert.deepEqual(t.annotations, { destructiveHint: false, openWorldHint: true });
      assert.deepEqual(t.inputSchema, {
        type: 'object',
        properties: {
          title: { type: 'string' },
          details: { type: 'string', description: 'What is wrong, in full sentences' },
          labels: { type: 'array', items: { type: 'string' }, default: ['triage'] },
        },
        required: ['title', 'details'],
      });
      // The view it opens is still its server's.
      assert.equal(t._meta.ui.resourceUri, 'ui://tracker/form/create_issue.html');
      // A tool without an override is as before.
      const echo = tools.find((x) => x.name === 'tracker:echo_args');
      assert.equal(echo.description, '[Proxied from tracker] Answers with its arguments');
    }),
  );

  test(
    "the status page's catalog shows the exposed name and description",
    withDiagnostics(async () => {
      const res = await httpGet(`${gw.base}/status/catalog.json`);
      assert.equal(res.status, 200, res.text);
      const tools = JSON.parse(res.text).tools;
      const t = tools.find((x) => x.name === 'tracker:open_ticket');
      assert.equal(t?.description, `[Proxied from tracker] ${CONTRACT_TEXT}`, res.text);
      assert.ok(!tools.some((x) => x.name === 'tracker:create_issue'));
    }),
  );

  test(
    'search_tools finds the tool by its new name and description',
    withDiagnostics(async () => {
      const c = new HttpClient(`${gw.url}/find`);
      await c.initialize();
      try {
        const r = await c.callTool('search_tools', { query: 'ticket web team tracker' });
        const found = r.structuredContent?.tools ?? [];
        const names = found.map((x) => x.name);
        assert.equal(names[0], 'tracker:open_ticket', JSON.stringify(r));
        assert.ok(!JSON.stringify(r).includes('create_issue"'), JSON.stringify(r));
      } finally {
        await c.close();
      }
    }),
  );
});

describe('calls are mapped back', () => {
  test(
    'renamed arguments go back, the fixed value is put in, the default filled when omitted',
    withDiagnostics(async () => {
      const r = await client.callTool('tracker:open_ticket', { title: 'T', details: 'What broke' });
      assert.deepEqual(received(r), MAPPED({ title: 'T', body: 'What broke' }));
    }),
  );

  test(
    'a default the client gives is sent as given; a call without arguments still gets the fixed and default values',
    withDiagnostics(async () => {
      const r = await client.callTool('tracker:open_ticket', { title: 'T', details: 'D', labels: ['bug'] });
      assert.deepEqual(received(r), { tool: 'create_issue', arguments: { title: 'T', body: 'D', labels: ['bug'], repo: 'acme/web' } });
      const none = await client.result('tools/call', { name: 'tracker:open_ticket' });
      assert.deepEqual(received(none), MAPPED({}));
    }),
  );

  test(
    'a fixed argument sent by the client is -32602 naming it, and nothing reaches the upstream',
    withDiagnostics(async () => {
      const m = await client.request('tools/call', { name: 'tracker:open_ticket', arguments: { title: 'T', details: 'D', repo: 'evil/repo' } });
      assert.equal(m.error?.code, -32602, JSON.stringify(m));
      assert.match(m.error.message, /argument "repo" of tool tracker:open_ticket is fixed/);
      // The same through tool search's call_tool.
      const c = new HttpClient(`${gw.url}/find`);
      await c.initialize();
      try {
        const viaSearch = await c.request('tools/call', {
          name: 'call_tool',
          arguments: { name: 'tracker:open_ticket', arguments: { title: 'T', details: 'D', repo: 'evil/repo' } },
        });
        assert.equal(viaSearch.error?.code, -32602, JSON.stringify(viaSearch));
        assert.match(viaSearch.error.message, /"repo"/);
      } finally {
        await c.close();
      }
    }),
  );

  test(
    "tool search's call_tool is mapped the same way",
    withDiagnostics(async () => {
      const c = new HttpClient(`${gw.url}/find`);
      await c.initialize();
      try {
        const r = await c.callTool('call_tool', { name: 'tracker:open_ticket', arguments: { title: 'S', details: 'via search' } });
        assert.deepEqual(received(r), MAPPED({ title: 'S', body: 'via search' }));
      } finally {
        await c.close();
      }
    }),
  );

  test(
    'a task (tasks.gateway) runs the mapped call',
    withDiagnostics(async () => {
      const created = await client.result('tools/call', { name: 'tracker:open_ticket', arguments: { title: 'K', details: 'as a task' }, task: {} });
      const taskId = created.task?.taskId;
      assert.ok(taskId, JSON.stringify(created));
      const r = await client.result('tasks/result', { taskId });
      assert.deepEqual(received(r), MAPPED({ title: 'K', body: 'as a task' }));
    }),
  );
});

describe('nextTool chains', () => {
  test(
    "a nextTool naming the upstream's tool, in its own argument names, reaches it mapped (the fixed value wins)",
    withDiagnostics(async () => {
      const r = await client.callTool('tracker:triage', {
        next: 'create_issue',
        next_arguments: { repo: 'other/repo', title: 'C', body: 'from the chain' },
      });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.deepEqual(chainTrace(r).map((h) => h.tool), ['tracker:triage', 'tracker:open_ticket']);
      assert.deepEqual(receivedTexts(r), [MAPPED({ title: 'C', body: 'from the chain' })]);
    }),
  );

  test(
    'a nextTool naming the new exposed name, in the exposed argument names, is mapped like a call; a fixed argument there stops the chain naming it',
    withDiagnostics(async () => {
      const r = await client.callTool('tracker:triage', {
        next: 'tracker:open_ticket',
        next_arguments: { title: 'E', details: 'exposed names' },
      });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.deepEqual(receivedTexts(r), [MAPPED({ title: 'E', body: 'exposed names' })]);

      const refused = await client.callTool('tracker:triage', {
        next: 'tracker:open_ticket',
        next_arguments: { title: 'E', details: 'D', repo: 'evil/repo' },
      });
      assert.equal(refused.isError, true, JSON.stringify(refused));
      assert.match(textsOf(refused).join('\n'), /argument "repo" of tool tracker:open_ticket is fixed/);
      assert.deepEqual(receivedTexts(refused), []);
    }),
  );
});

describe('MCP Apps', () => {
  test(
    "a view's call by the upstream's name and argument names reaches the tool, mapped (tagged, and bare)",
    withDiagnostics(async () => {
      const view = await client.result('resources/read', { uri: 'ui://tracker/form/create_issue.html' });
      assert.match(view.contents[0].text, /mcpgw\/server/);
      const tagged = await client.result('tools/call', {
        name: 'create_issue',
        arguments: { repo: 'view/repo', title: 'V', body: 'from the view' },
        _meta: { 'mcpgw/server': 'tracker' },
      });
      assert.deepEqual(received(tagged), MAPPED({ title: 'V', body: 'from the view' }));
      const bare = await client.result('tools/call', { name: 'create_issue', arguments: { title: 'B', body: 'bare' } });
      assert.deepEqual(received(bare), MAPPED({ title: 'B', body: 'bare' }));
    }),
  );
});

describe('unknown tools', () => {
  test(
    'an override of a tool the server does not have is a warning in the log',
    withDiagnostics(async () => {
      await gw.proc.waitForLine('stderr', /catalog: server tracker has no tool "ghost": its override \(servers\[\]\.tools\.ghost\) is unused/);
    }),
  );

  test(
    'mcpgw check shows the exposed name with the upstream name, and warns about the unknown tool',
    withDiagnostics(async () => {
      const file = writeConfig(tempDir(), CONFIG);
      const proc = new Proc('mcpgw-check-json', MCPGW, ['check', '--config', file, '--json']);
      const exit = await proc.waitExit(30000);
      assert.equal(exit.code, 0, proc.diagnostics());
      const report = JSON.parse(proc.stdoutText);
      const t = report.tools.find((x) => x.name === 'tracker:open_ticket');
      assert.equal(t?.upstream_name, 'create_issue', JSON.stringify(report.tools));
      assert.ok(!report.tools.some((x) => x.name === 'tracker:create_issue'));
      assert.ok(
        report.warnings.includes('server tracker has no tool "ghost": its override (servers[].tools.ghost) is unused'),
        JSON.stringify(report.warnings),
      );
      const text = new Proc('mcpgw-check', MCPGW, ['check', '--config', file]);
      assert.equal((await text.waitExit(30000)).code, 0, text.diagnostics());
      assert.match(text.stdoutText, /tracker:open_ticket\s+tracker \(create_issue\)/);
    }),
  );

  test(
    'a mistake in an override is exit 2 (check: 1) naming the file, line and key',
    withDiagnostics(async () => {
      const dir = tempDir();
      const bad = { servers: [{ ...TRACKER, tools: { create_issue: { arguments: { repo: { value: 'a', default: 'b' } } } } }] };
      const file = writeConfig(dir, bad, 'bad.yaml');
      const message =
        /bad\.yaml:\d+: servers\[0\]\.tools\.create_issue\.arguments\.repo\.default: argument "repo" has both value \(fixed\) and default/;
      const daemon = new Proc('mcpgw-bad', MCPGW, ['--config', file]);
      assert.equal((await daemon.waitExit(30000)).code, 2, daemon.diagnostics());
      assert.match(daemon.stderrText, message);
      // check: invalid is exit 1, with the same message.
      const check = new Proc('mcpgw-check-bad', MCPGW, ['check', '--config', file]);
      assert.equal((await check.waitExit(30000)).code, 1, check.diagnostics());
      assert.match(check.stderrText, message);
    }),
  );
});
