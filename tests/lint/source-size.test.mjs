// gateway/ keeps to its size rules (scripts/source-size.mjs): no file over
// 600 lines, no function over 80. The checker itself is tested on samples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { check, longFunctions } from '../../scripts/source-size.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const body = (n) => Array.from({ length: n }, (_, i) => `  int x${i} = ${i};`).join('\n');

test('the checker counts a function from its opening brace to its closing one', () => {
  const text = `namespace a {\nint f(int y) {\n${body(79)}\n}\n}  // namespace a\n`;
  assert.deepEqual(longFunctions(text, 80), [{ line: 2, lines: 81 }]);
  assert.deepEqual(longFunctions(text, 81), []);
});

test('the checker sees a lambda inside a function as part of it, and ignores braces in strings and comments', () => {
  const text = `void g() {\n  auto l = [](int v) {\n${body(10)}\n  };\n  const char* s = "{{{";\n  // }}}\n  char c = '}';\n}\n`;
  assert.deepEqual(longFunctions(text, 17), []);
  assert.deepEqual(longFunctions(text, 16), [{ line: 1, lines: 17 }]);
});

test('the checker does not count control blocks, classes or namespaces as functions', () => {
  const text = `namespace n {\nstruct S {\n  void m() {\n    if (true) {\n${body(3)}\n    }\n  }\n};\n}\n`;
  assert.deepEqual(longFunctions(text, 5), [{ line: 3, lines: 7 }]);
});

test('no file of gateway/ over 600 lines, no function over 80', () => {
  assert.deepEqual(check(root), []);
});
