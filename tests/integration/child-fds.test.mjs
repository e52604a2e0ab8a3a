// An upstream child inherits its three pipes and nothing else of the
// gateway's: not the listening socket (a child holding it would keep the
// port after the gateway exits), not clients' connections, not the loop's
// own descriptors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { connectHttp, pidFromResult, requireBinaries, startGateway, toolboxStdio, withDiagnostics } from './harness.mjs';

function openFds(pid) {
  const out = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out[fd] = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      // closed between the listing and the read
    }
  }
  return out;
}

test(
  "a stdio upstream's descriptors are its stdin, stdout and stderr only",
  withDiagnostics(async () => {
    requireBinaries();
    const gw = await startGateway({ servers: [toolboxStdio()] }, { label: 'mcpgw-child-fds' });
    const c = await connectHttp(gw.url);
    const pid = pidFromResult(await c.callTool('toolbox:pid'));
    const fds = openFds(pid);
    for (const fd of ['0', '1', '2']) assert.match(fds[fd] ?? '', /^pipe:/, `fd ${fd} of the child: ${JSON.stringify(fds)}`);
    const inherited = Object.entries(fds).filter(([fd, what]) => Number(fd) > 2 && /^(socket|pipe|anon_inode):/.test(what));
    // The toolbox opens nothing of this kind itself over stdio.
    assert.deepEqual(inherited, [], `the child holds descriptors of the gateway: ${JSON.stringify(fds)}`);
    await c.close();
  }),
);
