// MCP Apps and resource references through mcpgw, without a browser: what
// the wire carries. Two copies of the npm example app server (alpha over
// stdio, beta over Streamable HTTP behind a tap) and two copies of
// server-everything (ev1, ev2) that mint the same resource URIs.
//
// - ui:// keeps its scheme (ui://<server>/<rest>); tools' _meta.ui.resourceUri
//   and _meta["ui/resourceUri"] name the exposed URI; resources/read serves
//   the view with the view script first in <head>, its contents under the
//   exposed URI, and refuses an unknown server or an ambiguous raw URI
//   precisely;
// - a view's bare-name call: tagged with its server (what the script adds),
//   it reaches that server, in a session and statelessly; untagged, the one
//   visible server that has the name, or -32602 naming the candidates; a
//   view reading another server's resource is -32602; the tag never
//   reaches the upstream;
// - resource_link and embedded resources in results, prompt messages and
//   completion refs route back to the server that minted them;
// - extensions: the gateway declares ui when its upstreams offer views,
//   declares extensions to upstreams (shared connections: the ones it passes
//   through; per-client connections: the client's own).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import {
  EVERYTHING,
  closedPort,
  HttpClient,
  Proc,
  REPO,
  pollUntil,
  readJsonLines,
  startGateway,
  startTap,
  tempDir,
  withDiagnostics,
} from '../integration/harness.mjs';
import { sresult, srpc } from '../integration/stateless.mjs';

const NODE = process.execPath;
const BASIC = path.join(REPO, 'node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js');
const UI = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };

function dataUri(text) {
  return `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
}

describe('MCP Apps and resource references through mcpgw', { timeout: 120000 }, () => {
  let gw, beta, tap, dir, audit, client;

  before(async () => {
    dir = tempDir('mcpgw-apps-routing-');
    const port = await closedPort();
    beta = new Proc('beta (basic app over HTTP)', NODE, [BASIC], { env: { PORT: String(port) } });
    await beta.waitForLine('stdout', /listening on/);
    tap = await startTap(`http://127.0.0.1:${port}/mcp`);
    audit = path.join(dir, 'audit.jsonl');
    gw = await startGateway(
      {
        audit: { path: audit, arguments: 'none' },
        modes: { noBeta: { exclude_tools: ['beta:*'] } },
        servers: [
          { name: 'alpha', transport: 'stdio', command: NODE, args: [BASIC, '--stdio'] },
          { name: 'beta', transport: 'http', url: tap.url, session: 'per_client' },
          { name: 'ev1', transport: 'stdio', command: NODE, args: [EVERYTHING, 'stdio'] },
          { name: 'ev2', transport: 'stdio', command: NODE, args: [EVERYTHING, 'stdio'] },
        ],
      },
      { dir },
    );
    client = new HttpClient(gw.url);
    await client.initialize({ protocolVersion: '2025-11-25', capabilities: { extensions: UI } });
  });

  after(async () => {
    await client?.close();
    await gw?.proc.stop();
    await beta?.stop();
  });

  const auditedCalls = () => readJsonLines(audit).filter((l) => l.event === 'call');

  test(
    'ui:// keeps its scheme: tools, resources/list and the read view name ui://<server>/<rest>',
    withDiagnostics(async () => {
      const tools = await client.listAllTools();
      const a = tools.tools.find((t) => t.name === 'alpha:get-time');
      assert.equal(a._meta.ui.resourceUri, 'ui://alpha/get-time/mcp-app.html');
      assert.equal(a._meta['ui/resourceUri'], 'ui://alpha/get-time/mcp-app.html');
      const listed = (await client.result('resources/list', {})).resources.map((r) => r.uri);
      assert.ok(listed.includes('ui://alpha/get-time/mcp-app.html') && listed.includes('ui://beta/get-time/mcp-app.html'));
      assert.ok(!listed.some((u) => u.startsWith('alpha+ui') || u.startsWith('beta+ui')));
      const read = await client.result('resources/read', { uri: 'ui://beta/get-time/mcp-app.html' });
      const [c] = read.contents;
      assert.equal(c.uri, 'ui://beta/get-time/mcp-app.html');
      assert.equal(c.mimeType, 'text/html;profile=mcp-app');
      const head = c.text.slice(c.text.search(/<head>/i) + 6, c.text.search(/<head>/i) + 200);
      assert.ok(head.startsWith('<script>/* mcpgw: names this view'), head);
      assert.ok(c.text.includes('var S="beta"'));
      // The rest of the view is the server's own.
      const direct = (await tap.waitFor((m) => m.method === 'resources/read')).params;
      assert.equal(direct.uri, 'ui://get-time/mcp-app.html');
    }),
  );

  test(
    'precise errors: a ui:// URI of an unknown server, a raw URI two servers list',
    withDiagnostics(async () => {
      const unknown = await client.request('resources/read', { uri: 'ui://gamma/get-time/mcp-app.html' });
      assert.match(unknown.error.message, /no server is named "gamma"; a server's ui:\/\/ resources are exposed as ui:\/\/<server>\/<path>/);
      const raw = await client.request('resources/read', { uri: 'ui://get-time/mcp-app.html' });
      assert.match(raw.error.message, /ambiguous.*ui:\/\/alpha\/get-time\/mcp-app.html, ui:\/\/beta\/get-time\/mcp-app.html/);
    }),
  );

  test(
    "a view's bare-name call: tagged, its server; untagged and ambiguous, -32602 naming the candidates",
    withDiagnostics(async () => {
      const ambiguous = await client.request('tools/call', { name: 'get-time', arguments: {} });
      assert.equal(ambiguous.error.code, -32602);
      assert.match(ambiguous.error.message, /get-time is ambiguous: it is alpha:get-time, beta:get-time/);
      assert.ok(!auditedCalls().some((l) => l.tool === 'get-time'), 'the ambiguous call ran nowhere');
      // A tag that names no server (or is not a string) is no tag.
      for (const tag of ['gamma', 7, { server: 'alpha' }]) {
        const r = await client.request('tools/call', { name: 'get-time', arguments: {}, _meta: { 'mcpgw/server': tag } });
        assert.match(r.error.message, /get-time is ambiguous/, JSON.stringify(tag));
      }
      for (const server of ['beta', 'alpha']) {
        const mark = auditedCalls().length;
        const res = await client.result('tools/call', { name: 'get-time', arguments: {}, _meta: { 'mcpgw/server': server } });
        assert.match(res.structuredContent?.time ?? '', /^\d{4}-/, JSON.stringify(res));
        await pollUntil(() => auditedCalls().length > mark, { what: 'the call audited' });
        const last = auditedCalls().at(-1);
        assert.equal(last.server, server);
        assert.equal(last.tool, `${server}:get-time`, 'audited as the exposed tool: a bare name is an alias');
      }
      // The tag is the gateway's: the upstream never sees it.
      const upstreamCall = await tap.waitFor((m) => m.method === 'tools/call');
      assert.equal(upstreamCall.params._meta?.['mcpgw/server'], undefined);
    }),
  );

  test(
    'a bare name one visible server has reaches it untagged; the same for a stateless 2026-07-28 client, tagged',
    withDiagnostics(async () => {
      const echo = await client.request('tools/call', { name: 'echo', arguments: { message: 'x' } });
      assert.match(echo.error.message, /echo is ambiguous: it is ev1:echo, ev2:echo/);
      let mark = auditedCalls().length;
      const sum = await client.request('tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 }, _meta: { 'mcpgw/server': 'ev2' } });
      assert.equal(sum.result.content[0].text.includes('3'), true, JSON.stringify(sum));
      await pollUntil(() => auditedCalls().length > mark, { what: 'the call audited' });
      assert.equal(auditedCalls().at(-1).server, 'ev2');
      mark = auditedCalls().length;
      const res = await sresult(gw.url, 'tools/call', { name: 'get-time', arguments: {}, _meta: { 'mcpgw/server': 'alpha' } });
      assert.match(res.structuredContent.time, /^\d{4}-/);
      await pollUntil(() => auditedCalls().length > mark, { what: 'the call audited' });
      assert.equal(auditedCalls().at(-1).server, 'alpha');
      const refused = await srpc(gw.url, 'tools/call', { name: 'get-time', arguments: {} });
      assert.equal(refused.message.error.code, -32602);
      // In a mode where alpha alone shows get-time, the bare name is alpha's.
      mark = auditedCalls().length;
      const unique = await sresult(`${gw.url}/noBeta`, 'tools/call', { name: 'get-time', arguments: {} });
      assert.match(unique.structuredContent.time, /^\d{4}-/);
      await pollUntil(() => auditedCalls().length > mark, { what: 'the call audited' });
      assert.deepEqual([auditedCalls().at(-1).server, auditedCalls().at(-1).mode], ['alpha', 'noBeta']);
      // ... and a view of beta is refused there like any call of a hidden tool.
      const hidden = await srpc(`${gw.url}/noBeta`, 'tools/call', { name: 'get-time', arguments: {}, _meta: { 'mcpgw/server': 'beta' } });
      assert.match(hidden.message.error.message, /Unknown tool: get-time/);
    }),
  );

  test(
    "a view reads its own server's resources by their own URIs, never another server's",
    withDiagnostics(async () => {
      const own = await client.result('resources/read', { uri: 'ui://get-time/mcp-app.html', _meta: { 'mcpgw/server': 'alpha' } });
      assert.equal(own.contents[0].uri, 'ui://alpha/get-time/mcp-app.html');
      const other = await client.request('resources/read', { uri: 'ui://beta/get-time/mcp-app.html', _meta: { 'mcpgw/server': 'alpha' } });
      assert.equal(other.error.code, -32602);
      assert.match(other.error.message, /a view of server alpha reads only alpha's resources; ui:\/\/beta\/get-time\/mcp-app.html is server beta's/);
    }),
  );

  test(
    'resource_link and embedded resources in results route back to the server that minted them',
    withDiagnostics(async () => {
      for (const [server, text] of [['ev1', 'one'], ['ev2', 'two']]) {
        const link = await client.callTool(`${server}:gzip-file-as-resource`, { name: 'same.gz', data: dataUri(`from ${text}`) });
        const item = link.content.find((c) => c.type === 'resource_link');
        assert.equal(item.uri, `${server}+demo://resource/session/same.gz`);
        const embedded = await client.callTool(`${server}:gzip-file-as-resource`, {
          name: 'same.gz',
          data: dataUri(`from ${text}`),
          outputType: 'resource',
        });
        assert.equal(embedded.content.find((c) => c.type === 'resource').resource.uri, `${server}+demo://resource/session/same.gz`);
      }
      for (const [server, text] of [['ev1', 'one'], ['ev2', 'two']]) {
        const read = await client.result('resources/read', { uri: `${server}+demo://resource/session/same.gz` });
        assert.equal(gunzipSync(Buffer.from(read.contents[0].blob, 'base64')).toString(), `from ${text}`);
      }
    }),
  );

  test(
    'prompt messages with embedded resources and completion refs carry exposed URIs',
    withDiagnostics(async () => {
      const p = await client.result('prompts/get', { name: 'ev2:resource-prompt', arguments: { resourceType: 'Text', resourceId: '2' } });
      const embedded = p.messages.map((m) => m.content).find((c) => c.type === 'resource');
      assert.match(embedded.resource.uri, /^ev2\+demo:\/\/resource\/dynamic\/text\/2$/);
      const templates = (await client.result('resources/templates/list', {})).resourceTemplates;
      const t = templates.find((x) => x.uriTemplate.startsWith('ev1+'));
      const done = await client.result('completion/complete', {
        ref: { type: 'ref/resource', uri: t.uriTemplate },
        argument: { name: 'resourceId', value: '1' },
      });
      assert.ok(Array.isArray(done.completion.values));
    }),
  );

  test(
    'extensions: declared to clients, to shared connections, and mirrored on per-client ones',
    withDiagnostics(async () => {
      assert.deepEqual(client.initResult.capabilities.extensions, UI);
      assert.equal(client.initResult.capabilities.extensions['io.modelcontextprotocol/skills'], undefined);
      const shared = await tap.waitFor((m) => m.method === 'initialize' || m.method === 'server/discover');
      const caps = shared.method === 'initialize' ? shared.params.capabilities : shared.params._meta['io.modelcontextprotocol/clientCapabilities'];
      assert.deepEqual(caps.extensions['io.modelcontextprotocol/ui'], UI['io.modelcontextprotocol/ui']);
      // beta is per_client: this client's own connection declares what it
      // declared (exactly, where the shared one adds skills).
      await client.result('tools/call', { name: 'beta:get-time', arguments: {} });
      const own = tap.seen.filter((m) => m.method === 'initialize');
      assert.ok(own.some((m) => JSON.stringify(m.params.capabilities.extensions) === JSON.stringify(UI)), 'a per-client initialize');
      const plain = new HttpClient(gw.url);
      await plain.initialize({ protocolVersion: '2025-11-25', capabilities: {} });
      const mark = tap.seen.length;
      await plain.result('tools/call', { name: 'beta:get-time', arguments: {} });
      const theirs = tap.seen.slice(mark).find((m) => m.method === 'initialize');
      assert.equal(theirs.params.capabilities.extensions, undefined);
      await plain.close();
    }),
  );
});
