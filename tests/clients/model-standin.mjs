// A scripted stand-in for a model API on a loopback port, for driving real
// agent CLIs (Claude Code, Codex) against the real gateway without any model:
// every request the CLI sends is recorded (path + parsed body), and each
// answer comes from a script function the test gives.
//
// Two wire formats:
//   - Anthropic Messages API: POST /v1/messages (Claude Code adds ?beta=true),
//     streaming SSE (message_start, content_block_*, message_delta,
//     message_stop) when the body says stream: true, else one JSON message.
//   - OpenAI Responses API: POST /v1/responses (Codex), SSE
//     (response.created, response.output_item.added/done, response.completed).
//
// The script is called as script(request) with request = {path, body, index}
// and returns a "turn": {text?: string, toolCalls?: [{name, input, namespace?}]}.
// It should decide from the request itself (e.g. the tool results present in
// it), not from a request count: the CLIs send side requests (titles, quota
// probes) whose number is theirs to choose.
import http from 'node:http';

let seq = 0;
const nextId = (prefix) => `${prefix}_standin_${(++seq).toString().padStart(4, '0')}`;

/**
 * Starts the stand-in. Returns {url, port, requests, close()}. `requests` is
 * every request received, in order: {method, path, headers, body (parsed
 * JSON or raw text), index}.
 */
export async function startModelStandin(script) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      let body = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* keep the text */
      }
      const url = new URL(req.url, 'http://127.0.0.1');
      const entry = { method: req.method, path: url.pathname, headers: req.headers, body, index: requests.length };
      requests.push(entry);
      try {
        route(entry, res, script);
      } catch (err) {
        entry.error = String(err?.stack || err);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `stand-in: ${err?.message}` } }));
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve, reject) => server.listen(0, '127.0.0.1', resolve).on('error', reject));
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function route(entry, res, script) {
  const { method, path } = entry;
  if (method === 'POST' && path === '/v1/messages') return anthropicMessages(entry, res, script);
  if (method === 'POST' && path === '/v1/messages/count_tokens') {
    return json(res, 200, { input_tokens: 100 });
  }
  if (method === 'POST' && path === '/v1/responses') return openaiResponses(entry, res, script);
  if (method === 'GET' && path === '/v1/models') return json(res, 200, { object: 'list', data: [] });
  // Anything else (telemetry, update checks) is an unknown route: answered,
  // recorded, never forwarded anywhere.
  return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `stand-in: no ${method} ${path}` } });
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

// ---------------------------------------------------------------------------
// Anthropic Messages API

function anthropicMessages(entry, res, script) {
  const turn = script(entry) || { text: 'OK.' };
  entry.turn = turn;
  const content = [];
  if (turn.text) content.push({ type: 'text', text: turn.text });
  for (const c of turn.toolCalls || []) content.push({ type: 'tool_use', id: nextId('toolu'), name: c.name, input: c.input ?? {} });
  const stopReason = turn.toolCalls?.length ? 'tool_use' : 'end_turn';
  const model = entry.body?.model || 'claude-standin';
  const usage = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id: nextId('msg'), type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage };
  if (!entry.body?.stream) return json(res, 200, message);

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send('message_stop', {});
  res.end();
}

// ---------------------------------------------------------------------------
// OpenAI Responses API

function openaiResponses(entry, res, script) {
  const turn = script(entry) || { text: 'OK.' };
  entry.turn = turn;
  const output = [];
  for (const c of turn.toolCalls || []) {
    const item = {
      type: 'function_call',
      id: nextId('fc'),
      call_id: nextId('call'),
      name: c.name,
      arguments: JSON.stringify(c.input ?? {}),
      status: 'completed',
    };
    if (c.namespace) item.namespace = c.namespace;
    output.push(item);
  }
  if (turn.text) {
    output.push({
      type: 'message',
      id: nextId('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  }
  const model = entry.body?.model || 'gpt-standin';
  const base = { id: nextId('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 110,
  };
  if (entry.body?.stream === false) return json(res, 200, { ...base, status: 'completed', output, usage });

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let n = 0;
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...data })}\n\n`);
  send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  output.forEach((item, output_index) => {
    send('response.output_item.added', { output_index, item: item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : item });
    if (item.type === 'message') {
      const text = item.content[0].text;
      send('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      send('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: text });
      send('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text });
      send('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    }
    send('response.output_item.done', { output_index, item });
  });
  send('response.completed', { response: { ...base, status: 'completed', output, usage } });
  res.end();
}
