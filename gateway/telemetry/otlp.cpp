#include "telemetry/otlp.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mcpgw::telemetry {
namespace {

// Field numbers of opentelemetry-proto (common/v1, resource/v1, trace/v1,
// collector/trace/v1).
namespace field {
constexpr int kRequestResourceSpans = 1;
constexpr int kResourceSpansResource = 1, kResourceSpansScopeSpans = 2;
constexpr int kResourceAttributes = 1;
constexpr int kScopeSpansScope = 1, kScopeSpansSpans = 2;
constexpr int kScopeName = 1, kScopeVersion = 2;
constexpr int kSpanTraceId = 1, kSpanSpanId = 2, kSpanParentSpanId = 4, kSpanName = 5, kSpanKind = 6,
              kSpanStart = 7, kSpanEnd = 8, kSpanAttributes = 9, kSpanStatus = 15;
constexpr int kStatusMessage = 2, kStatusCode = 3;
constexpr int kKeyValueKey = 1, kKeyValueValue = 2;
constexpr int kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4;
}  // namespace field

constexpr int kStatusError = 2;

enum class Wire { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// Appends protobuf fields to a string.
class Writer {
 public:
  void varint(int f, std::uint64_t v) {
    tag(f, Wire::Varint);
    raw_varint(v);
  }
  void fixed64(int f, std::uint64_t v) {
    tag(f, Wire::Fixed64);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void bytes(int f, std::string_view b) {
    tag(f, Wire::Bytes);
    raw_varint(b.size());
    out_.append(b);
  }
  std::string take() { return std::move(out_); }

 private:
  void tag(int f, Wire w) { raw_varint((static_cast<std::uint64_t>(f) << 3) | static_cast<std::uint64_t>(w)); }
  void raw_varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

/// The bytes a hex id stands for (trace and span ids are bytes on the wire).
std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(hex_digit(hex[i]) * 16 + hex_digit(hex[i + 1])));
  return out;
}

std::string any_value(const mcp::AttrValue& v) {
  Writer w;
  if (const auto* s = std::get_if<std::string>(&v)) w.bytes(field::kAnyString, *s);
  else if (const auto* b = std::get_if<bool>(&v)) w.varint(field::kAnyBool, *b ? 1 : 0);
  else if (const auto* i = std::get_if<std::int64_t>(&v)) w.varint(field::kAnyInt, static_cast<std::uint64_t>(*i));
  else {
    double d = std::get<double>(v);
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    w.fixed64(field::kAnyDouble, bits);
  }
  return w.take();
}

void attributes(Writer& w, int f, const std::vector<std::pair<std::string, mcp::AttrValue>>& attrs) {
  for (const auto& [key, value] : attrs) {
    Writer kv;
    kv.bytes(field::kKeyValueKey, key);
    kv.bytes(field::kKeyValueValue, any_value(value));
    w.bytes(f, kv.take());
  }
}

std::string span_message(const mcp::Span& s) {
  Writer w;
  w.bytes(field::kSpanTraceId, unhex(s.trace_id));
  w.bytes(field::kSpanSpanId, unhex(s.span_id));
  if (!s.parent_span_id.empty()) w.bytes(field::kSpanParentSpanId, unhex(s.parent_span_id));
  w.bytes(field::kSpanName, s.name);
  w.varint(field::kSpanKind, static_cast<std::uint64_t>(s.kind));
  w.fixed64(field::kSpanStart, s.start_unix_ns);
  w.fixed64(field::kSpanEnd, s.end_unix_ns);
  attributes(w, field::kSpanAttributes, s.attributes);
  if (s.error) {
    Writer status;
    if (!s.status_message.empty()) status.bytes(field::kStatusMessage, s.status_message);
    status.varint(field::kStatusCode, kStatusError);
    w.bytes(field::kSpanStatus, status.take());
  }
  return w.take();
}

}  // namespace

std::string encode_export_request(const std::vector<mcp::Span>& spans, const Resource& resource,
                                  std::string_view scope_name, std::string_view scope_version) {
  Writer res;
  attributes(res, field::kResourceAttributes, resource.attributes);
  Writer scope;
  scope.bytes(field::kScopeName, scope_name);
  scope.bytes(field::kScopeVersion, scope_version);
  Writer scope_spans;
  scope_spans.bytes(field::kScopeSpansScope, scope.take());
  for (const auto& s : spans) scope_spans.bytes(field::kScopeSpansSpans, span_message(s));
  Writer resource_spans;
  resource_spans.bytes(field::kResourceSpansResource, res.take());
  resource_spans.bytes(field::kResourceSpansScopeSpans, scope_spans.take());
  Writer request;
  request.bytes(field::kRequestResourceSpans, resource_spans.take());
  return request.take();
}

bool sampled_by_ratio(std::string_view trace_id, double ratio) {
  if (ratio >= 1) return true;
  if (ratio <= 0 || trace_id.size() < 16) return false;
  std::uint64_t low = 0;
  for (char c : trace_id.substr(trace_id.size() - 16)) low = (low << 4) | static_cast<std::uint64_t>(hex_digit(c));
  // Compare in the top 63 bits so that ratio * 2^63 fits a double exactly enough.
  return static_cast<double>(low >> 1) < ratio * 9223372036854775808.0;
}

bool sampled_flag(std::string_view flags) { return flags.size() == 2 && (hex_digit(flags[1]) & 1); }

}  // namespace mcpgw::telemetry
