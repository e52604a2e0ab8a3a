// Skills (SEP-2640) through mcpgw: two copies of examples/skills-server,
// which serve the same skill URIs, behind one gateway. skills/list merges
// them (paged by the gateway, every entry whole on one page), URIs
// namespaced like ui:// (skill://<server>/<skill-path>/...), frontmatter,
// digests and sizes unchanged; skills/get, resources/read and
// resources/directory/read reach the server a URI names; the extension is
// declared only when an upstream declares it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { BUILD, HttpClient, TOOLBOX, directStdio, startGateway, withDiagnostics } from './harness.mjs';

const SKILLS = path.join(BUILD, 'examples', 'skills-server');
const EXT = 'io.modelcontextprotocol/skills';

describe('Skills through mcpgw', { timeout: 60000 }, () => {
  let gw, client, direct;

  before(async () => {
    gw = await startGateway({
      listen: { page_size: 2 },
      servers: [
        { name: 'sk1', command: SKILLS },
        { name: 'sk2', command: SKILLS, args: ['--era', '2026'] },
      ],
    });
    client = new HttpClient(gw.url);
    await client.initialize({ protocolVersion: '2025-11-25' });
    direct = await directStdio(SKILLS);
  });

  after(async () => {
    await client?.close();
    await direct?.proc?.stop();
    await gw?.proc.stop();
  });

  async function listAll(c = client) {
    const pages = [];
    let cursor;
    do {
      const r = await c.result('skills/list', cursor ? { cursor } : {});
      pages.push(r.skills);
      cursor = r.nextCursor;
    } while (cursor);
    return pages;
  }

  test(
    'the extension is declared, with directoryRead, because an upstream declares it',
    withDiagnostics(async () => {
      assert.deepEqual(client.initResult.capabilities.extensions[EXT], { directoryRead: true });
      const plain = await startGateway({ servers: [{ name: 'toolbox', command: TOOLBOX }] });
      const c = new HttpClient(plain.url);
      const init = await c.initialize({ protocolVersion: '2025-11-25' });
      assert.equal(init.capabilities.extensions, undefined);
      await c.close();
      await plain.proc.stop();
    }),
  );

  test(
    'skills/list: both servers, namespaced, paged by the gateway, entries whole, digests and sizes as served',
    withDiagnostics(async () => {
      const pages = await listAll();
      assert.ok(pages.length >= 3, `paged: ${pages.length} pages`);
      assert.ok(pages.every((p) => p.length <= 2));
      const entries = pages.flat();
      const uris = entries.map((e) => e.uri);
      assert.deepEqual(uris, [
        'skill://sk1/pdf-processing/SKILL.md',
        'skill://sk1/git-workflow/SKILL.md',
        'skill://sk1/acme/billing/refunds/SKILL.md',
        'skill://sk2/pdf-processing/SKILL.md',
        'skill://sk2/git-workflow/SKILL.md',
        'skill://sk2/acme/billing/refunds/SKILL.md',
      ]);
      const own = [];
      let cursor;
      do {
        const r = await direct.request('skills/list', cursor ? { cursor } : {});
        own.push(...r.result.skills);
        cursor = r.result.nextCursor;
      } while (cursor);
      for (const [i, e] of entries.entries()) {
        const server = e.uri.startsWith('skill://sk1/') ? 'sk1' : 'sk2';
        const o = own[i % own.length];
        assert.deepEqual(e.frontmatter, o.frontmatter);
        assert.deepEqual(
          e.resources,
          o.resources.map((r) => ({ ...r, uri: r.uri.replace('skill://', `skill://${server}/`) })),
        );
      }
    }),
  );

  test(
    'skills/get and resources/read go to the server the URI names; the content matches its digest and size',
    withDiagnostics(async () => {
      const got = await client.result('skills/get', { uri: 'skill://sk2/pdf-processing/SKILL.md' });
      assert.equal(got.skill.uri, 'skill://sk2/pdf-processing/SKILL.md');
      const forms = got.skill.resources.find((r) => r.uri.endsWith('/references/FORMS.md'));
      assert.equal(forms.uri, 'skill://sk2/pdf-processing/references/FORMS.md');
      const read = await client.result('resources/read', { uri: forms.uri });
      assert.equal(read.contents[0].uri, forms.uri);
      const bytes = Buffer.from(read.contents[0].text, 'utf8');
      assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, forms.digest);
      assert.equal(bytes.length, forms.size);
      const unknown = await client.request('skills/get', { uri: 'skill://sk1/no-such-skill/SKILL.md' });
      assert.equal(unknown.error.code, -32602);
      const nowhere = await client.request('skills/get', { uri: 'skill://nowhere/x/SKILL.md' });
      assert.equal(nowhere.error.code, -32602);
    }),
  );

  test(
    'resources/directory/read: children of a directory, namespaced; a file is -32602',
    withDiagnostics(async () => {
      const dir = await client.result('resources/directory/read', { uri: 'skill://sk1/pdf-processing/templates' });
      assert.deepEqual(
        dir.resources.map((r) => [r.uri, r.mimeType]),
        [
          ['skill://sk1/pdf-processing/templates/invoice.md', 'text/markdown'],
          ['skill://sk1/pdf-processing/templates/regional', 'inode/directory'],
        ],
      );
      const file = await client.request('resources/directory/read', { uri: 'skill://sk1/pdf-processing/SKILL.md' });
      assert.equal(file.error.code, -32602);
    }),
  );
});
