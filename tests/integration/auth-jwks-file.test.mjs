// auth.oauth with a jwks_file: RS256, PS256 and ES256 tokens (signed here
// with node:crypto) are accepted; a key whose JWK names another alg refuses
// the token; scope_modes opens modes by scope (403 insufficient_scope for
// the others); SIGHUP re-reads the file (a new key works, a removed one is
// refused) without dropping sessions; a file that is not a JWKS keeps the
// old configuration.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bankStdio, closedPort, connectHttp, pollUntil, requireBinaries, rpc, startGateway, tempDir, toYaml, withDiagnostics } from './harness.mjs';

const ISS = 'https://idp.test/';
let gw, dir, audience, jwksPath, config;
const keys = {};

function keyPair(kind, kid, alg) {
  const { privateKey, publicKey } = kind === 'ec'
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, ...(alg ? { alg } : {}), use: 'sig' } };
}

const b64u = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');

function sign(alg, kid, claims = {}) {
  const k = keys[kid];
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64u({ alg, kid })}.${b64u({ iss: ISS, aud: audience, sub: `user-${kid}`, scope: 'mcp:read', exp: now + 300, ...claims })}`;
  const opts = alg === 'PS256' ? { key: k.privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
    : alg === 'ES256' ? { key: k.privateKey, dsaEncoding: 'ieee-p1363' } : k.privateKey;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), opts).toString('base64url')}`;
}

const writeJwks = (...kids) => writeFileSync(jwksPath, JSON.stringify({ keys: kids.map((k) => keys[k].jwk) }));
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'jwks-file', version: '1' } } };
const bearer = (t) => ({ headers: { authorization: `Bearer ${t}` } });

before(async () => {
  requireBinaries();
  dir = tempDir();
  jwksPath = path.join(dir, 'jwks.json');
  keys.rsa = keyPair('rsa', 'rsa');
  keys.ec = keyPair('ec', 'ec', 'ES256');
  keys.pinned = keyPair('rsa', 'pinned', 'RS256');
  keys.later = keyPair('rsa', 'later');
  writeJwks('rsa', 'ec', 'pinned');
  const port = await closedPort();
  audience = `http://127.0.0.1:${port}/mcp`;
  config = {
    listen: { host: '127.0.0.1', port, path: '/mcp' },
    modes: { readonly: { include_slices: ['read'] } },
    auth: { oauth: { issuer: ISS, audience, jwks_file: jwksPath, scope_modes: { 'mcp:read': ['readonly'], 'mcp:all': ['all'] } } },
    servers: [bankStdio()],
  };
  gw = await startGateway(toYaml(config), { dir });
});

test(
  'RS256, PS256 and ES256 tokens are accepted; a key pinned to RS256 refuses PS256',
  withDiagnostics(async () => {
    for (const [alg, kid] of [['RS256', 'rsa'], ['PS256', 'rsa'], ['ES256', 'ec'], ['RS256', 'pinned']]) {
      const c = await connectHttp(`${gw.url}/readonly`, bearer(sign(alg, kid)));
      assert.deepEqual(await c.result('ping'), {}, `${alg} ${kid}`);
      await c.close();
    }
    const r = await rpc(`${gw.url}/readonly`, init, bearer(sign('PS256', 'pinned')));
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate'), /error_description="the key \\"pinned\\" is for RS256, not PS256"/);
    // An EC token under an RSA key id: the key type does not match.
    const mixed = await rpc(`${gw.url}/readonly`, init, bearer(sign('ES256', 'ec').replace(/^[^.]+/, b64u({ alg: 'ES256', kid: 'rsa' }))));
    assert.equal(mixed.status, 401);
  }),
);

test(
  'scope_modes: mcp:read opens readonly only (403 insufficient_scope naming mcp:all for the default mode); mcp:all opens every mode',
  withDiagnostics(async () => {
    const r = await rpc(gw.url, init, bearer(sign('RS256', 'rsa')));
    assert.equal(r.status, 403, r.text);
    assert.equal(r.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="mcp:all", error_description="principal \\"user-rsa\\" may not use mode \\"all\\"", resource_metadata="http://127.0.0.1:${gw.port}/.well-known/oauth-protected-resource/mcp"`);
    const all = await connectHttp(gw.url, bearer(sign('RS256', 'rsa', { scope: 'mcp:all' })));
    assert.deepEqual(await all.result('ping'), {});
    await all.close();
  }),
);

test(
  'SIGHUP re-reads jwks_file: a new key works at once, a removed one is refused, sessions stay; an invalid file keeps the old keys',
  withDiagnostics(async () => {
    const kept = await connectHttp(`${gw.url}/readonly`, bearer(sign('RS256', 'rsa')));
    assert.equal((await rpc(`${gw.url}/readonly`, init, bearer(sign('RS256', 'later')))).status, 401);
    writeJwks('later', 'rsa');
    const reloads = () => gw.proc.stderrText.split('reloaded ').length - 1;
    let n = reloads();
    gw.proc.child.kill('SIGHUP');
    await pollUntil(() => reloads() > n, { what: 'reload' });
    const fresh = await connectHttp(`${gw.url}/readonly`, bearer(sign('RS256', 'later')));
    assert.deepEqual(await fresh.result('ping'), {});
    await fresh.close();
    const ec = await rpc(`${gw.url}/readonly`, init, bearer(sign('ES256', 'ec')));
    assert.equal(ec.status, 401, 'the removed EC key is gone');
    assert.deepEqual(await kept.result('ping'), {}, 'the session opened before the reload goes on');
    writeFileSync(jwksPath, '{"keys": 5}');
    n = gw.proc.stderrText.split('reload failed').length - 1;
    gw.proc.child.kill('SIGHUP');
    await pollUntil(() => gw.proc.stderrText.split('reload failed').length - 1 > n, { what: 'reload refused' });
    assert.match(gw.proc.stderrText, /reload failed, still running the previous configuration: auth\.oauth: .*jwks\.json: not a JWKS: expected an object with a "keys" array/);
    assert.deepEqual(await kept.result('ping'), {});
    await kept.close();
  }),
);
