// The log level stateful clients ask for reaches stateful upstreams: the
// gateway sends each upstream that offers logging the most verbose level
// any live session takes (sessions that never asked count at the default,
// info), only once some client has asked, and again whenever that changes.
// Every client still gets only its own level (progress.test.mjs and
// server-to-client.test.mjs cover the filtering).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startGateway, connectHttp, pollUntil, readJsonLines, tempDir } from './harness.mjs';

const TALKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'talker-fixture.mjs');


test('logging/setLevel reaches the upstream as the most verbose level of the live sessions', async () => {
  const log = path.join(tempDir(), 'talker.log');
  const gw = await startGateway({ servers: [{ name: 'talk', transport: 'stdio', command: process.execPath, args: [TALKER, log] }] });
  const levels = () =>
    readJsonLines(log)
      .filter((m) => m.method === 'logging/setLevel')
      .map((m) => m.params.level);

  const quiet = await connectHttp(gw.url);
  await quiet.request('tools/list', {});
  assert.deepEqual(levels(), [], 'no client asked: the upstream keeps its own default');

  const a = await connectHttp(gw.url);
  await a.request('logging/setLevel', { level: 'error' });
  // The quiet session still takes info, the default.
  await pollUntil(() => levels().length === 1, { what: 'the first logging/setLevel upstream' });
  assert.deepEqual(levels(), ['info']);

  const b = await connectHttp(gw.url);
  await b.request('logging/setLevel', { level: 'debug' });
  await pollUntil(() => levels().length === 2, { what: 'logging/setLevel debug upstream' });
  assert.deepEqual(levels(), ['info', 'debug']);

  await b.close();
  await pollUntil(() => levels().length === 3, { what: 'the level going back up when the debug session ends' });
  assert.deepEqual(levels(), ['info', 'debug', 'info']);
  await quiet.close();
  await pollUntil(() => levels().length === 4, { what: 'the level of the last session' });
  assert.deepEqual(levels(), ['info', 'debug', 'info', 'error']);
  await a.close();
});
