// Naming (separator, description prefix, prefix: false) and pagination: the
// gateway drains a paginating upstream's tools/list, and paginates its own
// tools/list with listen.page_size.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BANK,
  TOOLBOX,
  bankStdio,
  connectHttp,
  directStdio,
  requireBinaries,
  startGateway,
  textOf,
  toolByName,
  toolboxStdio,
  withDiagnostics,
} from './harness.mjs';

const PAGED_ARGS = ['--tools', '30', '--page-size', '7'];
let bankTools;
let pagedTools; // toolbox --tools 30 --page-size 7, drained directly
let pagedPages;

before(async () => {
  requireBinaries();
  const bank = await directStdio(BANK);
  bankTools = (await bank.listAllTools()).tools;
  const paged = await directStdio(TOOLBOX, PAGED_ARGS);
  const drained = await paged.listAllTools();
  pagedTools = drained.tools;
  pagedPages = drained.pages.length;
});

test(
  'separator "__", a custom description_prefix and prefix: false on one server',
  withDiagnostics(async () => {
    const gw = await startGateway({
      naming: { separator: '__', description_prefix: '<via {server}> ' },
      servers: [bankStdio(), toolboxStdio({ prefix: false })],
    });
    const c = await connectHttp(gw.url);
    const { tools } = await c.listAllTools();
    const names = tools.map((t) => t.name);
    for (const t of bankTools) assert.ok(names.includes(`bank__${t.name}`), `bank__${t.name} missing from ${names}`);
    for (const n of ['echo', 'add', 'sleep', 'fail', 'meta', 'pid']) assert.ok(names.includes(n), `unprefixed ${n} missing from ${names}`);
    assert.ok(!names.some((n) => n.includes(':')), `a name still uses ":": ${names}`);
    assert.ok(!names.includes('toolbox__echo'));
    assert.equal(names.length, new Set(names).size);

    const pmt = toolByName(tools, 'bank__prepare_money_transfer');
    const ref = toolByName(bankTools, 'prepare_money_transfer');
    assert.equal(pmt.description, `<via bank> ${ref.description}`);
    assert.deepEqual(pmt.inputSchema, ref.inputSchema);
    assert.ok(toolByName(tools, 'echo').description.endsWith('Returns its text unchanged.'));

    const bal = await c.callTool('bank__get_account_balance', { accountId: 'acc_credit_001' });
    assert.deepEqual(bal.structuredContent, { accountId: 'acc_credit_001', balance: -432.1, currency: 'USD' });
    const echo = await c.callTool('echo', { text: 'no prefix' });
    assert.equal(textOf(echo), 'no prefix');
    const add = await c.callTool('add', { a: 40, b: 2 });
    assert.deepEqual(add.structuredContent, { sum: 42 });

    // The old-style names do not exist under this configuration.
    const wrong = await c.request('tools/call', { name: 'bank:list_accounts', arguments: {} });
    assert.equal(wrong.error?.code, -32602, JSON.stringify(wrong));
    await c.close();
  }),
);

test(
  'an upstream that paginates tools/list is drained; the gateway paginates with listen.page_size',
  withDiagnostics(async () => {
    // The direct drain really was paginated (7 per page), else this proves nothing.
    assert.equal(pagedTools.length, 40);
    assert.ok(pagedPages >= 6, `upstream gave ${pagedPages} pages`);

    const gw = await startGateway({
      listen: { page_size: 5 },
      servers: [bankStdio(), toolboxStdio({ args: PAGED_ARGS })],
    });
    const c = await connectHttp(gw.url);
    const expected = [...bankTools.map((t) => `bank:${t.name}`), ...pagedTools.map((t) => `toolbox:${t.name}`)].sort();
    for (let i = 0; i < 30; i++) assert.ok(expected.includes(`toolbox:gen_${i}`));

    const seen = [];
    let cursor;
    let pages = 0;
    do {
      const r = await c.result('tools/list', cursor === undefined ? {} : { cursor });
      pages++;
      assert.ok(Array.isArray(r.tools));
      assert.ok(r.tools.length <= 5, `page ${pages} has ${r.tools.length} tools`);
      if (r.nextCursor !== undefined) {
        assert.equal(typeof r.nextCursor, 'string');
        assert.equal(r.tools.length, 5, 'a non-final page is not full');
      }
      seen.push(...r.tools.map((t) => t.name));
      cursor = r.nextCursor;
      assert.ok(pages <= 50, 'pagination does not end');
    } while (cursor !== undefined);

    assert.equal(pages, Math.ceil(expected.length / 5));
    assert.equal(seen.length, new Set(seen).size, `duplicates across pages: ${seen}`);
    assert.deepEqual([...seen].sort(), expected);

    // Tools from the last upstream page route correctly.
    assert.equal(textOf(await c.callTool('toolbox:gen_29')), 'gen_29');
    assert.equal(textOf(await c.callTool('toolbox:gen_0')), 'gen_0');

    const bogus = await c.request('tools/list', { cursor: 'not-a-real-cursor' });
    assert.equal(bogus.result, undefined, JSON.stringify(bogus));
    assert.equal(bogus.error?.code, -32602, JSON.stringify(bogus));
    await c.close();
  }),
);
