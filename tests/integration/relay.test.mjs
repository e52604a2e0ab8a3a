// Issue 45: a tool's answer is relayed as the bytes it came in. Through the
// real gateway, from an upstream that writes its answers byte by byte
// (relay-fixture.mjs) over stdio, an HTTP JSON body and an HTTP SSE event:
// what the gateway does not act on reaches the client exactly as sent
// (members in odd places, escapes, duplicate keys, numbers as written, 200
// levels of nesting, a 4 MiB image), spliced after the client's own id;
// what it acts on or must repair takes the path that reads it (a key
// written with escapes, nesting past 256 levels, ill-formed UTF-8, a
// nextTool, a resource reference of a prefixed server), and the client
// gets what that path always gave.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Proc, REPO, connectHttp, httpGet, pollUntil, requireBinaries, startGateway, startGatewayStdio, textOf, withDiagnostics } from './harness.mjs';
import { parseMetrics, sample } from './metrics-util.mjs';
import { resultOf } from './relay-shapes.mjs';

const FIXTURE = path.join(REPO, 'tests/integration/relay-fixture.mjs');
const strict = new TextDecoder('utf-8', { fatal: true });
let gw, httpUrl;
const OVER = [
  ['relay', {}, 'stdio'],
  ['rh', {}, 'an HTTP JSON body'],
  ['rh', { sse: true }, 'an HTTP SSE event'],
];

before(async () => {
  requireBinaries();
  const http = new Proc('relay-http', process.execPath, [FIXTURE, '--http']);
  const m = await http.waitForLine('stdout', /^listening (http:\S+)/);
  httpUrl = m[1];
  gw = await startGateway({
    servers: [
      { name: 'relay', transport: 'stdio', command: process.execPath, args: [FIXTURE] },
      { name: 'rh', transport: 'http', url: m[1] },
    ],
  });
});

/** POSTs `body` on `c`'s session; the JSON response body's bytes. */
async function postBytes(c, body) {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-session-id': c.session,
      'mcp-protocol-version': c.protocolVersion,
    },
    body,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  return Buffer.from(await res.arrayBuffer());
}

/** POSTs one tools/call on `c`'s session; its id and the response body's bytes. */
async function callBytes(c, name, args) {
  const id = Math.floor(Math.random() * 1e9);
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  return { id, bytes: await postBytes(c, body) };
}

for (const [server, extra, over] of OVER) {
  for (const shape of ['plain', 'error', 'nested', 'huge']) {
    test(
      `the ${shape} result over ${over} reaches the client as the bytes the upstream sent, after the client's id`,
      withDiagnostics(async () => {
        const c = await connectHttp(gw.url);
        const args = { shape, bytes: 4 << 20, ...extra };
        const { id, bytes } = await callBytes(c, `${server}:answer`, args);
        const text = strict.decode(bytes);
        assert.equal(text, `{"jsonrpc":"2.0","id":${id},"result":${resultOf(shape, args.bytes)}}`, text.slice(0, 300));
        await c.close();
      }),
    );
  }

  test(
    `over ${over}, a key written with an escape, nesting past the scan and ill-formed UTF-8 take the reading path`,
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      // The escaped key is read as isError: the client sees it as the
      // gateway writes it, and the call counts as an error.
      const before = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      const escaped = await callBytes(c, `${server}:answer`, { shape: 'escaped_key', ...extra });
      const got = JSON.parse(strict.decode(escaped.bytes));
      assert.equal(got.result.isError, true, JSON.stringify(got));
      assert.equal(textOf(got.result), 'escaped');
      const after = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      const errors = (m) => sample(m, 'mcpgw_tool_calls_total', { server, tool: 'answer', via: 'call', outcome: 'error' }) ?? 0;
      assert.equal(errors(after), errors(before) + 1);

      // Past 256 levels the answer is refused, naming why, as before the relay.
      const deep = await callBytes(c, `${server}:answer`, { shape: 'deep', ...extra });
      assert.match(textOf(JSON.parse(strict.decode(deep.bytes)).result), /malformed answer: .*nested deeper than 256 levels/);

      // Ill-formed bytes become U+FFFD, one per maximal subpart: the
      // client never gets ill-formed UTF-8 (strict decoding above).
      const bad = await callBytes(c, `${server}:answer`, { shape: 'bad_utf8', ...extra });
      assert.equal(textOf(JSON.parse(strict.decode(bad.bytes)).result), 'before \uFFFD\uFFFD after');
      await c.close();
    }),
  );

  test(
    `over ${over}, a relayed isError counts as an error, and a nextTool and a resource reference are acted on`,
    withDiagnostics(async () => {
      const c = await connectHttp(gw.url);
      const before = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      const failed = await c.callTool(`${server}:answer`, { shape: 'error', ...extra });
      assert.equal(failed.isError, true);
      const after = parseMetrics((await httpGet(`${gw.base}/metrics`)).text);
      const errors = (m) => sample(m, 'mcpgw_tool_calls_total', { server, tool: 'answer', via: 'call', outcome: 'error' }) ?? 0;
      assert.equal(errors(after), errors(before) + 1);

      const chained = await c.callTool(`${server}:answer`, { shape: 'next_tool', ...extra });
      assert.match(textOf(chained), /second/, JSON.stringify(chained));
      assert.equal(chained._meta?.nextTool, undefined, JSON.stringify(chained));

      const linked = await c.callTool(`${server}:answer`, { shape: 'resource_link', ...extra });
      assert.equal(linked.content[0].uri, `${server}+file:///notes.txt`, JSON.stringify(linked));
      await c.close();
    }),
  );
}

test(
  'a result with line breaks between its tokens reaches an HTTP and a stdio client whole, on one line, meaning the same',
  withDiagnostics(async () => {
    const want = JSON.parse(resultOf('multiline'));
    const c = await connectHttp(gw.url);
    for (const extra of [{}, { sse: true }]) {
      const { bytes } = await callBytes(c, 'rh:answer', { shape: 'multiline', ...extra });
      assert.deepEqual(JSON.parse(strict.decode(bytes)).result, want);
    }
    await c.close();
    // Over stdio the answer is one line: relayed as it came, its line
    // breaks would split it.
    const { proc, client } = startGatewayStdio({ servers: [{ name: 'rh', transport: 'http', url: httpUrl }] });
    try {
      await client.initialize();
      for (const extra of [{}, { sse: true }]) assert.deepEqual(await client.callTool('rh:answer', { shape: 'multiline', ...extra }), want);
      assert.deepEqual(client.badLines, []);
    } finally {
      await proc.stop();
    }
  }),
);

/** POSTs `body`, a tools/call written by hand, on `c`'s session; the answer's result. */
async function postRaw(c, body) {
  return JSON.parse(strict.decode(await postBytes(c, body))).result;
}

// Numbers as written, escapes, a duplicate key, nesting, 1 MiB of text:
// what only a relay of the bytes keeps.
const ODD_ARGUMENTS = `{ "n" : 2.50, "s":"caf\\u00e9 \\ud83d\\ude00 \\/", "dup":1, "dup":2, "deep":${'['.repeat(100)}1e2${']'.repeat(100)}, "big":"${'QUJD'.repeat(1 << 18)}" }`;

test(
  "a tool call's arguments reach the upstream as the bytes the client sent, over stdio and HTTP, from an HTTP and a stdio client",
  withDiagnostics(async () => {
    const call = (server, id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${server}:request","arguments":${ODD_ARGUMENTS}}}`;
    const c = await connectHttp(gw.url);
    for (const server of ['relay', 'rh']) {
      const sent = textOf(await postRaw(c, call(server, 7)));
      assert.ok(sent.includes(`"arguments":${ODD_ARGUMENTS}`), sent.slice(0, 300));
      // The rest is the gateway's own request, whole.
      assert.equal(JSON.parse(sent).params.name, 'request');
    }
    await c.close();
    const { proc, client } = startGatewayStdio({ servers: [{ name: 'rh', transport: 'http', url: httpUrl }] });
    try {
      await client.initialize();
      const answered = new Promise((resolve) => {
        const seen = client.proc._onLine;
        client.proc._onLine = (stream, line) => {
          seen(stream, line);
          if (stream === 'stdout' && line.includes('"id":"raw-1"')) resolve(JSON.parse(line));
        };
      });
      client.write(call('rh', '"raw-1"'));
      const sent = textOf((await answered).result);
      assert.ok(sent.includes(`"arguments":${ODD_ARGUMENTS}`), sent.slice(0, 300));
    } finally {
      await proc.stop();
    }
  }),
);

test(
  'arguments with a line break between their tokens are written again on one line (a stdio upstream reads lines)',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"relay:request","arguments":{\n "n": 2.50,\r\n "s": "x"\n}}}`;
    const sent = textOf(await postRaw(c, body));
    assert.deepEqual(JSON.parse(sent).params.arguments, { n: 2.5, s: 'x' });
    assert.ok(!sent.includes('2.50'), sent);
    await c.close();
  }),
);

test(
  'a JSON body cut off halfway (its length announced, the connection closed) is an error naming why; the next call is relayed whole',
  withDiagnostics(async () => {
    const c = await connectHttp(gw.url);
    const cut = await c.callTool('rh:answer', { shape: 'plain', bytes: 4 << 20, cut: true });
    assert.equal(cut.isError, true, JSON.stringify(cut).slice(0, 300));
    assert.match(textOf(cut), /rh/);
    assert.match(textOf(cut), /connection closed while reading the response/, textOf(cut));
    const { id, bytes } = await callBytes(c, 'rh:answer', { shape: 'plain', bytes: 4 << 20 });
    assert.equal(strict.decode(bytes), `{"jsonrpc":"2.0","id":${id},"result":${resultOf('plain', 4 << 20)}}`);
    await c.close();
    assert.ok(gw.proc.alive, 'the gateway died');
  }),
);

test(
  'a stdio client gets large relayed results byte-exact, each on a line of its own, with other answers written around them',
  withDiagnostics(async () => {
    const { proc, client } = startGatewayStdio({
      servers: [
        { name: 'relay', transport: 'stdio', command: process.execPath, args: [FIXTURE] },
        { name: 'rh', transport: 'http', url: httpUrl },
      ],
    });
    try {
      await client.initialize();
      const lines = new Map();
      const all = new Promise((resolve) => {
        const seen = client.proc._onLine;
        client.proc._onLine = (stream, line) => {
          seen(stream, line);
          const id = stream === 'stdout' && /^\{"jsonrpc":"2\.0","id":"(big-\d|small)"/.exec(line)?.[1];
          if (id) lines.set(id, line);
          if (lines.size === 4) resolve();
        };
      });
      const bytes = 4 << 20;
      const calls = [
        ['big-1', 'relay:answer', { shape: 'huge', bytes }],
        ['big-2', 'rh:answer', { shape: 'huge', bytes }],
        ['small', 'relay:echo', { text: 'between' }],
        ['big-3', 'rh:answer', { shape: 'huge', bytes, sse: true }],
      ];
      for (const [id, name, args] of calls)
        client.write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }));
      await all;
      for (const id of ['big-1', 'big-2', 'big-3'])
        assert.equal(lines.get(id), `{"jsonrpc":"2.0","id":"${id}","result":${resultOf('huge', bytes)}}`, id);
      assert.deepEqual(JSON.parse(lines.get('small')).result, { content: [{ type: 'text', text: 'between' }] });
      assert.deepEqual(client.badLines, []);
    } finally {
      await proc.stop();
    }
  }),
);

test(
  "large answers' buffers are kept while answers come, and given back to the system once the gateway is idle",
  withDiagnostics(async () => {
    const own = await startGateway({ servers: [{ name: 'rh', transport: 'http', url: httpUrl }] }, { label: 'mcpgw-buffers' });
    try {
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${own.proc.pid}/status`, 'utf8'))[1]) << 10;
      const c = await connectHttp(own.url);
      assert.equal(textOf(await c.callTool('rh:echo', { text: 'warm' })), 'warm');
      const base = rss();
      const bytes = 8 << 20;
      for (let i = 0; i < 3; i++) {
        const r = await c.callTool('rh:answer', { shape: 'huge', bytes });
        assert.deepEqual(r, JSON.parse(resultOf('huge', bytes)));
      }
      // The last answer's buffer is kept for the next one...
      assert.ok(rss() >= base + (7 << 20), `rss ${rss()} base ${base}`);
      // ...and given back within seconds of the last (the deadline only stops a hung test).
      await pollUntil(() => rss() <= base + (3 << 20), { timeoutMs: 30000, intervalMs: 200, what: 'the kept buffer given back' });
      await c.close();
    } finally {
      await own.proc.stop();
    }
  }),
);
