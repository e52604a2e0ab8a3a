// Starting fault-fixture.mjs (a misbehaving HTTP upstream) from a test.
import path from 'node:path';
import { Proc, REPO } from './harness.mjs';

const FIXTURE = path.join(REPO, 'tests', 'integration', 'fault-fixture.mjs');

/** Starts the fault fixture with `args`; resolves with {proc, url}. */
export async function startFault(args, label = 'fault') {
  const proc = new Proc(label, process.execPath, [FIXTURE, ...args]);
  const m = await proc.waitForLine('stdout', /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/);
  return { proc, url: m[1] };
}
