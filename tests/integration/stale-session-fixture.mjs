// A Streamable HTTP MCP server written with the official SDK
// (@modelcontextprotocol/sdk) the way its README example is: sessions in a
// map, and a request naming a session it does not know (say, after a
// restart) answered with HTTP 400 "Bad Request: No valid session ID
// provided" (--stale 400, the README's way), 400 "Bad Request: Server not
// initialized" (--stale uninitialized: what the SDK's transport itself says
// when a restarted single-session server gets a request before initialize)
// or 404 "Session not found" (--stale 404, the spec's way). It offers no GET
// stream (405), so a gateway learns of a restart only from the answer to
// its next request.
//
//   node stale-session-fixture.mjs --stale 400|uninitialized|404 [--port PORT]
//   prints "listening http://127.0.0.1:PORT/mcp"
//
// Tool: whoami {} -> "pid PID" (tells server instances apart).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const stale = arg('--stale', '400');
const port = Number(arg('--port', '0'));
if (!['400', 'uninitialized', '404'].includes(stale)) {
  process.stderr.write('usage: stale-session-fixture.mjs --stale 400|uninitialized|404 [--port PORT]\n');
  process.exit(2);
}

const transports = new Map();

function newServer() {
  const server = new McpServer({ name: 'stale-session-fixture', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Says which process answers.' }, async () => ({
    content: [{ type: 'text', text: `pid ${process.pid}` }],
  }));
  return server;
}

function refuse(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

const httpServer = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const sid = req.headers['mcp-session-id'];
    if (req.method === 'GET') return refuse(res, 405, -32000, 'Method not allowed: no GET stream here');
    let body;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      return refuse(res, 400, -32700, 'Parse error');
    }
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        if (stale === '400') return refuse(res, 400, -32000, 'Bad Request: No valid session ID provided');
        if (stale === 'uninitialized') return refuse(res, 400, -32000, 'Bad Request: Server not initialized');
        return refuse(res, 404, -32001, 'Session not found');
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, -32000, 'Bad Request: Server not initialized');
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
});

httpServer.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
