// A lean OTLP/HTTP trace receiver for scripts/bench: accepts POST
// /v1/traces and counts requests and bytes; one request in 64 is decoded
// with the official opentelemetry-proto definitions (as
// tests/integration/otlp-collector.mjs does every one) to check the
// encoding under load, so that the receiver's own CPU stays small beside
// the gateway's on a shared machine (a real collector runs elsewhere).
// GET /count answers the counts. Prints "listening http://..." once ready.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js');
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;

const count = { requests: 0, bytes: 0, decoded: 0, decodedSpans: 0, invalid: 0 };
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/count') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(count));
      return;
    }
    const body = Buffer.concat(chunks);
    count.requests++;
    count.bytes += body.length;
    if (count.requests % 64 === 1) {
      try {
        const decoded = ExportTraceServiceRequest.decode(body);
        count.decoded++;
        for (const rs of decoded.resourceSpans) for (const ss of rs.scopeSpans) count.decodedSpans += ss.spans.length;
      } catch {
        count.invalid++;
      }
    }
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));
