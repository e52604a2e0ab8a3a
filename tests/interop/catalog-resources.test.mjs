// Resources, resource templates, prompts, completion, subscriptions and
// logging proxied through the gateway, for two server-everything instances at
// once: "ev" (prefixed: URIs exposed as "ev+<uri>", prompts as "ev:<name>")
// and "plain" (prefix: false: URIs and prompt names unchanged). Driven by the
// official SDK client over Streamable HTTP; results compared with the same
// requests sent to server-everything directly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  EVERYTHING,
  Proc,
  StdioClient,
  connectHttp,
  openGetStream,
  requireBinaries,
  startGateway,
  withDiagnostics,
  withTimeout,
} from '../integration/harness.mjs';
import { Client, StreamableHTTPClientTransport, assertMcpError } from './common.mjs';

const everything = (name, extra = {}) => ({ name, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 20000, ...extra });
const DOCS = ['architecture.md', 'extension.md', 'features.md', 'how-it-works.md', 'instructions.md', 'startup.md', 'structure.md'];
const doc = (d) => `demo://resource/static/document/${d}`;

let gw;
let direct; // server-everything spoken to directly, for reference answers
const clients = [];

before(async () => {
  requireBinaries();
  gw = await startGateway({ listen: { page_size: 4 }, servers: [everything('ev'), everything('plain', { prefix: false })] });
  const proc = new Proc('everything-direct', process.execPath, [EVERYTHING, 'stdio']);
  direct = new StdioClient(proc);
  await direct.initialize({ protocolVersion: '2025-06-18' });
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

/**
 * SDK client over Streamable HTTP. Resolves once the SDK's GET stream is
 * open (seen through its fetch), so server notifications can reach it.
 */
async function sdkClient(url = gw.url) {
  let opened;
  const getOpen = new Promise((r) => {
    opened = r;
  });
  const trackingFetch = async (input, init) => {
    const res = await fetch(input, init);
    if ((init?.method || 'GET') === 'GET' && res.ok) opened();
    return res;
  };
  const client = new Client({ name: 'mcpgw-catalog-interop', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: trackingFetch }));
  clients.push(client);
  await withTimeout(getOpen, 10000, 'the SDK client GET stream to open');
  return client;
}

/** Drains a paginated SDK list call; returns {items, pages}. */
async function drain(call, key) {
  const items = [];
  let cursor;
  let pages = 0;
  do {
    const r = await call(cursor === undefined ? {} : { cursor });
    pages++;
    assert.ok(r[key].length <= 4, `page ${pages} of ${key} has ${r[key].length} entries (page_size 4)`);
    items.push(...r[key]);
    cursor = r.nextCursor;
    assert.ok(pages < 50, 'pagination does not end');
  } while (cursor !== undefined);
  return { items, pages };
}

test(
  'initialize announces listChanged for tools/resources/prompts, resources.subscribe, completions and logging',
  withDiagnostics(async () => {
    const client = await sdkClient();
    const caps = client.getServerCapabilities();
    assert.equal(caps.tools?.listChanged, true, JSON.stringify(caps));
    assert.equal(caps.resources?.listChanged, true, JSON.stringify(caps));
    assert.equal(caps.resources?.subscribe, true, JSON.stringify(caps));
    assert.equal(caps.prompts?.listChanged, true, JSON.stringify(caps));
    assert.ok(caps.completions, JSON.stringify(caps));
    assert.ok(caps.logging, JSON.stringify(caps));
    assert.deepEqual(await client.setLoggingLevel('debug'), {});
    // A bad level is -32602 (raw request: the SDK would refuse to send it).
    const raw = await connectHttp(gw.url);
    const bad = await raw.request('logging/setLevel', { level: 'loud' });
    assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
    assert.deepEqual(await raw.result('logging/setLevel', { level: 'emergency' }), {});
    await raw.close();
  }),
);

test(
  'resources/list, resources/templates/list and prompts/list: both servers, namespaced, paginated by listen.page_size',
  withDiagnostics(async () => {
    const client = await sdkClient();
    const ref = await direct.result('resources/list', {});
    const refByUri = Object.fromEntries(ref.resources.map((r) => [r.uri, r]));

    const resources = await drain((p) => client.listResources(p), 'resources');
    const uris = resources.items.map((r) => r.uri).sort();
    assert.deepEqual(uris, [...DOCS.map((d) => `ev+${doc(d)}`), ...DOCS.map(doc)].sort());
    assert.equal(resources.pages, Math.ceil(14 / 4));
    for (const r of resources.items) {
      const raw = r.uri.startsWith('ev+') ? r.uri.slice(3) : r.uri;
      // Everything but the URI as the upstream lists it.
      assert.deepEqual({ ...r, uri: raw }, refByUri[raw], `${r.uri} differs from the upstream's ${raw}`);
    }

    const refTemplates = (await direct.result('resources/templates/list', {})).resourceTemplates;
    const templates = await drain((p) => client.listResourceTemplates(p), 'resourceTemplates');
    assert.deepEqual(
      templates.items.map((t) => t.uriTemplate).sort(),
      [...refTemplates.map((t) => `ev+${t.uriTemplate}`), ...refTemplates.map((t) => t.uriTemplate)].sort(),
    );
    const evText = templates.items.find((t) => t.uriTemplate === 'ev+demo://resource/dynamic/text/{resourceId}');
    assert.deepEqual({ ...evText, uriTemplate: 'demo://resource/dynamic/text/{resourceId}' }, refTemplates.find((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'));

    const refPrompts = (await direct.result('prompts/list', {})).prompts;
    const prompts = await drain((p) => client.listPrompts(p), 'prompts');
    assert.equal(prompts.pages, 2);
    const byName = Object.fromEntries(prompts.items.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(byName).sort(), [...refPrompts.map((p) => `ev:${p.name}`), ...refPrompts.map((p) => p.name)].sort());
    for (const p of refPrompts) {
      assert.deepEqual(byName[`ev:${p.name}`], { ...p, name: `ev:${p.name}`, description: `[Proxied from ev] ${p.description}` });
      assert.deepEqual(byName[p.name], { ...p, description: `[Proxied from plain] ${p.description}` });
    }
  }),
);

test(
  'resources/read: static and template-built URIs of both servers; contents carry the exposed URI; unknown → -32002',
  withDiagnostics(async () => {
    const client = await sdkClient();
    for (const d of ['architecture.md', 'features.md']) {
      const refText = (await direct.result('resources/read', { uri: doc(d) })).contents[0].text;
      assert.ok(refText.length > 100);
      const viaPrefixed = await client.readResource({ uri: `ev+${doc(d)}` });
      assert.deepEqual(viaPrefixed.contents, [{ uri: `ev+${doc(d)}`, mimeType: 'text/markdown', text: refText }]);
      const viaPlain = await client.readResource({ uri: doc(d) });
      assert.deepEqual(viaPlain.contents, [{ uri: doc(d), mimeType: 'text/markdown', text: refText }]);
    }

    // Built from the exposed templates.
    const text = await client.readResource({ uri: 'ev+demo://resource/dynamic/text/7' });
    assert.equal(text.contents.length, 1);
    assert.equal(text.contents[0].uri, 'ev+demo://resource/dynamic/text/7');
    assert.match(text.contents[0].text, /^Resource 7: /);
    const blob = await client.readResource({ uri: 'ev+demo://resource/dynamic/blob/3' });
    assert.equal(blob.contents[0].uri, 'ev+demo://resource/dynamic/blob/3');
    assert.ok(blob.contents[0].blob.length > 0);
    const plain = await client.readResource({ uri: 'demo://resource/dynamic/text/12' });
    assert.equal(plain.contents[0].uri, 'demo://resource/dynamic/text/12');
    assert.match(plain.contents[0].text, /^Resource 12: /);

    // Unknown to the gateway: no such scheme, no such server.
    await assertMcpError(client.readResource({ uri: 'nope://nothing/here' }), -32002);
    await assertMcpError(client.readResource({ uri: 'zz+demo://resource/static/document/architecture.md' }), -32002);
    // Routed, but unknown upstream: the upstream's error, not a hang.
    await assert.rejects(client.readResource({ uri: 'ev+demo://resource/static/document/nope.md' }));
  }),
);

test(
  'prompts/get with arguments and completion/complete for prompt arguments and template variables, on both servers',
  withDiagnostics(async () => {
    const client = await sdkClient();
    const args = { city: 'Paris', state: 'Texas' };
    const ref = await direct.result('prompts/get', { name: 'args-prompt', arguments: args });
    assert.deepEqual(await client.getPrompt({ name: 'ev:args-prompt', arguments: args }), ref);
    assert.deepEqual(await client.getPrompt({ name: 'args-prompt', arguments: args }), ref);
    const promo = await client.getPrompt({ name: 'ev:completable-prompt', arguments: { department: 'Sales', name: 'Eve' } });
    assert.match(promo.messages[0].content.text, /Please promote Eve to the head of the Sales team/);
    await assertMcpError(client.getPrompt({ name: 'ev:no-such-prompt' }), -32602);

    const dep = await client.complete({ ref: { type: 'ref/prompt', name: 'ev:completable-prompt' }, argument: { name: 'department', value: 'S' } });
    assert.deepEqual(dep.completion.values.sort(), ['Sales', 'Support']);
    // The context travels too: the second argument's values depend on the first.
    const who = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Engineering' } },
    });
    assert.deepEqual(who.completion.values, ['Alice', 'Bob', 'Charlie']);
    const refDep = await direct.result('completion/complete', { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'M' } });
    assert.deepEqual(
      await client.complete({ ref: { type: 'ref/prompt', name: 'ev:completable-prompt' }, argument: { name: 'department', value: 'M' } }),
      refDep,
    );

    const tmpl = await client.complete({ ref: { type: 'ref/resource', uri: 'ev+demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '42' } });
    assert.deepEqual(tmpl.completion.values, ['42']);
    const tmplPlain = await client.complete({ ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: 'x' } });
    assert.deepEqual(tmplPlain.completion.values, []);
    await assertMcpError(client.complete({ ref: { type: 'ref/prompt', name: 'ev:no-such-prompt' }, argument: { name: 'a', value: '' } }), -32602);
  }),
);

test(
  'resources/subscribe and unsubscribe → {}; upstream resources/updated reaches the subscriber with the exposed URI',
  withDiagnostics(async () => {
    const client = await sdkClient();
    const updates = [];
    const waiters = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      for (const w of [...waiters]) w();
    });
    const waitUpdate = (uri) =>
      withTimeout(
        new Promise((resolve) => {
          const check = () => {
            if (updates.includes(uri)) {
              waiters.splice(waiters.indexOf(check), 1);
              resolve();
            }
          };
          waiters.push(check);
          check();
        }),
        10000,
        `notifications/resources/updated for ${uri} (got ${JSON.stringify(updates)})`,
      );

    assert.deepEqual(await client.subscribeResource({ uri: `ev+${doc('architecture.md')}` }), {});
    assert.deepEqual(await client.subscribeResource({ uri: doc('features.md') }), {});
    await assertMcpError(client.subscribeResource({ uri: 'nope://nothing' }), -32002);

    // server-everything sends an update for every subscribed URI at once when this is toggled on.
    await client.callTool({ name: 'ev:toggle-subscriber-updates', arguments: {} });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await waitUpdate(`ev+${doc('architecture.md')}`);
    await waitUpdate(doc('features.md'));
    assert.ok(!updates.includes(doc('architecture.md')), `an update leaked the upstream URI: ${JSON.stringify(updates)}`);
    await client.callTool({ name: 'ev:toggle-subscriber-updates', arguments: {} });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });

    assert.deepEqual(await client.unsubscribeResource({ uri: `ev+${doc('architecture.md')}` }), {});
    assert.deepEqual(await client.unsubscribeResource({ uri: doc('features.md') }), {});
  }),
);

test(
  'an upstream resources/list_changed (gzip-file-as-resource) reaches clients; the next list and read show the new resource',
  withDiagnostics(async () => {
    const client = await sdkClient();
    let changed = 0;
    let notify;
    const first = new Promise((r) => {
      notify = r;
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changed++;
      notify();
    });
    // A raw client with its own GET stream sees the same notification.
    const raw = await connectHttp(gw.url);
    const stream = await openGetStream(raw);
    assert.equal(stream.status, 200);

    const data = `data:text/plain;base64,${Buffer.from('hello through the gateway\n'.repeat(20)).toString('base64')}`;
    const r = await client.callTool({ name: 'ev:gzip-file-as-resource', arguments: { name: 'catalog-test.txt.gz', data, outputType: 'resourceLink' } });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    await withTimeout(first, 10000, 'notifications/resources/list_changed on the SDK client');
    await stream.waitFor((m) => m.method === 'notifications/resources/list_changed');
    assert.ok(changed >= 1);

    const { items } = await drain((p) => client.listResources(p), 'resources');
    const exposed = 'ev+demo://resource/session/catalog-test.txt.gz';
    assert.ok(items.some((i) => i.uri === exposed), `${exposed} not listed: ${items.map((i) => i.uri)}`);
    assert.ok(!items.some((i) => i.uri === 'demo://resource/session/catalog-test.txt.gz'), 'the plain server does not have it');
    const read = await client.readResource({ uri: exposed });
    assert.equal(read.contents[0].uri, exposed);
    assert.equal(read.contents[0].mimeType, 'application/gzip');
    assert.ok(read.contents[0].blob.length > 0);
    stream.close();
    await raw.close();
  }),
);
