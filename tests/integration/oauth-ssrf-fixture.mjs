// A hostile upstream and authorization server for the tests of what an
// upstream can make the gateway fetch: a plain HTTP server on 127.0.0.1
// that answers each path as its script says, so that an upstream's 401, its
// protected resource metadata and an issuer's metadata can name any
// address, in any spelling; and that records every request it is sent, so
// that a test can tell the gateway never connected where it was refused
// (a spelling of loopback, or 0.0.0.0, reaches this server if connected to).
//
//   node oauth-ssrf-fixture.mjs <script.json>
//
// script: {routes: {"<path>": {status, headers?, body?}}}; in every string,
// "{self}" stands for this server's origin (http://127.0.0.1:PORT) and
// "{port}" for its port. It prints "listening http://127.0.0.1:PORT".
// GET /__hits answers the requests so far ([{method, path}], itself not
// among them); a path without a route answers 404.
import fs from 'node:fs';
import http from 'node:http';

const script = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const hits = [];
let self = '';
let port = 0;

/** `v` with the placeholders filled in, recursively. */
function filled(v) {
  if (typeof v === 'string') return v.replaceAll('{self}', self).replaceAll('{port}', String(port));
  if (Array.isArray(v)) return v.map(filled);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, filled(x)]));
  return v;
}

const server = http.createServer((req, res) => {
  const path = req.url.split('?')[0];
  req.resume();
  req.on('end', () => {
    if (req.method === 'GET' && path === '/__hits') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(hits));
      return;
    }
    hits.push({ method: req.method, path });
    const route = script.routes[path];
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    const r = filled(route);
    res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
    res.end(r.body === undefined ? '' : JSON.stringify(r.body));
  });
});
server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  self = `http://127.0.0.1:${port}`;
  process.stdout.write(`listening ${self}\n`);
});
process.on('SIGTERM', () => process.exit(0));
