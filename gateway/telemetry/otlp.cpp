#include "telemetry/otlp.hpp"

#include <array>
#include <cassert>
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

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

enum class Wire { Varint = 0, Fixed64 = 1, Bytes = 2 };

std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Every field number here is below 16, so every tag is one byte. Sizes are
// computed first and the fields then written into room made once: spans are
// encoded on the call path, where a string append per field (a capacity
// check and a terminator each) cost more than the rest of the encoding.

/// Size of a length-delimited field holding `n` bytes.
std::size_t field_size(std::size_t n) { return 1 + varint_size(n) + n; }

/// Writes protobuf fields at a cursor into room its caller sized exactly.
class Writer {
 public:
  explicit Writer(char* at) : p_(at) {}
  /// Where the next byte goes.
  const char* at() const { return p_; }
  void varint(int f, std::uint64_t v) {
    tag(f, Wire::Varint);
    raw_varint(v);
  }
  void fixed64(int f, std::uint64_t v) {
    tag(f, Wire::Fixed64);
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void tag(int f, Wire w) { *p_++ = static_cast<char>((f << 3) | static_cast<int>(w)); }
  void raw_varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void bytes(int f, std::string_view b) {
    header(f, b.size());
    if (!b.empty()) std::memcpy(p_, b.data(), b.size());
    p_ += b.size();
  }
  /// The tag and length of a length-delimited field whose `size` bytes follow.
  void header(int f, std::size_t size) {
    tag(f, Wire::Bytes);
    raw_varint(size);
  }
  template <std::size_t N>
  void bytes(int f, const std::array<std::uint8_t, N>& b) {
    bytes(f, std::string_view(reinterpret_cast<const char*>(b.data()), N));
  }

 private:
  char* p_;
};

std::size_t any_value_size(const mcp::AttrValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return field_size(s->size());
  if (std::holds_alternative<bool>(v)) return 2;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return 1 + varint_size(static_cast<std::uint64_t>(*i));
  return 9;
}

void any_value(Writer& w, const mcp::AttrValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) w.bytes(field::kAnyString, *s);
  else if (const auto* b = std::get_if<bool>(&v)) w.varint(field::kAnyBool, *b ? 1 : 0);
  else if (const auto* i = std::get_if<std::int64_t>(&v)) w.varint(field::kAnyInt, static_cast<std::uint64_t>(*i));
  else {
    double d = std::get<double>(v);
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    w.fixed64(field::kAnyDouble, bits);
  }
}

/// Size of a KeyValue message.
template <typename Key>
std::size_t key_value_size(const Key& key, const mcp::AttrValue& value) {
  return field_size(std::string_view(key).size()) + field_size(any_value_size(value));
}

template <typename Key>
std::size_t attributes_size(const std::vector<std::pair<Key, mcp::AttrValue>>& attrs) {
  std::size_t n = 0;
  for (const auto& [key, value] : attrs) n += field_size(key_value_size(key, value));
  return n;
}

/// KeyValue fields of field number `f`.
template <typename Key>
void attributes(Writer& w, int f, const std::vector<std::pair<Key, mcp::AttrValue>>& attrs) {
  for (const auto& [key, value] : attrs) {
    w.header(f, key_value_size(key, value));
    w.bytes(field::kKeyValueKey, key);
    w.header(field::kKeyValueValue, any_value_size(value));
    any_value(w, value);
  }
}

/// Size of Status's fields of a failed span: the message, and the code.
std::size_t status_size(const mcp::Span& s) {
  return (s.status_message.empty() ? 0 : field_size(s.status_message.size())) + 2;
}

std::size_t span_size(const mcp::Span& s) {
  std::size_t n = field_size(s.trace_id.size()) + field_size(s.span_id.size()) +
                  (s.has_parent() ? field_size(s.parent_span_id.size()) : 0) + field_size(s.name.size()) + 1 +
                  varint_size(static_cast<std::uint64_t>(s.kind)) + 9 + 9 + attributes_size(s.attributes);
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
  attributes(w, field::kSpanAttributes, s.attributes);
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
  std::size_t res = attributes_size(resource.attributes);
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
  attributes(w, field::kResourceAttributes, resource.attributes);
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
  for (char c : trace_id.substr(trace_id.size() - 16)) low = (low << 4) | static_cast<std::uint64_t>(hex_digit(c));
  // Compare in the top 63 bits so that ratio * 2^63 fits a double exactly enough.
  return static_cast<double>(low >> 1) < ratio * 9223372036854775808.0;
}

bool sampled_flag(std::string_view flags) { return flags.size() == 2 && (hex_digit(flags[1]) & 1); }

}  // namespace mcpgw::telemetry
