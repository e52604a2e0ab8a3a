// The live catalog against an upstream that paginates every list and
// announces its own changes: the gateway drains every upstream page of tools,
// resources, templates and prompts (and paginates its own lists with
// listen.page_size), routes names and URIs back, and on the upstream's
// notifications/{tools,resources,prompts}/list_changed tells clients with an
// open GET stream, after which the next list shows the change (filters apply
// to new tools too).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  connectHttp,
  openGetStream,
  pollUntil,
  requireBinaries,
  startGateway,
  startGatewayStdio,
  tempDir,
  textOf,
  withDiagnostics,
} from './harness.mjs';

// A stdio MCP server (newline-delimited JSON-RPC) with 2 entries per page on
// every list; tools/call "grow" adds a tool, a resource and a prompt and sends
// the three list_changed notifications. Reads and prompts echo what reached it.
const FIXTURE_SOURCE = `
import readline from 'node:readline';
const PAGE = 2;
const state = { tools: 3, resources: 5, prompts: 5 };
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const ok = (id, result) => out({ jsonrpc: '2.0', id, result });
const schema = { type: 'object', properties: { who: { type: 'string' } } };
const lists = {
  'tools/list': ['tools', () => [{ name: 'grow', description: 'adds one of each', inputSchema: { type: 'object' } },
    { name: 'touch', description: 'sends resources/updated for uri', inputSchema: { type: 'object', properties: { uri: { type: 'string' } } } },
    ...Array.from({ length: state.tools }, (_, i) => ({ name: 't' + i, description: 'tool ' + i, inputSchema: schema }))]],
  'resources/list': ['resources', () => Array.from({ length: state.resources }, (_, i) =>
    ({ uri: 'fx://item/' + i, name: 'item ' + i, mimeType: 'text/plain' }))],
  'resources/templates/list': ['resourceTemplates', () => Array.from({ length: 3 }, (_, i) =>
    ({ uriTemplate: 'fx://tmpl' + i + '/{id}', name: 'template ' + i }))],
  'prompts/list': ['prompts', () => Array.from({ length: state.prompts }, (_, i) =>
    ({ name: 'p' + i, description: 'prompt ' + i, arguments: [{ name: 'who', required: false }] }))],
};
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (!m || m.id === undefined || !m.method) return;
  const p = m.params || {};
  if (m.method === 'initialize')
    return ok(m.id, { protocolVersion: p.protocolVersion, serverInfo: { name: 'paged-fixture', version: '1.0.0' },
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true }, completions: {} } });
  if (m.method === 'ping') return ok(m.id, {});
  if (lists[m.method]) {
    const [key, all] = lists[m.method];
    const items = all();
    const start = p.cursor ? Number(p.cursor) : 0;
    const result = { [key]: items.slice(start, start + PAGE) };
    if (start + PAGE < items.length) result.nextCursor = String(start + PAGE);
    return ok(m.id, result);
  }
  if (m.method === 'tools/call') {
    if (p.name === 'touch') {
      // The update goes out before the answer, so a client has it once the call returned.
      out({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: p.arguments.uri } });
      return ok(m.id, { content: [{ type: 'text', text: 'touched ' + p.arguments.uri }] });
    }
    if (p.name === 'grow') {
      state.tools++; state.resources++; state.prompts++;
      ok(m.id, { content: [{ type: 'text', text: 'grown' }] });
      for (const what of ['tools', 'resources', 'prompts']) out({ jsonrpc: '2.0', method: 'notifications/' + what + '/list_changed' });
      return;
    }
    return ok(m.id, { content: [{ type: 'text', text: 'ran ' + p.name + ' with ' + JSON.stringify(p.arguments || {}) }] });
  }
  if (m.method === 'resources/subscribe' || m.method === 'resources/unsubscribe') return ok(m.id, {});
  if (m.method === 'resources/read')
    return ok(m.id, { contents: [{ uri: p.uri, mimeType: 'text/plain', text: 'content of ' + p.uri }] });
  if (m.method === 'prompts/get')
    return ok(m.id, { description: 'got ' + p.name, messages: [{ role: 'user', content: { type: 'text', text: 'prompt ' + p.name + ' for ' + (p.arguments || {}).who } }] });
  if (m.method === 'completion/complete')
    return ok(m.id, { completion: { values: [p.ref.type + ' ' + (p.ref.name || p.ref.uri) + ' ' + p.argument.value] } });
  out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
});
`;

let fixturePath;
const fixture = (name, extra = {}) => ({ name, transport: 'stdio', command: process.execPath, args: [fixturePath], ...extra });

before(() => {
  requireBinaries();
  fixturePath = path.join(tempDir('mcpgw-paged-'), 'paged-fixture.mjs');
  writeFileSync(fixturePath, FIXTURE_SOURCE);
});

/** Drains one of the gateway's paginated lists; returns {items, pages}. */
async function drain(client, method, key, pageSize) {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const r = await client.result(method, cursor === undefined ? {} : { cursor });
    pages++;
    assert.ok(r[key].length <= pageSize, `${method} page ${pages}: ${r[key].length} entries`);
    items.push(...r[key]);
    cursor = r.nextCursor;
    assert.ok(pages < 50, `${method} pagination does not end`);
  } while (cursor !== undefined);
  return { items, pages };
}

const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));

test(
  'every upstream page of tools, resources, templates and prompts is drained; names and URIs route back',
  withDiagnostics(async () => {
    const gw = await startGateway({ listen: { page_size: 3 }, servers: [fixture('fx'), fixture('fy', { prefix: false })] });
    const c = await connectHttp(gw.url);

    const tools = await drain(c, 'tools/list', 'tools', 3);
    assert.deepEqual(tools.items.map((t) => t.name).sort(), ['fx:grow', 'fx:touch', ...range(3, (i) => `fx:t${i}`), 'grow', 'touch', ...range(3, (i) => `t${i}`)].sort());
    const resources = await drain(c, 'resources/list', 'resources', 3);
    assert.deepEqual(resources.items.map((r) => r.uri).sort(), [...range(5, (i) => `fx+fx://item/${i}`), ...range(5, (i) => `fx://item/${i}`)].sort());
    assert.equal(resources.pages, 4);
    const templates = await drain(c, 'resources/templates/list', 'resourceTemplates', 3);
    assert.deepEqual(templates.items.map((t) => t.uriTemplate).sort(), [...range(3, (i) => `fx+fx://tmpl${i}/{id}`), ...range(3, (i) => `fx://tmpl${i}/{id}`)].sort());
    const prompts = await drain(c, 'prompts/list', 'prompts', 3);
    assert.deepEqual(prompts.items.map((p) => p.name).sort(), [...range(5, (i) => `fx:p${i}`), ...range(5, (i) => `p${i}`)].sort());
    const p4 = prompts.items.find((p) => p.name === 'fx:p4');
    assert.deepEqual(p4, { name: 'fx:p4', description: '[Proxied from fx] prompt 4', arguments: [{ name: 'who', required: false }] });

    // The upstream receives its own names and URIs; the client gets the exposed ones back.
    assert.equal(textOf(await c.callTool('fx:t2', { who: 'a' })), 'ran t2 with {"who":"a"}');
    assert.equal(textOf(await c.callTool('t2', { who: 'b' })), 'ran t2 with {"who":"b"}');
    assert.deepEqual(await c.result('resources/read', { uri: 'fx+fx://item/4' }), { contents: [{ uri: 'fx+fx://item/4', mimeType: 'text/plain', text: 'content of fx://item/4' }] });
    assert.deepEqual(await c.result('resources/read', { uri: 'fx://item/4' }), { contents: [{ uri: 'fx://item/4', mimeType: 'text/plain', text: 'content of fx://item/4' }] });
    // From a template (the last upstream page), prefixed and not.
    assert.deepEqual((await c.result('resources/read', { uri: 'fx+fx://tmpl2/abc' })).contents, [{ uri: 'fx+fx://tmpl2/abc', mimeType: 'text/plain', text: 'content of fx://tmpl2/abc' }]);
    assert.deepEqual((await c.result('resources/read', { uri: 'fx://tmpl2/xyz' })).contents, [{ uri: 'fx://tmpl2/xyz', mimeType: 'text/plain', text: 'content of fx://tmpl2/xyz' }]);
    const got = await c.result('prompts/get', { name: 'fx:p4', arguments: { who: 'Ann' } });
    assert.equal(got.messages[0].content.text, 'prompt p4 for Ann');
    assert.equal((await c.result('prompts/get', { name: 'p3', arguments: { who: 'Bo' } })).messages[0].content.text, 'prompt p3 for Bo');
    const comp = await c.result('completion/complete', { ref: { type: 'ref/prompt', name: 'fx:p4' }, argument: { name: 'who', value: 'A' } });
    assert.deepEqual(comp.completion.values, ['ref/prompt p4 A']);
    const compT = await c.result('completion/complete', { ref: { type: 'ref/resource', uri: 'fx+fx://tmpl1/{id}' }, argument: { name: 'id', value: '9' } });
    assert.deepEqual(compT.completion.values, ['ref/resource fx://tmpl1/{id} 9']);

    const unknown = await c.request('resources/read', { uri: 'fx+fx://item/unknown-to-gateway' });
    // Routed by server prefix: the upstream answers (this fixture echoes any URI).
    assert.equal(unknown.result?.contents?.[0]?.uri, 'fx+fx://item/unknown-to-gateway', JSON.stringify(unknown));
    const lost = await c.request('resources/read', { uri: 'other://item/0' });
    assert.equal(lost.error?.code, -32002, JSON.stringify(lost));
    const noPrompt = await c.request('prompts/get', { name: 'fx:p99' });
    assert.equal(noPrompt.error?.code, -32602, JSON.stringify(noPrompt));
    await c.close();
  }),
);

test(
  'upstream list_changed notifications reach GET streams; the next lists show the change; filters apply to new tools',
  withDiagnostics(async () => {
    const gw = await startGateway({ filters: { exclude_tools: ['fx:t3'] }, servers: [fixture('fx')] });
    const c = await connectHttp(gw.url);
    const other = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    const otherStream = await openGetStream(other);
    assert.equal(stream.status, 200);
    const names = async () => (await c.listAllTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(await names(), ['fx:grow', 'fx:t0', 'fx:t1', 'fx:t2', 'fx:touch']);

    // First growth: t3 (filtered out), item/5, p5.
    assert.equal(textOf(await c.callTool('fx:grow')), 'grown');
    for (const what of ['resources', 'prompts']) {
      await stream.waitFor((m) => m.method === `notifications/${what}/list_changed`);
      await otherStream.waitFor((m) => m.method === `notifications/${what}/list_changed`);
    }
    assert.ok((await drain(c, 'resources/list', 'resources', 500)).items.some((r) => r.uri === 'fx+fx://item/5'));
    assert.ok((await drain(c, 'prompts/list', 'prompts', 500)).items.some((p) => p.name === 'fx:p5'));
    assert.deepEqual(await names(), ['fx:grow', 'fx:t0', 'fx:t1', 'fx:t2', 'fx:touch'], 'a filtered-out new tool is listed');
    assert.equal((await c.request('tools/call', { name: 'fx:t3', arguments: {} })).error?.code, -32602);

    // Second growth: t4 passes the filters, a tools/list_changed announces it.
    const before = stream.messages.length;
    await c.callTool('fx:grow');
    await stream.waitFor((m) => m.method === 'notifications/tools/list_changed' && stream.messages.indexOf(m) >= before);
    assert.deepEqual(await names(), ['fx:grow', 'fx:t0', 'fx:t1', 'fx:t2', 'fx:t4', 'fx:touch']);
    assert.equal(textOf(await c.callTool('fx:t4')), 'ran t4 with {}');
    await otherStream.waitFor((m) => m.method === 'notifications/tools/list_changed');
    assert.ok((await drain(other, 'resources/list', 'resources', 500)).items.some((r) => r.uri === 'fx+fx://item/6'));
    stream.close();
    otherStream.close();
    await c.close();
    await other.close();
  }),
);

test(
  'resources/updated reaches only subscribers, with the exposed URI, for prefixed and unprefixed servers',
  withDiagnostics(async () => {
    const gw = await startGateway({ servers: [fixture('fx'), fixture('fy', { prefix: false })] });
    const a = await connectHttp(gw.url);
    const b = await connectHttp(gw.url);
    const sa = await openGetStream(a);
    const sb = await openGetStream(b);
    const updates = (s) => s.messages.filter((m) => m.method === 'notifications/resources/updated').map((m) => m.params.uri);
    assert.deepEqual(await a.result('resources/subscribe', { uri: 'fx+fx://item/1' }), {});
    assert.deepEqual(await a.result('resources/subscribe', { uri: 'fx://item/2' }), {}); // fy's, unprefixed
    assert.deepEqual(await b.result('resources/subscribe', { uri: 'fx+fx://tmpl0/z' }), {}); // from a template
    assert.equal((await a.request('resources/subscribe', { uri: 'nowhere://x' })).error?.code, -32002);

    await a.callTool('fx:touch', { uri: 'fx://item/1' });
    await a.callTool('touch', { uri: 'fx://item/2' });
    await a.callTool('fx:touch', { uri: 'fx://tmpl0/z' });
    await a.callTool('fx:touch', { uri: 'fx://item/3' }); // nobody subscribed
    await sa.waitFor((m) => m.params?.uri === 'fx://item/2');
    await sb.waitFor((m) => m.params?.uri === 'fx+fx://tmpl0/z');
    // The last touch (item/3) went out after the others on the same upstream; a's
    // update for item/1 came before it: sync on a fresh marker subscription.
    assert.deepEqual(await b.result('resources/subscribe', { uri: 'fx+fx://item/0' }), {});
    await a.callTool('fx:touch', { uri: 'fx://item/0' });
    await sb.waitFor((m) => m.params?.uri === 'fx+fx://item/0');
    assert.deepEqual(updates(sa), ['fx+fx://item/1', 'fx://item/2']);
    assert.deepEqual(updates(sb), ['fx+fx://tmpl0/z', 'fx+fx://item/0']);

    // After unsubscribe, no more updates for it (checked against a later marker).
    assert.deepEqual(await a.result('resources/unsubscribe', { uri: 'fx+fx://item/1' }), {});
    await a.callTool('fx:touch', { uri: 'fx://item/1' });
    await a.callTool('fx:touch', { uri: 'fx://item/0' });
    await sb.waitFor((m) => m.params?.uri === 'fx+fx://item/0' && updates(sb).length === 3);
    assert.deepEqual(updates(sa), ['fx+fx://item/1', 'fx://item/2']);
    sa.close();
    sb.close();
    await a.close();
    await b.close();
  }),
);

test(
  'a subscription made with the upstream form of a prefixed server URI (accepted like in resources/read) receives its updates',
  withDiagnostics(async () => {
    // Only prefixed servers: "fx://item/1" is listed by fx alone, as "fx+fx://item/1".
    const gw = await startGateway({ servers: [fixture('fx')] });
    const c = await connectHttp(gw.url);
    const stream = await openGetStream(c);
    // The gateway accepts the upstream form: read answers with the exposed URI.
    const read = await c.result('resources/read', { uri: 'fx://item/1' });
    assert.equal(read.contents[0].uri, 'fx+fx://item/1');
    assert.deepEqual(await c.result('resources/subscribe', { uri: 'fx://item/1' }), {});
    assert.deepEqual(await c.result('resources/subscribe', { uri: 'fx+fx://item/2' }), {});
    await c.callTool('fx:touch', { uri: 'fx://item/1' });
    await c.callTool('fx:touch', { uri: 'fx://item/2' });
    // item/2's update (exposed subscription) arrives; item/1's went out before it.
    await stream.waitFor((m) => m.method === 'notifications/resources/updated' && m.params.uri === 'fx+fx://item/2');
    const got = stream.messages.filter((m) => m.method === 'notifications/resources/updated').map((m) => m.params.uri);
    assert.ok(
      got.includes('fx://item/1') || got.includes('fx+fx://item/1'),
      `subscribe {uri: "fx://item/1"} answered {} but its update was not delivered; updates received: ${JSON.stringify(got)}`,
    );
    stream.close();
    await c.close();
  }),
);

test(
  'a stdio client receives notifications/*/list_changed on stdout and re-lists',
  withDiagnostics(async () => {
    const { client, proc } = startGatewayStdio({ servers: [fixture('fx')] });
    await client.initialize();
    assert.ok(!(await client.listAllTools()).tools.some((t) => t.name === 'fx:t3'));
    // The gateway serves from its first moment: notifications of its own
    // start-up may come first; those that count follow the grow.
    const seen = client.messages.length;
    await client.callTool('fx:grow');
    await pollUntil(
      () => ['tools', 'resources', 'prompts'].every((w) => client.messages.slice(seen).some((m) => m.method === `notifications/${w}/list_changed`)),
      { what: 'three list_changed notifications on stdout' },
    );
    assert.ok((await client.listAllTools()).tools.some((t) => t.name === 'fx:t3'));
    assert.ok((await client.result('prompts/list', {})).prompts.some((p) => p.name === 'fx:p5'));
    assert.deepEqual(client.badLines, []);
    client.closeStdin();
    assert.equal((await proc.waitExit()).code, 0);
  }),
);
