// The one MCP POST the bench drivers make (concurrency.mjs, soak.mjs): a
// JSON-RPC body to a Streamable HTTP endpoint, on the session when given.
// It never rejects: a transport failure or timeout answers status 0 with the
// reason, so a driver counts it instead of dying.
import http from 'node:http';

/// POSTs `body` to `target` (a URL). `agent`: false = a connection of its
/// own, closed after; an http.Agent = keep-alive reuse.
export function post(target, body, session, { agent = false, timeoutMs = 120_000 } = {}) {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(payload),
          ...(agent ? {} : { connection: 'close' }),
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        timeout: timeoutMs,
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, data }));
        res.on('error', (e) => resolve({ status: 0, data: String(e) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, data: String(e) }));
    req.end(payload);
  });
}
