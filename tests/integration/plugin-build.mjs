// Building a plugin outside the tree, as a user of the SDK would: running
// cmake (and other commands) to their end, and the example of
// docs/plugins.md. Shared by the out-of-tree SDK test and the Debian
// package test.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { REPO } from './harness.mjs';

const CMAKE_MS = 120000;

/** Runs a command to its end (killed after `timeoutMs`); {code, signal, output (both streams), stdout}. */
export function run(command, args, { cwd, env, timeoutMs = CMAKE_MS } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (c) => {
      output += c;
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, output: `${output}\n${err}`, stdout });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, stdout });
    });
  });
}

export function assertRan(r, what) {
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, `${what} failed:\n${r.output}`);
}

/** The fenced block after `<!-- plugin-example:NAME -->` in docs/plugins.md. */
export function docsExample(name) {
  const doc = readFileSync(path.join(REPO, 'docs', 'plugins.md'), 'utf8');
  const at = doc.indexOf(`<!-- plugin-example:${name} -->`);
  assert.ok(at >= 0, `docs/plugins.md has no <!-- plugin-example:${name} --> block`);
  const m = doc.slice(at).match(/```[a-z]*\n([\s\S]*?)```/);
  assert.ok(m, `no code block after <!-- plugin-example:${name} -->`);
  return m[1];
}

