// An OAuth 2.1 authorization server for the tests: the real `oidc-provider`
// package, issuing JWT access tokens (client_credentials, resource
// indicators) for one resource. Run as a child process:
//
//   node idp-fixture.mjs <dir> <resource> <clients-json>
//
// Each client is {id, secret, scope, claims?}; `claims` are added to its
// access tokens (policies read them, e.g. groups).
//
// It listens on a free loopback port and prints "listening <issuer>". The
// signing keys (private JWKs) are kept in <dir>/keys.json so a test can sign
// tokens of its own. POST /__rotate puts a new key first (tokens are signed
// with it from then on; the old one stays published); GET /__hits says how
// often the JWKS was read.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Provider from 'oidc-provider';

const [dir, resource, clientsJson] = process.argv.slice(2);
const clients = JSON.parse(clientsJson);
const keysFile = path.join(dir, 'keys.json');

function newKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: `k-${crypto.randomBytes(6).toString('hex')}`, alg: 'RS256', use: 'sig' };
}

let keys = [newKey()];
let jwksHits = 0;
let handler = null;

function makeProvider(issuer) {
  fs.writeFileSync(keysFile, JSON.stringify(keys));
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: c.scope,
    })),
    jwks: { keys },
    scopes: ['mcp:read', 'mcp:write', 'mcp:admin'],
    // A client's `claims` (e.g. groups) go into its access tokens.
    extraTokenClaims: async (ctx, token) => clients.find((c) => c.id === token.clientId)?.claims,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => ({
          scope: client.scope,
          audience: indicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  return provider.callback();
}

const server = http.createServer((req, res) => {
  if (req.url === '/__rotate' && req.method === 'POST') {
    keys = [newKey(), ...keys];
    handler = makeProvider(server.issuer);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kid: keys[0].kid }));
    return;
  }
  if (req.url === '/__hits') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jwks: jwksHits }));
    return;
  }
  if (req.url.startsWith('/jwks')) jwksHits++;
  handler(req, res);
});

server.listen(0, '127.0.0.1', () => {
  server.issuer = `http://127.0.0.1:${server.address().port}`;
  handler = makeProvider(server.issuer);
  process.stdout.write(`listening ${server.issuer}\n`);
});
process.on('SIGTERM', () => process.exit(0));
