// The Debian package: scripts/package makes mcpgw_<version>_amd64.deb from
// the build tree under test (no second build) and lintian passes it; the
// package is unpacked into a scratch root (dpkg -x), its own binary checks
// its own configuration (the example servers and plugins it ships, all
// connected), its systemd unit and maintainer scripts say what a service
// needs, and the documented example plugin builds against the headers and
// CMake package it installed, and loads.
import path from 'node:path';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILD, REPO, requireBinaries, tempDir, withDiagnostics } from './harness.mjs';
import { assertRan, docsExample, run } from './plugin-build.mjs';

test(
  'scripts/package: a lintian-clean .deb whose binary, configuration, unit and SDK work from a scratch root',
  { timeout: 300000 },
  withDiagnostics(async () => {
    requireBinaries();
    // The tree under test (MCPGW_BUILD_DIR), which scripts/package calls BUILD_DIR.
    const made = await run(path.join(REPO, 'scripts', 'package'), [], {
      env: { ...process.env, BUILD_DIR: BUILD },
      timeoutMs: 240000,
    });
    assertRan(made, 'scripts/package');
    const deb = made.stdout.trim().split('\n').at(-1);
    assert.match(path.basename(deb), /^mcpgw_\d+\.\d+\.\d+_amd64\.deb$/);
    assert.match(made.output, /lintian: no errors or warnings/, 'lintian ran and passed');

    // The control data.
    const info = await run('dpkg-deb', ['-f', deb]);
    assertRan(info, 'dpkg-deb -f');
    assert.match(info.output, /^Package: mcpgw$/m);
    assert.match(info.output, /^Architecture: amd64$/m);
    assert.match(info.output, /^Depends: .*\badduser\b/m);
    assert.match(info.output, /^Depends: .*\blibyaml-cpp/m, 'shared library dependencies are computed');
    const control = tempDir('mcpgw-deb-control-');
    assertRan(await run('dpkg-deb', ['-e', deb, control]), 'dpkg-deb -e');
    assert.equal(readFileSync(path.join(control, 'conffiles'), 'utf8').trim(), '/etc/mcpgw/gateway.yaml');
    assert.match(readFileSync(path.join(control, 'postinst'), 'utf8'), /adduser --system --group .* mcpgw/);

    // Into a scratch root.
    const root = tempDir('mcpgw-deb-root-');
    assertRan(await run('dpkg', ['-x', deb, root]), 'dpkg -x');
    for (const f of [
      'usr/bin/mcpgw',
      'usr/lib/mcpgw/mcpgw-plugin-host',
      'usr/include/mcpgw/plugin.h',
      'usr/include/mcpgw/plugin.hpp',
      'usr/include/mcpgw/json.hpp',
      'usr/lib/cmake/mcpgw/mcpgwConfig.cmake',
      'usr/lib/mcpgw/plugins/libbanking_composites.so',
      'usr/lib/mcpgw/plugins/libdeploy_flow.so',
      'usr/lib/mcpgw/examples/bank-server',
      'usr/share/man/man1/mcpgw.1.gz',
      'usr/share/doc/mcpgw/copyright',
      'usr/share/doc/mcpgw/configuration.md.gz',
      'etc/mcpgw/gateway.yaml',
    ])
      assert.ok(existsSync(path.join(root, f)), `${f} is not in the package`);
    const unit = readFileSync(path.join(root, 'lib/systemd/system/mcpgw.service'), 'utf8');
    assert.match(unit, /^User=mcpgw$/m);
    assert.match(unit, /^ExecStart=\/usr\/bin\/mcpgw --config \/etc\/mcpgw\/gateway\.yaml/m);
    assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
    for (const hardening of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes', 'CapabilityBoundingSet=$'])
      assert.match(unit, new RegExp(`^${hardening}`, 'm'), hardening);
    assert.match(unit, /^Environment=GLIBC_TUNABLES=glibc\.malloc\.tcache_count=32$/m);
    // The service's environment, for the packaged binary's run below.
    const unitEnv = Object.fromEntries(
      [...unit.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]),
    );

    // The packaged binary checks the packaged configuration: every example
    // server it ships connects, both plugins load.
    const mcpgw = path.join(root, 'usr/bin/mcpgw');
    const check = await run(mcpgw, ['check', '--config', path.join(root, 'etc/mcpgw/gateway.yaml'), '--json'], {
      env: { ...process.env, ...unitEnv },
    });
    assertRan(check, 'mcpgw check of the packaged configuration');
    const report = JSON.parse(check.stdout);
    assert.equal(report.valid, true, check.output);
    assert.deepEqual(report.errors, []);
    const names = report.tools.map((t) => t.name);
    for (const t of ['bank:list_accounts', 'rates:get_exchange_rates', 'toolbox:echo', 'account_overview', 'deploy'])
      assert.ok(names.includes(t), `${t} missing from ${names.join(', ')}`);

    // The documented plugin builds against the packaged SDK alone…
    const dir = tempDir('mcpgw-deb-plugin-');
    const src = path.join(dir, 'hello');
    mkdirSync(src);
    writeFileSync(path.join(src, 'CMakeLists.txt'), docsExample('CMakeLists.txt'));
    writeFileSync(path.join(src, 'hello.cpp'), docsExample('hello.cpp'));
    const out = path.join(dir, 'out');
    assertRan(await run('cmake', ['-S', src, '-B', out, `-DCMAKE_PREFIX_PATH=${path.join(root, 'usr')}`]), 'cmake configure against the package');
    assertRan(await run('cmake', ['--build', out]), 'cmake --build against the package');
    const lib = path.join(out, 'libhello.so');
    assert.ok(existsSync(lib));
    // …and the packaged binary loads it beside the packaged bank server.
    const cfg = path.join(dir, 'gateway.yaml');
    writeFileSync(
      cfg,
      `servers:\n  - {name: bank, command: ${path.join(root, 'usr/lib/mcpgw/examples/bank-server')}}\nplugins:\n  - {path: ${lib}}\n`,
    );
    const loaded = await run(mcpgw, ['check', '--config', cfg, '--json']);
    assertRan(loaded, 'mcpgw check with the plugin built against the package');
    assert.ok(JSON.parse(loaded.stdout).tools.some((t) => t.name === 'balance_in_words'), loaded.output);
  }),
);
