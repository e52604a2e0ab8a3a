// `mcpgw check --config FILE [--json]`: validates, connects every upstream and
// prints the final catalog (NAME, SERVER, SLICES, MODES, WELCOME; JSON: tools[]
// with name, server, upstream_name, slices, modes, welcome; errors[];
// warnings[]; valid), exit 0 when valid, 1 otherwise.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MCPGW, Proc, bankStdio, requireBinaries, tempDir, toolboxStdio, withDiagnostics, writeConfig } from './harness.mjs';

before(() => requireBinaries());

const CONFIG = {
  filters: { exclude_tools: ['toolbox:big'] },
  modes: {
    readonly: { description: 'Read-only tools', include_slices: ['read'] },
    money: { description: 'Money moves', include_slices: ['money'] },
    tb: { description: 'The toolbox', include_tools: ['toolbox:*'] },
  },
  default_mode: 'readonly',
  servers: [
    bankStdio({ slices: { money: ['prepare_*'], read: ['get_*', 'list_*'] } }),
    toolboxStdio({ slices: { read: ['echo'], write: ['echo', 'add'] } }),
  ],
};

async function runCheck(config, json) {
  const file = typeof config === 'string' ? config : writeConfig(tempDir(), config);
  const proc = new Proc(json ? 'mcpgw-check-json' : 'mcpgw-check', MCPGW, ['check', '--config', file, ...(json ? ['--json'] : [])]);
  const exit = await proc.waitExit(30000);
  return { exit, proc, file, out: proc.stdoutText };
}

/** Parses the tools table: rows of {NAME, SERVER, SLICES, MODES, WELCOME} by column offsets of the header. */
function parseTable(out) {
  const lines = out.split('\n');
  const h = lines.findIndex((l) => /^\s*NAME\s+SERVER\s+SLICES\s+MODES\s+WELCOME\s*$/.test(l));
  assert.ok(h >= 0, `no NAME SERVER SLICES MODES WELCOME header in:\n${out}`);
  const header = lines[h];
  const cols = ['NAME', 'SERVER', 'SLICES', 'MODES', 'WELCOME'].map((c) => header.indexOf(c));
  const rows = [];
  for (let i = h + 1; i < lines.length && lines[i].trim() !== ''; i++) {
    const l = lines[i];
    const cell = (k) => l.slice(cols[k], k + 1 < cols.length ? cols[k + 1] : undefined).trim();
    rows.push({ NAME: cell(0), SERVER: cell(1), SLICES: cell(2), MODES: cell(3), WELCOME: cell(4) });
  }
  return rows;
}

test(
  'check prints the catalog as a table with slices, modes and the welcome tool; exit 0',
  withDiagnostics(async () => {
    const { exit, proc, out } = await runCheck(CONFIG, false);
    assert.equal(exit.code, 0, proc.diagnostics());
    assert.doesNotMatch(out, /listening on/);
    const rows = parseTable(out);
    const by = Object.fromEntries(rows.map((r) => [r.NAME, r]));
    assert.equal(rows.length, 14, out); // 5 bank + 10 toolbox - toolbox:big
    assert.equal(by['toolbox:big'], undefined, 'a filtered-out tool is in the catalog');

    const split = (s) => (s === '-' || s === '' ? [] : s.split(/[,\s]+/).filter(Boolean).sort());
    const expect = {
      'bank:welcome_customer': ['bank', ['read'], ['readonly'], true],
      'bank:list_accounts': ['bank', ['read'], ['readonly'], false],
      'bank:get_account_balance': ['bank', ['read'], ['readonly'], false],
      'bank:prepare_money_transfer': ['bank', ['money'], ['money'], false],
      'bank:request_agent_handoff': ['bank', ['other'], [], false],
      'toolbox:echo': ['toolbox', ['read', 'write'], ['readonly', 'tb'], false],
      'toolbox:add': ['toolbox', ['write'], ['tb'], false],
      'toolbox:pid': ['toolbox', ['read'], ['readonly', 'tb'], false],
      'toolbox:crash': ['toolbox', ['other'], ['tb'], false],
    };
    for (const [name, [server, slices, modes, welcome]] of Object.entries(expect)) {
      const r = by[name];
      assert.ok(r, `${name} missing from the table:\n${out}`);
      assert.equal(r.SERVER, server, JSON.stringify(r));
      assert.deepEqual(split(r.SLICES), slices, JSON.stringify(r));
      // "all" may or may not be spelled out; the configured modes must be exact.
      assert.deepEqual(split(r.MODES).filter((m) => m !== 'all'), modes, JSON.stringify(r));
      if (welcome) assert.match(r.WELCOME, /^(yes|true|✓|\*|x)$/i, JSON.stringify(r));
      else assert.equal(r.WELCOME, '', JSON.stringify(r));
    }
    assert.match(out, /default mode readonly/);
    // ":" names: the naming warning (once per kind, not per tool), with its fix.
    const warnings = out.split('\n').filter((l) => /naming\.separator/.test(l));
    assert.ok(warnings.length >= 1 && warnings.length <= 2, warnings.join('\n'));
    assert.equal(new Set(warnings).size, warnings.length);
    assert.ok(warnings.some((l) => l.includes('naming.separator: "__"')), warnings.join('\n'));
    assert.match(out, /^valid$/m);
  }),
);

test(
  'check --json: tools[] with name, server, upstream_name, slices, modes, welcome; errors, warnings, valid',
  withDiagnostics(async () => {
    const { exit, proc, out } = await runCheck(CONFIG, true);
    assert.equal(exit.code, 0, proc.diagnostics());
    const report = JSON.parse(out);
    assert.equal(report.valid, true);
    assert.deepEqual(report.errors, []);
    assert.ok(Array.isArray(report.warnings) && report.warnings.some((w) => w.includes('naming.separator: "__"')), JSON.stringify(report.warnings));
    assert.equal(report.tools.length, 14);
    const by = Object.fromEntries(report.tools.map((t) => [t.name, t]));
    for (const t of report.tools) {
      for (const k of ['name', 'server', 'upstream_name', 'slices', 'modes', 'welcome']) assert.ok(k in t, `${k} missing in ${JSON.stringify(t)}`);
      assert.equal(`${t.server}:${t.upstream_name}`, t.name);
    }
    const modes = (t) => t.modes.filter((m) => m !== 'all').sort();
    assert.deepEqual(by['bank:welcome_customer'].slices, ['read']);
    assert.equal(by['bank:welcome_customer'].welcome, true);
    assert.deepEqual(modes(by['bank:welcome_customer']), ['readonly']);
    assert.deepEqual(by['bank:prepare_money_transfer'].slices, ['money']);
    assert.deepEqual(modes(by['bank:prepare_money_transfer']), ['money']);
    assert.deepEqual([...by['toolbox:echo'].slices].sort(), ['read', 'write']);
    assert.deepEqual(modes(by['toolbox:echo']), ['readonly', 'tb']);
    assert.deepEqual(by['bank:request_agent_handoff'].slices, ['other']);
    assert.deepEqual(modes(by['bank:request_agent_handoff']), []);
    assert.equal(report.tools.filter((t) => t.welcome).length, 1);
    assert.equal(by['toolbox:big'], undefined);
  }),
);

test(
  'check: separator "__" gives no naming warning; an upstream that cannot start makes it invalid (exit 1, named)',
  withDiagnostics(async () => {
    const clean = await runCheck({ naming: { separator: '__' }, servers: [bankStdio(), toolboxStdio()] }, true);
    assert.equal(clean.exit.code, 0, clean.proc.diagnostics());
    const report = JSON.parse(clean.out);
    assert.deepEqual(report.warnings.filter((w) => /naming|A-Za-z0-9/.test(w)), []);
    assert.ok(report.tools.some((t) => t.name === 'bank__list_accounts'));

    const missing = '/nonexistent/mcpgw-no-such-server';
    const broken = { servers: [bankStdio(), toolboxStdio({ name: 'ghost', command: missing, timeout_ms: 1000 })] };
    const text = await runCheck(broken, false);
    assert.equal(text.exit.code, 1, text.proc.diagnostics());
    assert.match(text.out, /ghost/);
    assert.match(text.out, /^invalid$/m);
    const json = await runCheck(broken, true);
    assert.equal(json.exit.code, 1, json.proc.diagnostics());
    const r = JSON.parse(json.out);
    assert.equal(r.valid, false);
    assert.ok(r.errors.some((e) => e.includes('ghost')), JSON.stringify(r.errors));
    assert.ok(r.tools.some((t) => t.name === 'bank:list_accounts'), 'the connected server is still listed');
  }),
);
