// A lean OTLP/HTTP trace receiver for scripts/bench: accepts POST
// /v1/traces and counts requests and bytes; the first request and one in
// 256 after it are decoded with the official opentelemetry-proto
// definitions (as tests/integration/otlp-collector.mjs does every one) to
// check the encoding under load. It shares the machine's two cores with
// the gateway (a real collector runs elsewhere), so it speaks just enough
// HTTP/1.1 on a plain socket: node's HTTP server cost twice the CPU per
// export request. GET /count answers the counts. Prints
// "listening http://..." once ready.
import net from 'node:net';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js');
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;

const count = { requests: 0, bytes: 0, decoded: 0, decodedSpans: 0, invalid: 0 };
const kMaxHead = 16 * 1024;

function answer(sock, status, type, body = '') {
  sock.write(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

function finished(sock, head, body) {
  if (head.startsWith('GET /count ')) return answer(sock, '200 OK', 'application/json', JSON.stringify(count));
  if (!head.startsWith('POST /v1/traces ')) return answer(sock, '404 Not Found', 'text/plain', 'not found');
  if (body) {
    try {
      const decoded = ExportTraceServiceRequest.decode(body);
      count.decoded++;
      for (const rs of decoded.resourceSpans) for (const ss of rs.scopeSpans) count.decodedSpans += ss.spans.length;
    } catch {
      count.invalid++;
    }
  }
  answer(sock, '200 OK', 'application/x-protobuf');
}

const server = net.createServer((sock) => {
  // Per request: its head, then `left` body bytes, kept only when decoded.
  let head = Buffer.alloc(0);
  let left = -1;
  let chunks = null;
  let text = '';
  sock.on('data', (c) => {
    let at = 0;
    while (at < c.length) {
      if (left < 0) {
        head = Buffer.concat([head, c.subarray(at)]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > kMaxHead) sock.destroy();
          return;
        }
        text = head.toString('latin1', 0, end);
        at = c.length - (head.length - end - 4);
        head = Buffer.alloc(0);
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
        left = length ? Number(length[1]) : 0;
        const post = text.startsWith('POST ');
        chunks = post && count.requests % 256 === 0 ? [] : null;
        if (post) count.requests++;
      }
      const take = Math.min(left, c.length - at);
      if (chunks) chunks.push(c.subarray(at, at + take));
      count.bytes += text.startsWith('POST ') ? take : 0;
      at += take;
      left -= take;
      if (left === 0) {
        left = -1;
        finished(sock, text, chunks && Buffer.concat(chunks));
      }
    }
  });
  sock.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));
