// An MCP server over Streamable HTTP (official SDK v1) with one tool,
// `echo_headers`, answering the HTTP headers of the request that called it
// (as structuredContent.headers, names lower-cased). Prints
// "listening <url>" once it accepts connections.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

function makeServer() {
  const server = new McpServer({ name: 'headers-echo', version: '1.0.0' });
  server.registerTool('echo_headers', { description: 'Answers the request headers it was called with' }, async (extra) => {
    const headers = extra?.requestInfo?.headers ?? {};
    return { content: [{ type: 'text', text: JSON.stringify(headers) }], structuredContent: { headers } };
  });
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  // Stateless: one server and transport per request.
  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
});
httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
process.on('SIGTERM', () => process.exit(0));
