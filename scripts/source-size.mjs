// The size rules of gateway/: no file over 600 lines, no function over 80.
// Prints what breaks them (file:line, what, lines) and exits 1 if anything
// does. A function is a brace block opened by a ")" (a definition, a
// lambda or a coroutine body) that is not inside another such block; its
// lines run from its opening brace to its closing one. The sources are
// clang-formatted, so strings, comments and character literals are the
// only places where a brace does not count, and they are skipped.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const MAX_FILE_LINES = 600;
export const MAX_FUNCTION_LINES = 80;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(cpp|hpp)$/.test(name) ? [path] : [];
  });
}

/** The text with comments, strings and character literals blanked (newlines kept). */
function code(text) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const two = text.slice(i, i + 2);
    if (two === '//') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (two === '/*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (/R"([^(]*)\(/y.test(text.slice(i, i + 20))) {
      const delim = /R"([^(]*)\(/.exec(text.slice(i, i + 20))[1];
      const close = `)${delim}"`;
      const end = text.indexOf(close, i);
      const stop = end < 0 ? text.length : end + close.length;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (text[i] === '"' || (text[i] === "'" && !/[0-9a-fA-F]/.test(text[i - 1] ?? ''))) {
      const q = text[i];
      let j = i + 1;
      while (j < text.length && text[j] !== q && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out += ' '.repeat(j + 1 - i);
      i = j + 1;
    } else {
      out += text[i++];
    }
  }
  return out;
}

/** Functions over the limit in one file: [{line, lines}]. */
export function longFunctions(text, limit = MAX_FUNCTION_LINES) {
  const src = code(text);
  const found = [];
  const stack = [];  // per open brace: {fn: opened a function, line}
  let line = 1;
  let since = '';    // code since the last ; { or }
  for (const c of src) {
    if (c === '\n') line++;
    if (c === '{') {
      const head = since.trim();
      const inFunction = stack.some((b) => b.fn);
      const opensFunction = !inFunction && /\)[^()]*$/.test(head) &&
        !/^(if|for|while|switch|catch|else if)\b/.test(head.split('\n').pop().trim()) &&
        !/^(namespace|class|struct|enum|union)\b/.test(head);
      stack.push({ fn: opensFunction, line });
      since = '';
    } else if (c === '}') {
      const open = stack.pop();
      if (open?.fn && line - open.line + 1 > limit) found.push({ line: open.line, lines: line - open.line + 1 });
      since = '';
    } else if (c === ';') {
      since = '';
    } else {
      since += c;
    }
  }
  return found;
}

export function check(root) {
  const problems = [];
  for (const path of sources(join(root, 'gateway'))) {
    const text = readFileSync(path, 'utf8');
    const name = relative(root, path);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_FILE_LINES) problems.push(`${name}: ${lines} lines (at most ${MAX_FILE_LINES})`);
    for (const f of longFunctions(text))
      problems.push(`${name}:${f.line}: a function of ${f.lines} lines (at most ${MAX_FUNCTION_LINES})`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = check(process.argv[2] ?? process.cwd());
  for (const p of problems) console.log(p);
  process.exit(problems.length ? 1 : 0);
}
