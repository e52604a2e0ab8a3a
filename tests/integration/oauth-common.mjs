// What the upstream OAuth tests share: the authorization server (the npm
// `oidc-provider`, tests/integration/oauth-provider-fixture.mjs) and the
// upstream that requires its tokens (the official SDK v1,
// oauth-upstream-fixture.mjs), started as child processes; the gateway's
// configuration for them; MCP clients of each era; and the check that no
// token shows in what the gateway wrote.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Proc, REPO, readJsonLines, textOf } from './harness.mjs';

/** The scope the upstream requires. */
export const SCOPE = 'crm';
/** The audience of the tokens clients hold for the gateway itself (auth.oauth). */
export const GATEWAY_AUDIENCE = 'https://mcpgw.test/mcp';

/** Starts the authorization server with `config` (see the fixture). */
export async function startProvider(dir, config, label = 'provider') {
  const file = path.join(dir, `${label}.json`);
  writeFileSync(file, JSON.stringify(config));
  const proc = new Proc(label, process.execPath, [path.join(REPO, 'tests/integration/oauth-provider-fixture.mjs'), file]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+)\s*$/);
  const issuer = m[1];
  return {
    proc,
    issuer,
    /** Replaces clients and/or resources (e.g. once the gateway's callback is known). */
    async configure(change) {
      const res = await fetch(`${issuer}/__config`, { method: 'POST', body: JSON.stringify(change) });
      assert.equal(res.status, 200);
    },
    /** Revokes every grant of `sub` at the provider (its refresh tokens die). */
    async revokeSubject(sub) {
      const res = await fetch(`${issuer}/__revoke?sub=${encodeURIComponent(sub)}`, { method: 'POST' });
      return (await res.json()).revoked;
    },
    async stats() {
      return (await fetch(`${issuer}/__stats`)).json();
    },
    /** A client_credentials token of client `id` for `resource`. */
    async clientToken(id, secret, resource, scope) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource, ...(scope ? { scope } : {}) });
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      const json = await res.json();
      assert.equal(res.status, 200, JSON.stringify(json));
      return json.access_token;
    },
  };
}

/** Starts the upstream; it logs every token it is sent to `log`. */
export async function startOAuthUpstream(issuer, log, label = 'oauth-upstream') {
  const proc = new Proc(label, process.execPath, [path.join(REPO, 'tests/integration/oauth-upstream-fixture.mjs'), issuer, SCOPE, log]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)\s*$/);
  return { proc, url: m[1], log };
}

/** What the upstream answered `whoami` with, from a tools/call result. */
export function whoami(result) {
  assert.ok(!result.isError, `whoami failed: ${textOf(result)}`);
  return JSON.parse(textOf(result));
}

/** The consent link in a result's or error's text. */
export function linkIn(text) {
  const m = String(text).match(/https?:\/\/\S+\/oauth\/authorize\?flow=[A-Za-z0-9_-]+/);
  assert.ok(m, `no consent link in: ${text}`);
  return m[0];
}

/**
 * Asserts that no token the upstream was sent (its log) and none of `more`
 * appears in any of `texts` (the gateway's stderr, audit lines, check output).
 */
export function assertNoTokens(upstreamLog, texts, more = []) {
  const tokens = [...new Set([...readJsonLines(upstreamLog).map((l) => l.token).filter(Boolean), ...more])];
  assert.ok(tokens.length > 0, 'the upstream saw no tokens');
  for (const text of texts) {
    for (const t of tokens) {
      // A JWT's signature part alone is distinctive enough to find a copy.
      const sig = t.split('.').pop();
      assert.ok(!text.includes(t) && !text.includes(sig), `a token appears in the output: ...${text.slice(Math.max(0, text.indexOf(sig) - 200), text.indexOf(sig) + 50)}`);
    }
  }
  return tokens.length;
}

/** The file's text ("" when absent). */
export function fileText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
