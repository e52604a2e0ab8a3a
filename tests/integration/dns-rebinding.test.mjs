// DNS rebinding against the SSRF guard of what an upstream can make the
// gateway fetch (CONTRACT wave 4; docs/operations.md, "Tool integrity"):
// a name whose first answer is a public address and whose later answers
// are loopback or the cloud metadata address. The guard resolves once,
// checks every address and connects to the addresses it checked, so the
// forbidden address never gets a connection: the first fetch reaches the
// public address, the next one (a fresh resolution) is refused naming the
// rule. Real resolver, real name server: the real mcpgw and the scenario
// (dns-rebinding-scenario.mjs, its own name server on port 53) run in a
// network and mount namespace of their own (`unshare`), whose
// /etc/resolv.conf names that server; nothing leaves the namespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { MCPGW, Proc, REPO, requireBinaries, tempDir, withDiagnostics } from './harness.mjs';

const UNSHARE = '/usr/bin/unshare';
const IP = '/usr/sbin/ip';
// A public address, on the namespace's loopback interface only.
const PUBLIC = '93.184.216.34';

test(
  'a name that resolves first to a public address and then to 127.0.0.1 or 169.254.169.254 never gets a connection to the forbidden one',
  withDiagnostics(async () => {
    requireBinaries(MCPGW, UNSHARE, IP);
    const dir = tempDir('mcpgw-rebind-ns-');
    const resolv = path.join(dir, 'resolv.conf');
    const nss = path.join(dir, 'nsswitch.conf');
    writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:5 attempts:1\n');
    writeFileSync(nss, 'hosts: files dns\n');
    // An upstream with OAuth off loopback is https: a certificate for its address and both names.
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=rebind.test', '-addext', `subjectAltName=IP:${PUBLIC},DNS:lo.rebind.test,DNS:md.rebind.test`,
      '-keyout', key, '-out', cert,
    ], { stdio: 'ignore' });
    const setup = [
      `${IP} link set lo up`,
      `${IP} addr add ${PUBLIC}/32 dev lo`,
      `${IP} addr add 169.254.169.254/32 dev lo`,
      'mount --bind "$1" /etc/resolv.conf',
      'mount --bind "$2" /etc/nsswitch.conf',
      'exec "$3" "$4" "$5" "$6" "$7"',
    ].join(' && ');
    const scenario = path.join(REPO, 'tests/integration/dns-rebinding-scenario.mjs');
    const proc = new Proc('rebind-namespace', UNSHARE, [
      '--user', '--map-root-user', '--net', '--mount', '--', '/bin/sh', '-c', setup, 'sh', resolv, nss, process.execPath, scenario, PUBLIC, cert, key,
    ], { env: { NODE_TEST_CONTEXT: undefined } });  // the scenario reports on stdout, not to this runner
    const exit = await proc.waitExit(120000);
    assert.equal(exit.code, 0, proc.stderrText);
    // Its report is the one JSON line (the harness it imports prints an empty TAP summary too).
    const line = proc.stdoutText.split('\n').find((l) => l.startsWith('{"queries"'));
    assert.ok(line, proc.stdoutText);
    const report = JSON.parse(line);

    // The resolver asked the namespace's name server, which rebound each name.
    for (const [name, bad] of [['lo.rebind.test', '127.0.0.1'], ['md.rebind.test', '169.254.169.254']]) {
      const answers = report.queries.filter((q) => q.name === name && q.type === 1).map((q) => q.answer);
      assert.equal(answers[0], PUBLIC, `${name}: ${JSON.stringify(report.queries)}`);
      assert.ok(answers.slice(1).length >= 1 && answers.slice(1).every((a) => a === bad), `${name}: ${JSON.stringify(answers)}`);
    }
    // The first resolution was the one connected to: the metadata came from the public address.
    for (const name of ['lo', 'md'])
      assert.ok(report.hits.some((h) => h.path === `/prm/${name}` && h.at === PUBLIC), JSON.stringify(report.hits));
    // The forbidden addresses, on this very server, got nothing.
    const forbidden = report.hits.filter((h) => h.at !== PUBLIC);
    assert.deepEqual(forbidden, [], 'a connection reached a forbidden address');
    // The later resolutions were refused before connecting, naming the rule.
    assert.match(report.errors.lo, /refused before connecting: lo\.rebind\.test resolves to 127\.0\.0\.1, a loopback address .*\(rule loopback\), allowed only for an upstream on loopback/);
    assert.match(report.errors.md, /refused before connecting: md\.rebind\.test resolves to 169\.254\.169\.254, a cloud metadata service .*\(rule cloud-metadata\)/);
  }),
);
