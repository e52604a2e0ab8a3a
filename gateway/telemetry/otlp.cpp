#include "telemetry/otlp.hpp"

#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/hex.hpp"
#include "util/protobuf.hpp"

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
              kSpanStart = 7, kSpanEnd = 8, kSpanStatus = 15;  // attributes (9): mcp::Span holds them encoded
constexpr int kStatusMessage = 2, kStatusCode = 3;
constexpr int kKeyValueKey = 1, kKeyValueValue = 2;
constexpr int kAnyString = 1;
}  // namespace field

constexpr int kStatusError = 2;

using protobuf::field_size;
using protobuf::varint_size;
using protobuf::Writer;

/// A resource attribute's KeyValue message: its size and its AnyValue's.
struct KeyValueSize {
  std::size_t value = 0;
  std::size_t message = 0;
};

KeyValueSize key_value_size(const std::pair<std::string, std::string>& kv) {
  KeyValueSize s;
  s.value = field_size(kv.second.size());
  s.message = field_size(kv.first.size()) + field_size(s.value);
  return s;
}

/// Size of Status's fields of a failed span: the message, and the code.
std::size_t status_size(const mcp::Span& s) {
  return (s.status_message.empty() ? 0 : field_size(s.status_message.size())) + 2;
}

std::size_t span_size(const mcp::Span& s) {
  std::size_t n = field_size(s.trace_id.size()) + field_size(s.span_id.size()) +
                  (s.has_parent() ? field_size(s.parent_span_id.size()) : 0) + field_size(s.name.size()) + 1 +
                  varint_size(static_cast<std::uint64_t>(s.kind)) + 9 + 9 + s.attributes.size();
  if (s.error) n += field_size(status_size(s));
  return n;
}

void span_message(Writer& w, const mcp::Span& s) {
  w.bytes(field::kSpanTraceId, s.trace_id);
  w.bytes(field::kSpanSpanId, s.span_id);
  if (s.has_parent()) w.bytes(field::kSpanParentSpanId, s.parent_span_id);
  w.bytes(field::kSpanName, s.name);
  w.varint(field::kSpanKind, static_cast<std::uint64_t>(s.kind));
  w.fixed64(field::kSpanStart, s.start_unix_ns);
  w.fixed64(field::kSpanEnd, s.end_unix_ns);
  w.raw({s.attributes.data(), s.attributes.size()});  // already KeyValue fields
  if (s.error) {
    w.header(field::kSpanStatus, status_size(s));
    if (!s.status_message.empty()) w.bytes(field::kStatusMessage, s.status_message);
    w.varint(field::kStatusCode, kStatusError);
  }
}

}  // namespace

void append_span(std::string& spans, const mcp::Span& span) {
  const std::size_t size = span_size(span), at = spans.size();
  spans.resize(at + field_size(size));
  Writer w(spans.data() + at);
  w.header(field::kScopeSpansSpans, size);
  span_message(w, span);
  assert(w.at() == spans.data() + spans.size());
}

void encode_export_request(std::string_view spans, const Resource& resource, std::string_view scope_name,
                           std::string_view scope_version, std::string& out) {
  // The outer messages only need the spans' size, so the body is written
  // once, front to back.
  std::size_t res = 0;
  for (const auto& kv : resource.attributes) res += field_size(key_value_size(kv).message);
  std::size_t scope = field_size(scope_name.size()) + field_size(scope_version.size());
  std::size_t scope_spans = field_size(scope) + spans.size();
  std::size_t resource_spans = field_size(res) + field_size(scope_spans);
  std::size_t total = field_size(resource_spans);
  out.clear();
  out.reserve(total);
  out.resize(total - spans.size());
  Writer w(out.data());
  w.header(field::kRequestResourceSpans, resource_spans);
  w.header(field::kResourceSpansResource, res);
  for (const auto& kv : resource.attributes) {
    const KeyValueSize size = key_value_size(kv);
    w.header(field::kResourceAttributes, size.message);
    w.bytes(field::kKeyValueKey, kv.first);
    w.header(field::kKeyValueValue, size.value);
    w.bytes(field::kAnyString, kv.second);
  }
  w.header(field::kResourceSpansScopeSpans, scope_spans);
  w.header(field::kScopeSpansScope, scope);
  w.bytes(field::kScopeName, scope_name);
  w.bytes(field::kScopeVersion, scope_version);
  assert(w.at() == out.data() + out.size());
  out.append(spans);
}

std::string encode_export_request(const std::vector<mcp::Span>& spans, const Resource& resource,
                                  std::string_view scope_name, std::string_view scope_version) {
  std::string entries, out;
  for (const auto& s : spans) append_span(entries, s);
  encode_export_request(entries, resource, scope_name, scope_version, out);
  return out;
}

bool sampled_by_ratio(std::string_view trace_id, double ratio) {
  if (ratio >= 1) return true;
  if (ratio <= 0 || trace_id.size() < 16) return false;
  std::uint64_t low = 0;
  for (char c : trace_id.substr(trace_id.size() - 16)) {
    int v = hex_digit_value(c);
    if (v < 0) return false;  // not a trace id: nothing to keep
    low = (low << 4) | static_cast<std::uint64_t>(v);
  }
  // Compare in the top 63 bits so that ratio * 2^63 fits a double exactly enough.
  return static_cast<double>(low >> 1) < ratio * 9223372036854775808.0;
}

bool sampled_flag(std::string_view flags) {
  const int low = flags.size() == 2 ? hex_digit_value(flags[1]) : -1;
  return low >= 0 && (low & 1);
}

}  // namespace mcpgw::telemetry
