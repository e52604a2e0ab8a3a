// The gateway's mutexes are the annotated ones of
// gateway/util/thread_annotations.hpp (util::Mutex, MutexLock, UniqueLock,
// SharedMutex, ReaderLock, WriterLock), which Clang's thread-safety analysis
// (scripts/thread-safety) follows: a bare std::mutex, std::shared_mutex or
// std::lock_guard (and the like) in gateway/, config/ or examples/ is a lock
// it cannot see, so the fields behind it go unchecked. Only
// thread_annotations.hpp, which wraps them, names them. The plugin host
// (gateway/plugin_host/) is a program of its own whose only contract is the
// plugin ABI: it includes nothing of the gateway but plugin.h and the
// framing, so it uses the standard locks. The checker itself is tested on
// samples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SCANNED = ['gateway', 'config', 'examples'];
const WRAPPER = 'gateway/util/thread_annotations.hpp';
const OWN_PROGRAM = 'gateway/plugin_host/';
const BARE = /\bstd::(mutex|shared_mutex|recursive_mutex|timed_mutex|shared_timed_mutex|lock_guard|unique_lock|scoped_lock|shared_lock)\b/g;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(cpp|hpp|h|cc)$/.test(name) ? [path] : [];
  });
}

/** The text with comments and string literals blanked (newlines kept). */
function code(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, (c) => ' '.repeat(c.length))
    .replace(/"(?:[^"\\\n]|\\.)*"/g, (c) => ' '.repeat(c.length));
}

/** The bare standard locks in one file's text: [{line, name}]. */
export function bareLocks(text) {
  const src = code(text);
  const found = [];
  for (const m of src.matchAll(BARE)) {
    found.push({ line: src.slice(0, m.index).split('\n').length, name: m[0] });
  }
  return found;
}

test('the checker finds std::mutex, std::shared_mutex and std::lock_guard, and the like', () => {
  const text = [
    'class A {',
    '  std::mutex mu_;',
    '  mutable std::shared_mutex rw_;',
    '  void f() { std::lock_guard lk(mu_); }',
    '  void g() { std::unique_lock<std::mutex> lk(mu_); }',
    '};',
  ].join('\n');
  assert.deepEqual(bareLocks(text), [
    { line: 2, name: 'std::mutex' },
    { line: 3, name: 'std::shared_mutex' },
    { line: 4, name: 'std::lock_guard' },
    { line: 5, name: 'std::unique_lock' },
    { line: 5, name: 'std::mutex' },
  ]);
});

test('the checker ignores the annotated wrappers, comments and strings', () => {
  const text = [
    '// libstdc++\'s std::mutex carries no annotations',
    '/* std::lock_guard */',
    'util::Mutex mu_;',
    'util::MutexLock lk(mu_);',
    'const char* s = "std::mutex";',
    'std::mutex_like_name x;',
    'std::once_flag once;',
  ].join('\n');
  assert.deepEqual(bareLocks(text), []);
});

test('no bare std::mutex, std::shared_mutex or std::lock_guard outside util/thread_annotations.hpp', () => {
  const found = [];
  for (const dir of SCANNED) {
    for (const path of sources(join(root, dir))) {
      const rel = relative(root, path);
      if (rel === WRAPPER || rel.startsWith(OWN_PROGRAM)) continue;
      for (const { line, name } of bareLocks(readFileSync(path, 'utf8')))
        found.push(`${rel}:${line}: ${name} (use util::Mutex and its locks, util/thread_annotations.hpp)`);
    }
  }
  assert.deepEqual(found, []);
});
