// The plugin tests again with every plugin loaded in process (isolation:
// none), where they ran in host processes (the default): the example
// plugins, the ABI's test plugins, client input rounds, the loader's
// refusals and the out-of-tree SDK build behave the same under both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { run } from './plugin-build.mjs';
import { REPO, requireBinaries } from './harness.mjs';

const FILES = ['plugins.test.mjs', 'plugin-input.test.mjs', 'plugin-loading.test.mjs', 'plugin-out-of-tree.test.mjs'];

for (const file of FILES) {
  test(`${file} under isolation: none`, { timeout: 600000 }, async () => {
    requireBinaries();
    // A runner of its own, not a child reporting to this one (NODE_TEST_CONTEXT).
    const env = { ...process.env, MCPGW_PLUGIN_ISOLATION: 'none' };
    delete env.NODE_TEST_CONTEXT;
    const r = await run(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=tap', path.join(REPO, 'tests', 'integration', file)], {
      env,
      timeoutMs: 590000,
    });
    assert.equal(r.code, 0, `${file} under isolation: none failed:\n${r.output.slice(-20000)}`);
    assert.match(r.stdout, /^# fail 0$/m);
    assert.match(r.stdout, /^# pass [1-9]/m);
  });
}
