// The status page in a real browser: headless Chromium (Debian's, driven by
// puppeteer-core, started here with a fresh profile) loads `/` from the real
// mcpgw with real upstreams, including a 5,000-tool one and a Streamable
// HTTP one that is stopped and started again while the page is open. The
// page must show each upstream's state live (down with its last error, then
// up again), the catalog per mode with a working filter, calls and their
// charts, sessions per principal and recent refusals and failed calls,
// never a call's arguments or a token, and make no request to any other
// origin. Without an admin listener and with auth, its data asks for a
// token, which the page asks for.
//
// MCPGW_SCREENSHOT=path.png writes a screenshot of the page (docs use one).
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';
import {
  BANK,
  Proc,
  TOOLBOX,
  bankStdio,
  connectHttp,
  httpGet,
  requireBinaries,
  startGateway,
  startUpstreamHttp,
  tempDir,
  withDiagnostics,
} from './harness.mjs';

const CHROMIUM = '/usr/bin/chromium';
const WAIT_MS = 60000;

async function launch() {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'mcpgw-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens `url` in a new page that records every request it makes. */
async function open(browser, url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  return { page, requests, errors };
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent);
const waitText = (page, selector, needle, what) =>
  page
    .waitForFunction((s, n) => document.querySelector(s)?.textContent.includes(n), { timeout: WAIT_MS, polling: 200 }, selector, needle)
    .catch((e) => {
      throw new Error(`page never showed ${what} (${JSON.stringify(needle)} in ${selector}): ${e.message}`);
    });
/** The text of the upstream row whose first cell starts with `name`. */
const upstreamRow = (page, name) =>
  page.$$eval('#upstreams tr', (rows, n) => rows.map((r) => r.textContent).find((t) => t.startsWith(n)) || '', name);
/** Waits until the page shows upstream `name` up (or down). */
const waitUpstream = (page, name, state) =>
  page
    .waitForFunction(
      (n, st) => [...document.querySelectorAll('#upstreams tr')].some((r) => r.textContent.startsWith(n) && r.querySelector('.dot.' + st)),
      { timeout: WAIT_MS, polling: 200 },
      name,
      state,
    )
    .catch((e) => {
      throw new Error(`the page never showed ${name} ${state}: ${e.message}`);
    });

describe('the status page on the admin listener', () => {
  let gw;
  let remote;
  let remotePort;
  let chrome;

  before(async () => {
    requireBinaries(BANK, TOOLBOX);
    remote = await startUpstreamHttp(TOOLBOX, [], { label: 'remote' });
    remotePort = new URL(remote.url).port;
    const dir = tempDir('mcpgw-status-');
    gw = await startGateway(
      {
        admin: { host: '127.0.0.1', port: 0 },
        welcome: { strategy: 'none' },
        modes: { readonly: { include_slices: ['read'] } },
        servers: [
          bankStdio(),
          { name: 'remote', transport: 'http', url: remote.url, required: false, timeout_ms: 3000 },
          { name: 'big', transport: 'stdio', command: TOOLBOX, args: ['--tools', '5000', '--name', 'big'] },
        ],
      },
      { dir },
    );
    const admin = await gw.proc.waitForLine('stderr', /admin endpoints on ([\d.]+):(\d+)/);
    gw.admin = `http://${admin[1]}:${admin[2]}`;
    chrome = await launch();
  });
  after(async () => {
    await chrome?.close();
    await gw?.proc.stop();
    await remote?.proc.stop();
  });

  test(
    'upstreams, catalog with filter and modes, calls, sessions and failures, live, from the gateway alone',
    withDiagnostics(async () => {
      // Some traffic first: calls that work, a failed one (its argument must
      // never show) and a refusal (a tool outside the client's mode).
      const c = await connectHttp(gw.url);
      for (let i = 0; i < 5; i++) await c.callTool('remote:echo', { text: `hello ${i}` });
      await c.callTool('bank:list_accounts', {});
      const failed = await c.callTool('remote:fail', { message: 'SECRET-ARGUMENT-42' });
      assert.equal(failed.isError, true);
      const ro = await connectHttp(`${gw.url}/readonly`);
      const hidden = await ro.request('tools/call', { name: 'remote:crash', arguments: {} });
      assert.equal(hidden.error?.code, -32602);

      const { page, requests, errors } = await open(chrome.browser, `${gw.admin}/`);
      await waitText(page, '#live', 'live', 'the first update');
      await waitUpstream(page, 'bank', 'up');
      await waitUpstream(page, 'remote', 'up');
      assert.match(await upstreamRow(page, 'remote'), /2025-11-25|2026-07-28/, 'the protocol spoken');
      assert.match(await upstreamRow(page, 'big'), /50\d\d/, 'tool count of the big server');

      // The catalog: 5,000-odd tools, at most 200 rows, a filter and a mode.
      await waitText(page, '#shown', 'in this mode', 'the catalog');
      assert.match(await text(page, '#shown'), /showing 200 of \d{4} matching/);
      assert.ok((await page.$$('#tools tr')).length <= 200);
      await page.type('#filter', 'gen_4999');
      await waitText(page, '#shown', 'showing 1 of 1 matching', 'the filtered catalog');
      assert.match(await text(page, '#tools'), /big:gen_4999/);
      await page.$eval('#filter', (e) => {
        e.value = '';
      });
      await page.type('#filter', 'balance');
      await waitText(page, '#tools', 'bank:get_account_balance', 'a search by description');
      await page.select('#mode', 'readonly');
      await waitText(page, '#shown', 'in this mode', 'the readonly mode');
      const readonly = await text(page, '#shown');
      assert.doesNotMatch(readonly, /\d{4} in this mode/, `readonly is a small mode: ${readonly}`);

      // Calls per origin, charted; sessions; recent failures and refusals.
      await waitText(page, '#charts', 'remote', 'the chart of remote');
      const chart = await page.$eval('#charts [data-origin="remote"]', (e) => e.textContent);
      assert.match(chart, /6 calls, 1 failed/);
      assert.ok(await page.$('#charts [data-origin="remote"] svg rect'), 'bars drawn');
      assert.match(await text(page, '#session-summary'), /^[2-9] sessions/);
      assert.match(await text(page, '#principals'), /\(anonymous\)/);
      await waitText(page, '#recent', 'remote:fail', 'the failed call');
      const recent = await text(page, '#recent');
      assert.match(recent, /call error/);
      assert.match(recent, /refused/);
      assert.match(recent, /tool not visible in mode readonly/);
      const html = await page.content();
      assert.ok(!html.includes('SECRET-ARGUMENT-42'), 'a call argument reached the page');

      // The HTTP upstream goes down, and the page says so without a reload…
      await remote.proc.stop();
      // (a server without a GET stream is seen down by the next request that cannot reach it)
      const lost = await c.callTool('remote:echo', { text: 'anyone there?' });
      assert.equal(lost.isError, true);
      await waitUpstream(page, 'remote', 'down');
      // The last error, and when, once the gateway's reconnection has failed too.
      await page
        .waitForFunction(
          () => [...document.querySelectorAll('#upstreams tr')].some((r) => r.textContent.startsWith('remote') && / ago$/.test(r.textContent)),
          { timeout: WAIT_MS, polling: 200 },
        )
        .catch(async (e) => {
          throw new Error(`no last error for remote: ${await upstreamRow(page, 'remote')}: ${e.message}`);
        });
      // …and comes back where it was.
      remote = await startUpstreamHttpOn(remotePort);
      await waitUpstream(page, 'remote', 'up');

      if (process.env.MCPGW_SCREENSHOT) {
        await page.select('#mode', 'all');
        await page.$eval('#filter', (e) => {
          e.value = '';
        });
        await page.type('#filter', 'bank');
        await waitText(page, '#tools', 'bank:list_accounts', 'the bank tools');
        await page.screenshot({ path: process.env.MCPGW_SCREENSHOT, fullPage: false });
      }

      const base = new URL(gw.admin).origin;
      const foreign = requests.filter((u) => new URL(u).origin !== base);
      assert.deepEqual(foreign, [], 'the page asked another origin for something');
      assert.deepEqual(errors, [], 'script errors on the page');
      await page.close();
    }),
  );
});

/** The toolbox over HTTP on a given port (an upstream that comes back where it was). */
async function startUpstreamHttpOn(port) {
  const proc = new Proc('remote-again', TOOLBOX, ['--http', String(port)]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)\s*$/);
  return { proc, url: m[1] };
}

describe('the status page on the MCP listener with auth', () => {
  let gw;
  let chrome;

  before(async () => {
    requireBinaries(BANK);
    gw = await startGateway({
      welcome: { strategy: 'none' },
      auth: {
        bearer_tokens: [
          { token: 'tok-ci', name: 'ci' },
          { token: 'tok-ops', name: 'ops' },
        ],
      },
      servers: [bankStdio()],
    });
    chrome = await launch();
  });
  after(async () => {
    await chrome?.close();
    await gw?.proc.stop();
  });

  test(
    'the data needs a token: the page asks for one, refuses a wrong one, then shows sessions per principal',
    withDiagnostics(async () => {
      assert.equal((await httpGet(`${gw.base}/status.json`)).status, 401);
      assert.equal((await httpGet(`${gw.base}/status/catalog.json`, { headers: { authorization: 'Bearer nope' } })).status, 401);
      assert.equal((await httpGet(`${gw.base}/status.json`, { headers: { authorization: 'Bearer tok-ops' } })).status, 200);
      const page0 = await httpGet(`${gw.base}/`);
      assert.equal(page0.status, 200);
      assert.match(page0.headers.get('content-security-policy'), /default-src 'none'/);
      for (let i = 0; i < 3; i++) await connectHttp(gw.url, { headers: { authorization: 'Bearer tok-ci' } });
      await connectHttp(gw.url, { headers: { authorization: 'Bearer tok-ops' } });
      // A refused request: its token must never be shown.
      assert.equal((await httpGet(gw.url, { headers: { authorization: 'Bearer WRONG-TOKEN-77' } })).status, 401);

      const { page, errors } = await open(chrome.browser, `${gw.base}/`);
      await page.waitForSelector('#auth.show', { timeout: WAIT_MS });
      await page.type('#token', 'WRONG-TOKEN-77');
      await page.click('#auth button');
      await waitText(page, '#auth-error', 'refused', 'the refusal of a wrong token');
      await page.$eval('#token', (e) => {
        e.value = '';
      });
      await page.type('#token', 'tok-ops');
      await page.click('#auth button');
      await waitText(page, '#live', 'live', 'the data after the token');
      await waitText(page, '#principals', 'ci', 'sessions per principal');
      const rows = await page.$$eval('#principals tr', (r) => r.map((x) => x.textContent));
      assert.ok(rows.includes('ci3'), JSON.stringify(rows));
      assert.ok(rows.includes('ops1'), JSON.stringify(rows));
      await waitText(page, '#recent', 'refused', 'the refused request');
      assert.ok(!(await text(page, 'main')).includes('WRONG-TOKEN-77'), 'a token reached the status data');
      assert.ok(!(await text(page, 'main')).includes('tok-'), 'a token reached the status data');
      assert.deepEqual(errors, []);
      await page.close();
    }),
  );
});
