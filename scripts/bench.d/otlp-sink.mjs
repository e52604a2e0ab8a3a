// A lean OTLP/HTTP trace receiver for scripts/bench: accepts POST
// /v1/traces, decodes each body with the official opentelemetry-proto
// definitions (as tests/integration/otlp-collector.mjs does) and counts the
// spans; GET /count answers the count. Prints "listening http://..." once
// ready.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js');
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;

let spans = 0;
let requests = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/count') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ spans, requests }));
      return;
    }
    const decoded = ExportTraceServiceRequest.decode(Buffer.concat(chunks));
    for (const rs of decoded.resourceSpans) for (const ss of rs.scopeSpans) spans += ss.spans.length;
    requests++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));
