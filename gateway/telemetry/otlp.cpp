#include "telemetry/otlp.hpp"

#include <array>
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

/// Appends protobuf fields to a string it does not own, so that one buffer
/// serves a whole batch (no allocation per span or attribute).
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void varint(int f, std::uint64_t v) {
    tag(f, Wire::Varint);
    raw_varint(v);
  }
  void fixed64(int f, std::uint64_t v) {
    tag(f, Wire::Fixed64);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void tag(int f, Wire w) { raw_varint((static_cast<std::uint64_t>(f) << 3) | static_cast<std::uint64_t>(w)); }
  void raw_varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void bytes(int f, std::string_view b) {
    header(f, b.size());
    out_.append(b);
  }
  /// The tag and length of a length-delimited field whose `size` bytes follow.
  void header(int f, std::size_t size) {
    tag(f, Wire::Bytes);
    raw_varint(size);
  }
  template <std::size_t N>
  void bytes(int f, const std::array<std::uint8_t, N>& b) {
    header(f, N);
    out_.append(reinterpret_cast<const char*>(b.data()), N);
  }

 private:
  std::string& out_;
};

/// Size of field `f` (one-byte tag) holding `n` bytes.
std::size_t field_size(std::size_t n) { return 1 + varint_size(n) + n; }

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

/// KeyValue fields, written in place: their sizes are known up front.
template <typename Key>
void attributes(Writer& w, int f, const std::vector<std::pair<Key, mcp::AttrValue>>& attrs) {
  for (const auto& [key, value] : attrs) {
    std::size_t any = any_value_size(value);
    w.header(f, field_size(std::string_view(key).size()) + field_size(any));
    w.bytes(field::kKeyValueKey, key);
    w.header(field::kKeyValueValue, any);
    any_value(w, value);
  }
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
    std::size_t message = s.status_message.empty() ? 0 : field_size(s.status_message.size());
    w.header(field::kSpanStatus, message + 2);
    if (message) w.bytes(field::kStatusMessage, s.status_message);
    w.varint(field::kStatusCode, kStatusError);
  }
}

}  // namespace

void append_span(std::string& spans, const mcp::Span& span) {
  // The span is written behind two bytes kept for its length, which are
  // then replaced by it: in place for the usual span (128 to 16383 bytes),
  // a move of the span by a byte or more otherwise.
  constexpr std::size_t kRoom = 2;
  Writer w(spans);
  w.tag(field::kScopeSpansSpans, Wire::Bytes);
  std::size_t at = spans.size();
  spans.append(kRoom, '\0');
  span_message(w, span);
  std::string length;
  Writer(length).raw_varint(spans.size() - at - kRoom);
  spans.replace(at, kRoom, length);
}

void encode_export_request(std::string_view spans, const Resource& resource, std::string_view scope_name,
                           std::string_view scope_version, std::string& out) {
  // The outer messages only need the spans' size, so the body is written
  // once, front to back.
  std::string res;
  Writer r(res);
  attributes(r, field::kResourceAttributes, resource.attributes);
  std::size_t scope = field_size(scope_name.size()) + field_size(scope_version.size());
  std::size_t scope_spans = field_size(scope) + spans.size();
  std::size_t resource_spans = field_size(res.size()) + field_size(scope_spans);
  out.clear();
  out.reserve(field_size(resource_spans));
  Writer w(out);
  w.header(field::kRequestResourceSpans, resource_spans);
  w.bytes(field::kResourceSpansResource, res);
  w.header(field::kResourceSpansScopeSpans, scope_spans);
  w.header(field::kScopeSpansScope, scope);
  w.bytes(field::kScopeName, scope_name);
  w.bytes(field::kScopeVersion, scope_version);
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
