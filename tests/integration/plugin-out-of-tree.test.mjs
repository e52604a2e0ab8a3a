// A third party can build a plugin against the installed SDK alone:
// `cmake --install` of the build tree puts <mcpgw/plugin.h>, plugin.hpp,
// json.hpp and the CMake package (mcpgwConfig.cmake) under a prefix; a
// project outside this tree with nothing but find_package(mcpgw) and
// mcpgw::plugin compiles the minimal plugin of docs/plugins.md (its hello.cpp and
// CMakeLists.txt blocks, word for word; the same example heads
// <mcpgw/plugin.hpp>), and the gateway loads it and serves its tool, which
// calls the bank upstream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertRan, docsExample, run } from './plugin-build.mjs';
import {
  BUILD,
  bankStdio,
  connectHttp,
  requireBinaries,
  startGateway,
  tempDir,
  textOf,
  withDiagnostics,
} from './harness.mjs';

/** The whole-plugin example of the header comment of <mcpgw/plugin.hpp>, uncommented as is. */
function documentedExample(headerText) {
  const lines = headerText.split('\n');
  const start = lines.findIndex((l) => /A whole plugin:\s*$/.test(l));
  assert.ok(start >= 0, 'plugin.hpp has no "A whole plugin:" example in its header comment');
  const code = [];
  for (const l of lines.slice(start + 1)) {
    if (l !== '//' && !l.startsWith('//   ')) break; // the prose after the example
    code.push(l === '//' ? '' : l.slice('//   '.length));
  }
  while (code.length && code[0] === '') code.shift();
  while (code.length && code.at(-1) === '') code.pop();
  return `${code.join('\n')}\n`;
}

/** lib or lib64 or lib/<multiarch>: wherever GNUInstallDirs put the package. */
function findPackageConfig(prefix) {
  const hits = [];
  const walk = (dir, depth) => {
    if (depth > 4 || !existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.name === 'mcpgwConfig.cmake' && path.basename(path.dirname(p)) === 'mcpgw' && path.basename(path.dirname(path.dirname(p))) === 'cmake') hits.push(p);
    }
  };
  for (const lib of readdirSync(prefix).filter((n) => /^lib/.test(n))) walk(path.join(prefix, lib), 0);
  return hits;
}

test(
  'the installed SDK builds the documented example out of tree, and the gateway serves it',
  { timeout: 180000 },
  withDiagnostics(async () => {
    requireBinaries();
    const dir = tempDir('mcpgw-sdk-');
    const prefix = path.join(dir, 'prefix');

    // 1. Install (no rebuild: the tree under test is installed as built).
    assertRan(await run('cmake', ['--install', BUILD, '--prefix', prefix]), 'cmake --install');
    for (const h of ['plugin.h', 'plugin.hpp', 'json.hpp'])
      assert.ok(existsSync(path.join(prefix, 'include', 'mcpgw', h)), `${prefix}/include/mcpgw/${h} was not installed`);
    const configs = findPackageConfig(prefix);
    assert.equal(configs.length, 1, `expected one <prefix>/lib*/cmake/mcpgw/mcpgwConfig.cmake, found: ${JSON.stringify(configs)}`);

    // 2. A project that knows only the installed package.
    const src = path.join(dir, 'hello');
    const bin = path.join(dir, 'hello-build');
    const example = docsExample('hello.cpp');
    const cmakeLists = docsExample('CMakeLists.txt');
    assert.equal(example, documentedExample(readFileSync(path.join(prefix, 'include', 'mcpgw', 'plugin.hpp'), 'utf8')),
      'the docs/plugins.md example and the one heading <mcpgw/plugin.hpp> differ');
    const lines = (example + cmakeLists).split('\n').filter((l) => l.trim() !== '').length;
    assert.ok(lines < 30, `the minimal plugin of docs/plugins.md has ${lines} lines`);
    assert.match(example, /^#include <mcpgw\/plugin\.hpp>$/m, example);
    assert.match(example, /MCPGW_PLUGIN\("hello", "1\.0\.0"\)/, example);
    assert.match(example, /"balance_in_words"/, example);
    mkdirSync(src);
    assert.match(cmakeLists, /^find_package\(mcpgw REQUIRED\)$/m, cmakeLists);
    writeFileSync(path.join(src, 'CMakeLists.txt'), cmakeLists);
    writeFileSync(path.join(src, 'hello.cpp'), example);

    const configure = await run('cmake', ['-S', src, '-B', bin, `-DCMAKE_PREFIX_PATH=${prefix}`]);
    assertRan(configure, `cmake configure of the out-of-tree plugin (hello.cpp:\n${example})`);
    assertRan(await run('cmake', ['--build', bin]), `cmake --build of the out-of-tree plugin (hello.cpp:\n${example})`);
    const lib = path.join(bin, 'libhello.so');
    assert.ok(existsSync(lib), `${lib} was not built: ${readdirSync(bin).join(', ')}`);

    // 3. The gateway loads it and its tool calls the bank.
    const gw = await startGateway({ servers: [bankStdio()], plugins: [{ path: lib, config: {} }] }, { label: 'mcpgw-hello', logLevel: 'info' });
    await gw.proc.waitForLine('stderr', /plugin hello 1\.0\.0 loaded from .*libhello\.so: 1 tools/, 5000);
    const c = await connectHttp(gw.url);
    const tools = (await c.listAllTools()).tools;
    const tool = tools.find((t) => t.name === 'balance_in_words');
    assert.ok(tool, tools.map((t) => t.name).join(','));
    assert.equal(tool.description, "Tells an account's balance in a sentence.");
    assert.deepEqual(tool.inputSchema, { type: 'object', properties: { accountId: { type: 'string' } } });

    // bank-server: acc_checking_001 (Primary Checking) holds USD 2,543.17.
    const bal = await c.callTool('bank:get_account_balance', { accountId: 'acc_checking_001' });
    assert.equal(bal.structuredContent.balance, 2543.17, JSON.stringify(bal));
    const r = await c.callTool('balance_in_words', { accountId: 'acc_checking_001' });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    assert.equal(textOf(r), 'You have 2543.17 USD.');

    // The example's error path: the bank's refusal comes back as isError.
    const missing = await c.callTool('balance_in_words', { accountId: 'acc_nope' });
    assert.equal(missing.isError, true, JSON.stringify(missing));
    assert.match(textOf(missing), /^the bank said: .*acc_nope/, JSON.stringify(missing));
    await c.close();

    const exit = await gw.proc.stop();
    assert.deepEqual(exit, { code: 0, signal: null, killed: false });
    assert.match(gw.proc.stderrText, /plugin hello unloaded/);
  }),
);
