// An upstream MCP server that requires OAuth, built on the official SDK v1
// the way its README does it: Streamable HTTP on express, stateful sessions,
// `requireBearerAuth` checking each request's JWT against the authorization
// server's JWKS (issuer, audience = this server's URL, scope), and RFC 9728
// metadata from `mcpAuthMetadataRouter`. Run as a child process:
//
//   node oauth-upstream-fixture.mjs <issuer> <scope> <log-file>
//
// It prints "listening http://127.0.0.1:PORT/mcp". Tool `whoami` answers
// who the token says the caller is ({sub, client_id, scope, aud, jti}); every
// request's token is appended to <log-file> as a JSON line ({sub, jti, aud,
// token}) so a test can tell identities apart and grep outputs for tokens.
// POST /__refuse?sub=NAME makes it refuse (401 invalid_token) every token
// of that subject it has seen so far, as a server does with a revoked one.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const [issuer, scope, logFile] = process.argv.slice(2);

const metadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));

const app = express();
app.use(express.json());
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const url = new URL(`http://127.0.0.1:${server.address().port}/mcp`);

app.use(mcpAuthMetadataRouter({ oauthMetadata: metadata, resourceServerUrl: url, scopesSupported: [scope] }));

const seen = new Map(); // sub -> jtis
const refused = new Set();
app.post('/__refuse', (req, res) => {
  for (const jti of seen.get(req.query.sub) ?? []) refused.add(jti);
  res.json({ refused: refused.size });
});

const verifier = {
  async verifyAccessToken(token) {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer: metadata.issuer, audience: url.href }));
    } catch (e) {
      throw new InvalidTokenError(`token rejected: ${e.message}`);
    }
    if (refused.has(payload.jti)) throw new InvalidTokenError('token revoked');
    seen.set(payload.sub, (seen.get(payload.sub) ?? new Set()).add(payload.jti));
    fs.appendFileSync(logFile, `${JSON.stringify({ sub: payload.sub, jti: payload.jti, aud: payload.aud, token })}\n`);
    return {
      token,
      clientId: payload.client_id ?? '',
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
      expiresAt: payload.exp,
      extra: { sub: payload.sub ?? null, jti: payload.jti ?? null, aud: payload.aud },
    };
  },
};
const auth = requireBearerAuth({
  verifier,
  requiredScopes: [scope],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url),
});

function makeServer() {
  const mcp = new McpServer({ name: 'oauth-upstream', version: '1.0.0' });
  mcp.registerTool('whoami', { description: 'Who the caller is, per its token' }, async (extra) => {
    const info = extra.authInfo;
    const who = { sub: info.extra.sub, client_id: info.clientId, scope: info.scopes.join(' '), aud: info.extra.aud, jti: info.extra.jti };
    return { content: [{ type: 'text', text: JSON.stringify(who) }], structuredContent: who };
  });
  mcp.registerTool('echo', { description: 'Echoes its text', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'echo' }],
  }));
  return mcp;
}

const transports = new Map();
app.all('/mcp', auth, async (req, res) => {
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (sid || req.method !== 'POST' || req.body?.method !== 'initialize') {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await makeServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

process.stdout.write(`listening ${url.href}\n`);
process.on('SIGTERM', () => process.exit(0));
