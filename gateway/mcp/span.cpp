#include "mcp/span.hpp"

#include <bit>
#include <cstring>

#include "util/protobuf.hpp"

namespace mcpgw::mcp {

namespace {

// Field numbers of opentelemetry-proto: Span.attributes, KeyValue's and
// AnyValue's.
constexpr int kSpanAttributes = 9, kKeyValueKey = 1, kKeyValueValue = 2, kAnyString = 1;

}  // namespace

void Span::set(std::string_view key, std::string_view value) {
  using protobuf::field_size;
  const std::size_t any = field_size(value.size()), kv = field_size(key.size()) + field_size(any);
  const std::size_t at = attributes.size();
  attributes.resize(at + field_size(kv), boost::container::default_init);
  protobuf::Writer w(attributes.data() + at);
  w.header(kSpanAttributes, kv);
  w.bytes(kKeyValueKey, key);
  w.header(kKeyValueValue, any);
  w.bytes(kAnyString, value);
}

std::optional<std::string_view> Span::attribute(std::string_view key) const {
  protobuf::Reader kvs({attributes.data(), attributes.size()});
  while (auto kv = kvs.field()) {
    protobuf::Reader fields(kv->second);
    auto k = fields.field(), v = fields.field();
    if (!k || !v || k->second != key) continue;
    if (auto s = protobuf::Reader(v->second).field()) return s->second;
  }
  return std::nullopt;
}

namespace {

/// `x` as read from little-endian bytes.
std::uint64_t le64(std::uint64_t x) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(x);
  return x;
}

/// `hex` (lower-case digits, as TraceContext holds them) into `out`, eight
/// digits at a time; what it lacks stays zero. Ids are decoded for both
/// spans of every call, where a digit at a time showed.
template <std::size_t N>
void from_hex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  static_assert(N % 4 == 0);
  out.fill(0);
  if (hex.size() < 2 * N) return;
  for (std::size_t i = 0; i < N; i += 4) {
    std::uint64_t x;
    std::memcpy(&x, hex.data() + 2 * i, 8);
    x = le64(x);
    // Each byte to its digit's value: '0'-'9' keep their low nibble, 'a'-'f'
    // (bit 6 set) add 9 to theirs.
    std::uint64_t v = (x & 0x0F0F0F0F0F0F0F0FULL) + ((x >> 6) & 0x0101010101010101ULL) * 9;
    // Pairs of digits into bytes, then the bytes side by side.
    v = ((v & 0x00FF00FF00FF00FFULL) << 4) | ((v >> 8) & 0x00FF00FF00FF00FFULL);
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFFULL;
    v = (v | (v >> 16)) & 0x00000000FFFFFFFFULL;
    for (int b = 0; b < 4; ++b) out[i + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
}

}  // namespace

void Span::set_ids(std::string_view trace_hex, std::string_view span_hex, std::string_view parent_hex) {
  from_hex(trace_hex, trace_id);
  from_hex(span_hex, span_id);
  from_hex(parent_hex, parent_span_id);
}

bool Span::has_parent() const {
  for (auto b : parent_span_id)
    if (b) return true;
  return false;
}

void SpanTimer::begin(std::string_view trace_id, std::string_view parent_span_id, std::string_view method,
                      std::string_view target, Span::Kind kind) {
  span_.set_ids(trace_id, context_.span_id.view(), parent_span_id);
  // `{mcp.method.name} {target}`, a low-cardinality name.
  span_.name.reserve(method.size() + 1 + target.size());
  span_.name.append(method);
  if (!target.empty()) span_.name.append(1, ' ').append(target);
  span_.kind = kind;
  span_.start_unix_ns = unix_ns_now();
}

std::string_view target_of(std::string_view method, const json::Value* params) {
  if (!params || (method != "tools/call" && method != "prompts/get")) return {};
  return json::get_string(*params, "name").value_or("");
}

void describe_request(Span& span, std::string_view method, std::string_view target, const json::Value* params) {
  span.set("mcp.method.name", method);
  if (!target.empty() && method == "tools/call") {
    span.set("gen_ai.tool.name", target);
    span.set("gen_ai.operation.name", "execute_tool");
  } else if (!target.empty()) {
    span.set("gen_ai.prompt.name", target);
  }
  if (params && method.starts_with("resources/"))
    if (auto uri = json::get_string(*params, "uri")) span.set("mcp.resource.uri", *uri);
}

void set_request_id(Span& span, const jsonrpc::Id& id) {
  if (id.is_null()) return;
  if (auto s = id.string()) span.set("jsonrpc.request.id", *s);
  else span.set("jsonrpc.request.id", id.json());
}

void set_outcome(Span& span, bool rpc_error, const json::Value& body) {
  if (!body.IsObject()) return;
  if (rpc_error) {
    const json::Value* code = json::find(body, "code");
    std::string type = code && code->IsInt() ? std::to_string(code->GetInt()) : "_OTHER";
    span.set("rpc.response.status_code", type);
    span.fail(type, std::string(json::get_string(body, "message").value_or("")));
  } else if (const json::Value* is_error = json::find(body, "isError"); is_error && is_error->IsTrue()) {
    set_tool_outcome(span, true);
  }
}

void set_tool_outcome(Span& span, bool is_error) {
  if (is_error) span.fail("tool_error");
}

}  // namespace mcpgw::mcp
