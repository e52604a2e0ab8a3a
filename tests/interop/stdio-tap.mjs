// A transparent tap for a stdio MCP server: runs COMMAND ARGS... with its
// stdin, stdout and stderr passed through, and appends every line written
// to the server's stdin (what the gateway sends it) to LOG_FILE, so that a
// test can see, for instance, that notifications/cancelled reached a
// third-party server it cannot otherwise observe.
//
//   node stdio-tap.mjs LOG_FILE -- COMMAND [ARGS...]
//
// The server ends when its stdin ends or this process is signalled; this
// process exits with it.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import readline from 'node:readline';

const [log, sep, command, ...args] = process.argv.slice(2);
if (!log || sep !== '--' || !command) {
  process.stderr.write('usage: stdio-tap.mjs LOG_FILE -- COMMAND [ARGS...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
child.stdin.on('error', () => {});
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  appendFileSync(log, `${line}\n`);
  child.stdin.write(`${line}\n`);
});
process.stdin.on('end', () => child.stdin.end());
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
