// An authorization server for the upstream OAuth tests: the real
// `oidc-provider`, configured by the test, with
// - client_credentials, authorization_code with PKCE, refresh tokens,
//   private_key_jwt and client secrets, dynamic registration (optional),
// - resource indicators (RFC 8707): JWT access tokens whose audience is the
//   resource, with the resource's scopes and lifetime,
// - a token exchange grant (RFC 8693) registered on it: a subject token this
//   provider issued for `exchange.audience` becomes a token for the
//   requested resource, for the same subject,
// - revocation (RFC 7009) and its own login and consent pages (devInteractions:
//   any login name, which becomes the subject).
//
//   node oauth-provider-fixture.mjs <config.json>
//
// config: {clients: [client metadata], resources: {<url>: {scope, ttl}},
// exchange?: {audience}, registration?: bool, cimd?: {from, to}}. Prints
// "listening <issuer>". With `cimd`, Client ID Metadata Documents are on:
// a client_id URL under `from` (an https origin the tests cannot serve) is
// fetched from the same path under `to` (the gateway on loopback), the only
// liberty taken with the provider's own fetching of those documents.
// Control endpoints for the test (what an operator of the provider does):
// POST /__config {clients?, resources?} replaces those (e.g. once the
// gateway's callback URL is known); POST /__revoke?sub=NAME revokes every
// grant of that subject (its refresh tokens stop working); GET /__stats
// counts token requests by grant type.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';
import { createLocalJWKSet, jwtVerify } from 'jose';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = { ...privateKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
const publicJwks = createLocalJWKSet({ keys: [{ kty: key.kty, n: key.n, e: key.e, kid: key.kid, alg: key.alg }] });
const grantsBySub = new Map();
const stats = {};

function resourceInfo(indicator) {
  const r = config.resources[indicator];
  if (!r) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
  return { scope: r.scope, audience: indicator, accessTokenTTL: r.ttl ?? 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
}

function makeProvider(issuer) {
  const provider = new Provider(issuer, {
    clients: config.clients,
    jwks: { keys: [key] },
    scopes: ['openid', 'offline_access', ...new Set(Object.values(config.resources).flatMap((r) => r.scope.split(' ')))],
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    fetch: (url, options) => {
      const at = String(url);
      if (!config.cimd || !at.startsWith(`${config.cimd.from}/`)) return globalThis.fetch(url, options);
      // Its guard against loopback addresses would refuse the gateway here.
      const direct = { ...options };
      delete direct.dispatcher;
      return globalThis.fetch(config.cimd.to + at.slice(config.cimd.from.length), direct);
    },
    issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: { RefreshToken: 86400, AuthorizationCode: 120, Interaction: 600, Session: 3600, Grant: 86400 },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: !!config.registration },
      clientIdMetadataDocument: {
        enabled: !!config.cimd,
        ack: 'draft-02',
        allowFetch: (ctx, id) => !!config.cimd && id.startsWith(`${config.cimd.from}/`),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => resourceInfo(indicator),
      },
    },
  });
  provider.on('grant.success', (ctx) => {
    const kind = ctx.oidc.params.grant_type;
    stats[kind] = (stats[kind] ?? 0) + 1;
  });
  provider.on('refresh_token.saved', (token) => {
    const set = grantsBySub.get(token.accountId) ?? new Set();
    set.add(token.grantId);
    grantsBySub.set(token.accountId, set);
  });
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      const { subject_token: subject, subject_token_type: type, resource, scope } = ctx.oidc.params;
      if (type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be an access token');
      let payload;
      try {
        ({ payload } = await jwtVerify(subject ?? '', publicJwks, { issuer, audience: config.exchange?.audience }));
      } catch (e) {
        throw new errors.InvalidGrant(`subject_token is not valid: ${e.message}`);
      }
      if (!resource) throw new errors.InvalidTarget('resource is required');
      const info = resourceInfo(resource);
      const granted = (scope ?? info.scope).split(' ').filter((s) => info.scope.split(' ').includes(s));
      const token = new provider.AccessToken({ accountId: payload.sub, client: ctx.oidc.client, scope: granted.join(' '), gty: 'token_exchange' });
      token.resourceServer = new provider.ResourceServer(resource, info);
      const value = await token.save();
      ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration, scope: token.scope };
    },
    ['subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'scope', 'audience'],
  );
  return provider;
}

let provider;
let handler;
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, server.issuer);
  if (url.pathname === '/__config' && req.method === 'POST') {
    let body = '';
    for await (const chunk of req) body += chunk;
    Object.assign(config, JSON.parse(body));
    provider = makeProvider(server.issuer);
    handler = provider.callback();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    return;
  }
  if (url.pathname === '/__revoke' && req.method === 'POST') {
    const sub = url.searchParams.get('sub');
    const grants = [...(grantsBySub.get(sub) ?? [])];
    for (const id of grants) {
      await provider.RefreshToken.revokeByGrantId(id);
      await provider.AccessToken.revokeByGrantId(id);
      await (await provider.Grant.find(id))?.destroy();
    }
    grantsBySub.delete(sub);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ revoked: grants.length }));
    return;
  }
  if (url.pathname === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  handler(req, res);
});

server.listen(0, '127.0.0.1', () => {
  server.issuer = `http://127.0.0.1:${server.address().port}`;
  provider = makeProvider(server.issuer);
  handler = provider.callback();
  process.stdout.write(`listening ${server.issuer}\n`);
});
process.on('SIGTERM', () => process.exit(0));
