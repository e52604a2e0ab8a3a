// What an upstream can make the gateway fetch: OAuth discovery as the
// gateway does it for an upstream (servers[].oauth), through the real
// gateway, against a hostile upstream and authorization server
// (oauth-ssrf-fixture.mjs) whose 401 `resource_metadata`, protected
// resource metadata and issuer metadata name cloud metadata, private,
// unspecified and other special addresses in every spelling. Each refusal
// is an isError naming the server, the URL, the step and the rule, and
// `mcpgw check` reports it. No traffic leaves loopback: the addresses
// refused are refused before connecting (the message names the rule, never
// a connect error), and where a refused spelling would reach the fixture
// itself (0.0.0.0, ::ffff:127.0.0.1, localhost) its request log proves
// that nothing came. Redirects are not followed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpClient, MCPGW, Proc, REPO, requireBinaries, startGateway, tempDir, textOf, withDiagnostics } from './harness.mjs';

let dir, fixture, gw;

/** The upstream's 401, naming `target` as its protected resource metadata. */
const challenge = (target) => ({
  status: 401,
  headers: { 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${target}"` },
  body: { error: 'invalid_token' },
});
/** Protected resource metadata of upstream `name` on the fixture. */
const prm = (name, servers) => ({ status: 200, body: { resource: `{self}/u/${name}/mcp`, authorization_servers: servers } });
/** An issuer's metadata. */
const meta = (issuer, endpoints) => ({
  status: 200,
  body: { issuer, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'], ...endpoints },
});

/**
 * The refusals of a loopback upstream's discovery: server name, where its
 * 401 points, the URL named in the error, and how the host is shown and
 * which rule refuses it.
 */
const refusals = [
  ['meta', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/', '169.254.169.254 is a cloud metadata service', 'cloud-metadata'],
  ['private', 'http://10.0.0.1/.well-known/oauth-protected-resource', '10.0.0.1 is a private address', 'private'],
  ['octal', 'http://0251.0376.0251.0376/latest/meta-data/', '0251.0376.0251.0376 (169.254.169.254) is a cloud metadata service', 'cloud-metadata'],
  ['decimal', 'http://2852039166/latest/meta-data/', '2852039166 (169.254.169.254) is a cloud metadata service', 'cloud-metadata'],
  ['hex', 'http://0xa9fea9fe/latest/meta-data/', '0xa9fea9fe (169.254.169.254) is a cloud metadata service', 'cloud-metadata'],
  ['short', 'http://012.1/prm', '012.1 (10.0.0.1) is a private address', 'private'],
  ['mapped-meta', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', '::ffff:a9fe:a9fe (::ffff:169.254.169.254) is a cloud metadata service', 'cloud-metadata'],
  ['mapped-private', 'https://[::ffff:10.0.0.1]/prm', '::ffff:10.0.0.1 is a private address', 'private'],
  ['aws-v6', 'https://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a cloud metadata service', 'cloud-metadata'],
  ['gcp-name', 'http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is the name of a cloud metadata service', 'cloud-metadata'],
  ['zero', 'http://0.0.0.0:{port}/zero', '0.0.0.0 is the unspecified address', 'unspecified'],
  ['zero-short', 'http://0:{port}/zero', '0 (0.0.0.0) is the unspecified address', 'unspecified'],
  ['zero-v6', 'http://[::]:{port}/zero', ':: is the unspecified address', 'unspecified'],
  ['cgnat', 'https://100.64.0.1/prm', '100.64.0.1 is a shared carrier-grade NAT address', 'shared'],
  ['link', 'https://[fe80::1%25eth0]/prm', 'fe80::1%25eth0 (fe80::1) is a link-local address', 'link-local'],
  ['multicast', 'https://224.0.0.1/prm', '224.0.0.1 is a multicast address', 'multicast'],
  ['broadcast', 'https://255.255.255.255/prm', '255.255.255.255 is the broadcast address', 'broadcast'],
];

const routes = {
  // Reached through loopback spellings, allowed for a loopback upstream.
  '/u/mapped/mcp': challenge('http://[::ffff:127.0.0.1]:{port}/prm/mapped'),
  '/prm/mapped': prm('mapped', ['http://127.1:{port}/as']),
  '/.well-known/oauth-authorization-server/as': meta('http://127.1:{port}/as', { token_endpoint: 'http://0x7f.1:{port}/token-mapped' }),
  '/token-mapped': { status: 400, body: { error: 'invalid_client', error_description: 'the fixture knows no client' } },
  // Redirects, not followed: to the metadata service, and to the fixture itself.
  '/u/redirect/mcp': challenge('{self}/redirect'),
  '/redirect': { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
  '/u/redirect-home/mcp': challenge('{self}/redirect-home'),
  '/redirect-home': { status: 307, headers: { location: '{self}/landing' } },
  '/landing': prm('redirect-home', ['{self}/as-landing']),
  // Further steps: the issuer, the token endpoint, the registration endpoint.
  '/u/issuer/mcp': challenge('{self}/prm/issuer'),
  '/prm/issuer': prm('issuer', ['https://10.0.0.1']),
  '/u/token/mcp': challenge('{self}/prm/token'),
  '/prm/token': prm('token', ['{self}/as-token']),
  '/.well-known/oauth-authorization-server/as-token': meta('{self}/as-token', { token_endpoint: 'https://169.254.169.254/token' }),
  '/u/register/mcp': challenge('{self}/prm/register'),
  '/prm/register': prm('register', ['{self}/as-register']),
  '/.well-known/oauth-authorization-server/as-register': meta('{self}/as-register', {
    token_endpoint: '{self}/token', authorization_endpoint: '{self}/authorize', registration_endpoint: 'https://10.0.0.2/register',
  }),
  // An upstream not on loopback (never contacted: its token comes first),
  // its issuer configured on the fixture: other spellings of loopback are
  // refused, the configured origin itself is the operator's.
  '/.well-known/oauth-authorization-server/as-mapped': meta('{self}/as-mapped', { token_endpoint: 'http://[::ffff:127.0.0.1]:{port}/token-mapped-remote' }),
  '/.well-known/oauth-authorization-server/as-localhost': meta('{self}/as-localhost', { token_endpoint: 'http://localhost:{port}/token-localhost-remote' }),
  '/.well-known/oauth-authorization-server/as-same': meta('{self}/as-same', { token_endpoint: '{self}/token-remote' }),
  '/token-remote': { status: 400, body: { error: 'invalid_client', error_description: 'the fixture knows no client' } },
  '/token-mapped-remote': { status: 400, body: { error: 'invalid_client' } },
  '/token-localhost-remote': { status: 400, body: { error: 'invalid_client' } },
  '/zero': prm('zero', ['{self}/as']),
};
for (const [name, target] of refusals) routes[`/u/${name}/mcp`] = challenge(target);

const cc = { grant: 'client_credentials', client_id: 'gw', client_secret: 'secret' };
const REMOTE = 'https://mcp.invalid/mcp';

before(async () => {
  requireBinaries(MCPGW);
  dir = tempDir();
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ routes }));
  const proc = new Proc('ssrf-fixture', process.execPath, [path.join(REPO, 'tests/integration/oauth-ssrf-fixture.mjs'), script]);
  const [, self] = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+)\s*$/);
  fixture = { proc, self, port: new URL(self).port };
  const loopback = (name, oauth = cc) => ({ name, transport: 'http', url: `${self}/u/${name}/mcp`, required: false, oauth });
  const remote = (name, issuer) => ({ name, transport: 'http', url: REMOTE, required: false, oauth: { ...cc, issuer } });
  gw = await startGateway({
    auth: { bearer_tokens: [{ token: 'alice-token', name: 'alice' }] },
    servers: [
      ...refusals.map(([name]) => loopback(name)),
      loopback('mapped'), loopback('redirect'), loopback('redirect-home'), loopback('issuer'), loopback('token'),
      loopback('register', { grant: 'authorization_code', scopes: ['crm'] }),
      remote('remote-mapped', `${self}/as-mapped`), remote('remote-localhost', `${self}/as-localhost`),
      remote('remote-same', `${self}/as-same`),
    ],
  }, { dir });
});

after(async () => {
  await gw?.proc.stop();
});

async function call(tool) {
  const c = new HttpClient(gw.url, { headers: { authorization: 'Bearer alice-token' } });
  await c.initialize();
  const r = await c.request('tools/call', { name: tool, arguments: {} });
  assert.equal(r.result?.isError, true, `${tool}: ${JSON.stringify(r)}`);
  return textOf(r.result);
}

/** The fixture's requests to `p` so far. */
async function hits(p) {
  const all = await (await fetch(`${fixture.self}/__hits`)).json();
  return all.filter((h) => h.path === p).length;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const filled = (s) => s.replaceAll('{self}', fixture.self).replaceAll('{port}', fixture.port);

test('a loopback upstream pointing discovery at metadata, private, unspecified and special addresses, in every spelling: refused before connecting, naming the URL and the rule', withDiagnostics(async () => {
  for (const [name, target, shown, rule] of refusals) {
    const text = await call(`${name}:whoami`);
    const expected = `mcpgw: upstream '${name}' is not connected (initialize: OAuth discovery failed at ${filled(target)}: ` +
      `refused before connecting: ${shown}`;
    assert.ok(text.startsWith(expected), `${name}:\n  got      ${text}\n  expected ${expected}...`);
    assert.match(text, new RegExp(`\\(rule ${escape(rule)}\\)`), name);
  }
  // 0.0.0.0, 0 and :: would reach this very fixture on Linux, had they been connected to.
  assert.equal(await hits('/zero'), 0, 'nothing connected to an unspecified address');
}));

test('loopback in other spellings (::ffff:127.0.0.1, 127.1, 0x7f.1) is loopback, allowed for an upstream on loopback', withDiagnostics(async () => {
  const text = await call('mapped:whoami');
  assert.equal(text, `mcpgw: upstream 'mapped' is not connected (initialize: OAuth token failed at http://0x7f.1:${fixture.port}/token-mapped: ` +
    'refused (HTTP 400): invalid_client: the fixture knows no client)');
  assert.ok(await hits('/prm/mapped') >= 1, 'the metadata at [::ffff:127.0.0.1] was fetched');
  assert.ok(await hits('/.well-known/oauth-authorization-server/as') >= 1, 'the issuer at 127.1 was asked');
  assert.ok(await hits('/token-mapped') >= 1, 'the token endpoint at 0x7f.1 was asked');
}));

test('redirects are not followed: a 30x is an error naming where it pointed', withDiagnostics(async () => {
  assert.equal(await call('redirect:whoami'), `mcpgw: upstream 'redirect' is not connected (initialize: OAuth discovery failed at ${fixture.self}/redirect: ` +
    'HTTP 302 (a redirect to "http://169.254.169.254/latest/meta-data/", not followed))');
  assert.equal(await call('redirect-home:whoami'), `mcpgw: upstream 'redirect-home' is not connected (initialize: OAuth discovery failed at ${fixture.self}/redirect-home: ` +
    `HTTP 307 (a redirect to "${fixture.self}/landing", not followed))`);
  assert.equal(await hits('/landing'), 0, 'the redirect was not followed, even to loopback');
}));

test('the issuer, the token endpoint and the registration endpoint the metadata names are checked too', withDiagnostics(async () => {
  assert.match(await call('issuer:whoami'), new RegExp(`^mcpgw: upstream 'issuer' is not connected \\(initialize: OAuth metadata failed at ` +
    `https://10\\.0\\.0\\.1/\\.well-known/oauth-authorization-server: refused before connecting: 10\\.0\\.0\\.1 is a private address .*\\(rule private\\)\\)$`));
  assert.match(await call('token:whoami'), new RegExp(`^mcpgw: upstream 'token' is not connected \\(initialize: OAuth token failed at ` +
    `https://169\\.254\\.169\\.254/token: refused before connecting: 169\\.254\\.169\\.254 is a cloud metadata service .*\\(rule cloud-metadata\\)\\)$`));
  // authorization_code without a client_id: registered at first use.
  assert.match(await call('register:whoami'), new RegExp(`^mcpgw: upstream 'register': OAuth registration failed at ` +
    `https://10\\.0\\.0\\.2/register: refused before connecting: 10\\.0\\.0\\.2 is a private address .*\\(rule private\\)`));
}));

test('an upstream not on loopback: loopback is refused in any spelling and after resolving a name; the origins the operator configured are reached', withDiagnostics(async () => {
  assert.equal(await call('remote-mapped:whoami'), `mcpgw: upstream 'remote-mapped' is not connected (initialize: OAuth token failed at ` +
    `http://[::ffff:127.0.0.1]:${fixture.port}/token-mapped-remote: refused before connecting: ::ffff:127.0.0.1 is a loopback address ` +
    '(127.0.0.0/8, ::1) (rule loopback), allowed only for an upstream on loopback)');
  assert.match(await call('remote-localhost:whoami'), new RegExp(`^mcpgw: upstream 'remote-localhost' is not connected \\(initialize: OAuth token failed at ` +
    `http://localhost:${fixture.port}/token-localhost-remote: refused before connecting: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address ` +
    '\\(127\\.0\\.0\\.0/8, ::1\\) \\(rule loopback\\), allowed only for an upstream on loopback\\)$'));
  assert.equal(await hits('/token-mapped-remote'), 0, '[::ffff:127.0.0.1] reaches the fixture, had it been connected to');
  assert.equal(await hits('/token-localhost-remote'), 0, 'localhost reaches the fixture, had it been connected to');
  // The issuer's origin is in the configuration: the operator's choice.
  assert.equal(await call('remote-same:whoami'), `mcpgw: upstream 'remote-same' is not connected (initialize: OAuth token failed at ` +
    `${fixture.self}/token-remote: refused (HTTP 400): invalid_client: the fixture knows no client)`);
  assert.ok(await hits('/token-remote') >= 1);
}));

test('mcpgw check reports each refusal, naming the URL and the rule', withDiagnostics(async () => {
  const r = spawnSync(MCPGW, ['check', '--config', gw.configPath, '--json'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const report = JSON.parse(r.stdout);
  const by = Object.fromEntries(report.oauth.map((o) => [o.server, o]));
  for (const [name, target, shown, rule] of refusals) {
    assert.equal(by[name].ok, false, name);
    assert.ok(by[name].discovery.startsWith(`OAuth discovery failed at ${filled(target)}: refused before connecting: ${shown}`), `${name}: ${by[name].discovery}`);
    assert.ok(by[name].discovery.includes(`(rule ${rule})`), name);
    assert.ok(report.errors.some((e) => e.startsWith(`upstream ${name}: OAuth discovery failed at ${filled(target)}: refused before connecting`)), name);
  }
  // Public clients have nothing to probe, but a refused endpoint is named.
  assert.equal(by.register.ok, false);
  assert.match(by.register.credentials, /^OAuth registration failed at https:\/\/10\.0\.0\.2\/register: refused before connecting: 10\.0\.0\.2 is a private address .*\(rule private\)$/);
  assert.match(by['remote-mapped'].credentials, /OAuth token failed at http:\/\/\[::ffff:127\.0\.0\.1\]:\d+\/token-mapped-remote: refused before connecting: .*\(rule loopback\)/);
  assert.equal(await hits('/zero'), 0);
  assert.equal(await hits('/token-mapped-remote'), 0);
}));
