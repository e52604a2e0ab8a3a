// scripts/bench's status section: keeps the status page of a gateway open
// in headless Chromium (Debian's, through puppeteer-core), refreshing every
// two seconds as a person watching it would, until this process is
// stopped. Also opens N sessions first (they stay open: the page then
// groups them by principal on every refresh). Prints "open" once the page
// showed its first update.
//   node status-page.mjs ADMIN_URL MCP_URL SESSIONS
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const [admin, mcp, sessions = '0'] = process.argv.slice(2);
const init = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
for (let done = 0; done < Number(sessions); done += 100) {
  await Promise.all(
    Array.from({ length: Math.min(100, Number(sessions) - done) }, async () => {
      const r = await fetch(mcp, { method: 'POST', headers, body: init });
      await r.text();
    }),
  );
}
console.log(`sessions ${sessions}`);
if (!admin) process.exit(0);
const profile = mkdtempSync(path.join(os.tmpdir(), 'mcpgw-bench-chromium-'));
const browser = await puppeteer.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  userDataDir: profile,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const stop = async () => {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
const page = await browser.newPage();
await page.goto(`${admin}/`);
await page.waitForFunction(() => document.querySelector('#shown')?.textContent.includes('in this mode'), { timeout: 120000 });
console.log('open');
