// MCP Apps in a real host through mcpgw: headless Chromium (Debian's, a
// child of the test) runs a host page built on the official AppBridge and
// the official SDK v2 client over Streamable HTTP to the real gateway, in
// front of the official example app servers from npm. The host lists the
// tools, calls the UI tool, reads its resourceUri, renders the view in a
// sandboxed iframe and hands it input and result; the view then makes its
// own server call (the example's button, the system monitor's polling).
//
// Cases: one app server; two copies of it as alpha (stdio) and beta
// (Streamable HTTP) rendered at once, each view's button reaching its own
// server; a second example app (system monitor, whose view polls an
// app-only tool); a 2025-11-25 and a 2026-07-28 client; a mode that hides
// the app's tool (the view's call is refused like any other).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, readFileSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import puppeteer from 'puppeteer-core';
import {
  Proc,
  closedPort,
  REPO,
  pollUntil,
  readJsonLines,
  startGateway,
  tempDir,
  withDiagnostics,
} from '../integration/harness.mjs';

const NODE = process.execPath;
const BASIC = path.join(REPO, 'node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js');
const SYSMON = path.join(REPO, 'node_modules/@modelcontextprotocol/server-system-monitor/dist/index.js');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/;

/** Serves the host page and its bundle on a loopback port. */
async function startHostPage(bundle) {
  const page = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>mcpgw test host</title></head>' +
    '<body style="font-family: sans-serif; margin: 8px"><script type="module" src="/host.js"></script></body></html>';
  const server = http.createServer((req, res) => {
    if (req.url === '/host.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(bundle);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(page);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

/** The text of `selector` in the view frame named `frame`, once it matches `re`. */
async function viewText(page, frame, selector, re, what) {
  let last = '';
  await pollUntil(
    async () => {
      const f = page.frames().find((x) => x.name() === frame);
      if (!f) return false;
      last = await f.$eval(selector, (el) => el.textContent).catch(() => '');
      return re.test(last);
    },
    { timeoutMs: 20000, what: `${what} (last: ${JSON.stringify(last)})` },
  );
  return last;
}

async function click(page, frame, selector) {
  const f = page.frames().find((x) => x.name() === frame);
  await f.click(selector);
}

/** Audit lines of client calls, by the server each reached. */
function callsByServer(auditFile) {
  const counts = {};
  for (const l of readJsonLines(auditFile))
    if (l.event === 'call') counts[l.server] = (counts[l.server] || 0) + 1;
  return counts;
}

describe('MCP Apps in headless Chromium through mcpgw', { timeout: 180000 }, () => {
  let host, browser, gw, betaProc, dir, auditFile;

  before(async () => {
    dir = tempDir('mcpgw-apps-');
    const built = await esbuild.build({
      entryPoints: [path.join(REPO, 'tests/interop/apps/host.js')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    host = await startHostPage(built.outputFiles[0].text);
    const betaPort = await closedPort();
    betaProc = new Proc('beta (basic app over HTTP)', NODE, [BASIC], { env: { PORT: String(betaPort) } });
    await betaProc.waitForLine('stdout', /listening on/);
    auditFile = path.join(dir, 'audit.jsonl');
    gw = await startGateway(
      {
        listen: { allowed_origins: [host.origin] },
        audit: { path: auditFile, arguments: 'none' },
        modes: { nopoll: { exclude_tools: ['sysmon:poll-system-stats'] } },
        servers: [
          { name: 'alpha', transport: 'stdio', command: NODE, args: [BASIC, '--stdio'] },
          { name: 'beta', transport: 'http', url: `http://127.0.0.1:${betaPort}/mcp` },
          { name: 'sysmon', transport: 'stdio', command: NODE, args: [SYSMON, '--stdio'] },
        ],
      },
      { dir },
    );
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: path.join(dir, 'chromium-profile'),
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    });
  });

  after(async () => {
    await browser?.close();
    await gw?.proc.stop();
    await betaProc?.stop();
    await new Promise((resolve) => (host ? host.server.close(resolve) : resolve()));
  });

  /** A fresh host page connected to `url`. */
  async function hostPage(url, opts = {}) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 800 });
    await page.goto(host.origin, { waitUntil: 'load' });
    await page.waitForFunction(() => window.mcpHost !== undefined);
    const info = await page.evaluate((u, o) => window.mcpHost.connect(u, o), url, opts);
    return { page, info };
  }

  test('one app server, 2025-11-25 client: the view renders the result and its button reaches its server',
    withDiagnostics(async () => {
      const { page, info } = await hostPage(gw.url);
      assert.equal(info.protocol, '2025-11-25');
      assert.deepEqual(info.extensions['io.modelcontextprotocol/ui'], { mimeTypes: ['text/html;profile=mcp-app'] });
      const alpha = info.tools.find((t) => t.name === 'alpha:get-time');
      assert.equal(alpha.meta.ui.resourceUri, 'ui://alpha/get-time/mcp-app.html');
      assert.equal(alpha.meta['ui/resourceUri'], 'ui://alpha/get-time/mcp-app.html');
      const before = callsByServer(auditFile).alpha || 0;
      const opened = await page.evaluate(() => window.mcpHost.open('alpha:get-time'));
      assert.equal(opened.uri, 'ui://alpha/get-time/mcp-app.html');
      assert.ok(opened.injected, 'the served view carries the view script');
      const first = await viewText(page, opened.frame, '#server-time', ISO_TIME, 'the tool result in the view');
      await click(page, opened.frame, '#get-time-btn');
      await viewText(page, opened.frame, '#server-time', new RegExp(`^(?!${first}$)\\d{4}-`), 'a new time after the click');
      await pollUntil(() => callsByServer(auditFile).alpha === before + 2, { what: "the view's call audited on alpha" });
      await page.close();
    }));

  test('two copies as alpha (stdio) and beta (HTTP) at once, 2026-07-28 client: each view reaches its own server',
    withDiagnostics(async () => {
      const { page, info } = await hostPage(gw.url, { modern: true });
      assert.equal(info.protocol, '2026-07-28');
      const opened = callsByServer(auditFile);
      const a = await page.evaluate(() => window.mcpHost.open('alpha:get-time'));
      const b = await page.evaluate(() => window.mcpHost.open('beta:get-time'));
      assert.equal(b.uri, 'ui://beta/get-time/mcp-app.html');
      await viewText(page, a.frame, '#server-time', ISO_TIME, "alpha's result in alpha's view");
      await viewText(page, b.frame, '#server-time', ISO_TIME, "beta's result in beta's view");
      // The audit line of a call is written after its answer, so the view can
      // show a result before its line is in the file: count from there.
      await pollUntil(() => {
        const now = callsByServer(auditFile);
        return now.alpha === (opened.alpha || 0) + 1 && now.beta === (opened.beta || 0) + 1;
      }, { what: 'both opening calls audited' });
      const start = callsByServer(auditFile);
      await click(page, a.frame, '#get-time-btn');
      await pollUntil(() => callsByServer(auditFile).alpha === (start.alpha || 0) + 1, { what: "alpha's click on alpha" });
      assert.equal(callsByServer(auditFile).beta || 0, start.beta || 0, "alpha's click did not reach beta");
      await click(page, b.frame, '#get-time-btn');
      await pollUntil(() => callsByServer(auditFile).beta === (start.beta || 0) + 1, { what: "beta's click on beta" });
      assert.equal(callsByServer(auditFile).alpha, (start.alpha || 0) + 1, "beta's click did not reach alpha");
      const shot = path.join(dir, 'apps-through-mcpgw.png');
      await page.screenshot({ path: shot, clip: { x: 0, y: 0, width: 980, height: 390 } });
      if (process.env.MCPGW_APPS_SCREENSHOT) {
        mkdirSync(path.dirname(process.env.MCPGW_APPS_SCREENSHOT), { recursive: true });
        copyFileSync(shot, process.env.MCPGW_APPS_SCREENSHOT);
      }
      assert.ok(readFileSync(shot).length > 1000);
      await page.close();
    }));

  test("a second example app: the system monitor's view polls its app-only tool through the gateway",
    withDiagnostics(async () => {
      const { page, info } = await hostPage(gw.url);
      const poll = info.tools.find((t) => t.name === 'sysmon:poll-system-stats');
      assert.deepEqual(poll.meta.ui.visibility, ['app'], 'app-only tools are listed as they are');
      const v = await page.evaluate(() => window.mcpHost.open('sysmon:get-system-info'));
      assert.equal(v.uri, 'ui://sysmon/system-monitor/mcp-app.html');
      await viewText(page, v.frame, '#memory-percent', /^\d+(\.\d+)?%$/, 'memory use from poll-system-stats');
      await page.close();
    }));

  test("a mode that hides the app's tool: the view's call is refused like any other",
    withDiagnostics(async () => {
      const { page, info } = await hostPage(`${gw.url}/nopoll`);
      assert.ok(!info.tools.some((t) => t.name === 'sysmon:poll-system-stats'));
      const v = await page.evaluate(() => window.mcpHost.open('sysmon:get-system-info'));
      await viewText(page, v.frame, '#status-text', /^Error$/, 'the refused poll shown as an error');
      await pollUntil(
        () => readJsonLines(auditFile).some((l) => l.event === 'refused' && l.mode === 'nopoll' && l.tool === 'poll-system-stats'),
        { what: 'the refusal audited' },
      );
      await page.close();
    }));
});
