// A collector-side OTLP/HTTP trace receiver for the tests: POST /v1/traces
// bodies are decoded with the official opentelemetry-proto definitions (the
// static protobufjs code the OpenTelemetry JS project generates from them,
// shipped in @opentelemetry/otlp-proto-exporter-base) and verified against
// them, so a field the gateway writes under a wrong number or type fails
// the test. `answer(n)` picks the HTTP status of the n-th request (0-based):
// 200, or a failure the exporter must handle (503: retry; 400: drop).
import http from 'node:http';
import { createRequire } from 'node:module';
import { pollUntil } from './harness.mjs';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js');
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = root.opentelemetry.proto.collector.trace.v1;

const hex = (bytes) => Buffer.from(bytes || []).toString('hex');

/** An AnyValue as a plain JS value. */
function anyValue(v) {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  return v;
}

function attributes(list) {
  return Object.fromEntries((list || []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/** Starts the receiver on a free loopback port: {url, requests, spans, waitFor, close}. */
export async function startCollector({ answer = () => 200 } = {}) {
  const requests = []; // {status, headers, spanCount}
  const spans = []; // flattened, in arrival order
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const status = req.method === 'POST' && req.url === '/v1/traces' ? answer(requests.length) : 404;
      const entry = { status, headers: req.headers, spanCount: 0, error: undefined };
      requests.push(entry);
      if (status === 200) {
        try {
          const decoded = ExportTraceServiceRequest.decode(Buffer.concat(chunks));
          const why = ExportTraceServiceRequest.verify(decoded);
          if (why) throw new Error(`not a valid ExportTraceServiceRequest: ${why}`);
          const obj = ExportTraceServiceRequest.toObject(decoded, { longs: String, enums: Number, defaults: false });
          for (const rs of obj.resourceSpans || []) {
            const resource = attributes(rs.resource?.attributes);
            for (const ss of rs.scopeSpans || []) {
              for (const s of ss.spans || []) {
                entry.spanCount++;
                spans.push({
                  traceId: hex(s.traceId),
                  spanId: hex(s.spanId),
                  parentSpanId: hex(s.parentSpanId),
                  name: s.name,
                  kind: s.kind,
                  start: BigInt(s.startTimeUnixNano),
                  end: BigInt(s.endTimeUnixNano),
                  attributes: attributes(s.attributes),
                  status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
                  resource,
                  scope: { name: ss.scope?.name, version: ss.scope?.version },
                });
              }
            }
          }
        } catch (e) {
          entry.error = String(e);
          res.writeHead(400, { 'content-type': 'text/plain' });
          res.end(entry.error);
          return;
        }
        const body = ExportTraceServiceResponse.encode(ExportTraceServiceResponse.create({})).finish();
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(Buffer.from(body));
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(`answered ${status}`);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    /** Resolves with the spans matching `pred` once `count` of them arrived. */
    waitFor(pred, { count = 1, what = 'spans', timeoutMs = 20000 } = {}) {
      return pollUntil(
        () => {
          const hits = spans.filter(pred);
          return hits.length >= count ? hits : undefined;
        },
        { timeoutMs, what },
      );
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
