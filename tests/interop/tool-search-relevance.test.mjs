// Tool search quality: the relevance set of fixtures/search-relevance.json
// (30 user-style queries over the example servers and server-everything,
// each with the tool that should come first) through search_tools of a
// `discovery: search` mode. Prints top-1 and top-3 and asserts top-1 >= 80%
// and top-3 >= 95%.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BANK, BUILD, EVERYTHING, REPO, TOOLBOX, connectHttp, requireBinaries, startGateway, withDiagnostics } from '../integration/harness.mjs';

const RATES = path.join(BUILD, 'examples', 'rates-server');
const SET = JSON.parse(readFileSync(path.join(REPO, 'tests', 'interop', 'fixtures', 'search-relevance.json'), 'utf8'));
let gw;

before(async () => {
  requireBinaries(BANK, TOOLBOX, RATES);
  gw = await startGateway({
    welcome: { strategy: 'none' },
    discovery: 'search',
    servers: [
      { name: 'bank', transport: 'stdio', command: BANK },
      { name: 'rates', transport: 'stdio', command: RATES },
      { name: 'toolbox', transport: 'stdio', command: TOOLBOX },
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 },
    ],
  });
});

test(
  'relevance set: top-1 >= 80%, top-3 >= 95%',
  withDiagnostics(async () => {
    assert.equal(SET.queries.length, 30);
    const c = await connectHttp(gw.url, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    // Every expected tool exists (a renamed tool must not pass as a miss).
    const overview = await c.callTool('search_tools', { query: '' });
    const servers = Object.fromEntries(overview.structuredContent.servers.map((s) => [s.name, s.tools]));
    assert.deepEqual(Object.keys(servers), ['bank', 'rates', 'toolbox', 'everything']);
    let top1 = 0;
    let top3 = 0;
    const misses = [];
    for (const { query, expect } of SET.queries) {
      const exact = await c.callTool('search_tools', { query: expect });
      assert.equal(exact.structuredContent.tools[0]?.name, expect, `${expect} is not in the catalog`);
      const r = await c.callTool('search_tools', { query, limit: 3 });
      const got = r.structuredContent.tools.map((t) => t.name);
      if (got[0] === expect) top1++;
      if (got.includes(expect)) top3++;
      else misses.push(`"${query}": expected ${expect}, got ${got.join(', ') || 'nothing'}`);
      if (got[0] !== expect && got.includes(expect)) misses.push(`"${query}": ${expect} ranked ${got.indexOf(expect) + 1} after ${got[0]}`);
    }
    const n = SET.queries.length;
    const pct = (x) => `${((100 * x) / n).toFixed(1)}%`;
    console.log(`tool search relevance over ${n} queries (${Object.values(servers).reduce((a, b) => a + b, 0)} tools): top-1 ${top1}/${n} = ${pct(top1)}, top-3 ${top3}/${n} = ${pct(top3)}`);
    for (const m of misses) console.log(`  ${m}`);
    assert.ok(top1 / n >= 0.8, `top-1 ${pct(top1)} < 80%:\n${misses.join('\n')}`);
    assert.ok(top3 / n >= 0.95, `top-3 ${pct(top3)} < 95%:\n${misses.join('\n')}`);
  }),
);
