#include "mcp/span.hpp"

namespace mcpgw::mcp {

void Span::set(std::string_view key, std::string value) { attributes.emplace_back(key, AttrValue(std::move(value))); }

namespace {

/// TraceContext's ids are lower-case hex (it checked them).
int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

/// `hex` into `out`; what it lacks stays zero (TraceContext has checked the
/// ids it holds).
template <std::size_t N>
void from_hex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  out.fill(0);
  for (std::size_t i = 0; i < N && 2 * i + 1 < hex.size(); ++i)
    out[i] = static_cast<std::uint8_t>(hex_value(hex[2 * i]) * 16 + hex_value(hex[2 * i + 1]));
}

/// The tool or prompt a request names, for the span name and attributes.
std::string target_of(std::string_view method, const json::Value* params) {
  if (!params || (method != "tools/call" && method != "prompts/get")) return {};
  return std::string(json::get_string(*params, "name").value_or(""));
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

std::string span_name(std::string_view method, const json::Value* params) {
  std::string target = target_of(method, params);
  return target.empty() ? std::string(method) : std::string(method) + " " + target;
}

void describe_request(Span& span, std::string_view method, const json::Value* params) {
  span.set("mcp.method.name", std::string(method));
  std::string target = target_of(method, params);
  if (!target.empty() && method == "tools/call") {
    span.set("gen_ai.tool.name", std::move(target));
    span.set("gen_ai.operation.name", std::string("execute_tool"));
  } else if (!target.empty()) {
    span.set("gen_ai.prompt.name", std::move(target));
  }
  if (params)
    if (auto uri = json::get_string(*params, "uri")) span.set("mcp.resource.uri", std::string(*uri));
}

void set_request_id(Span& span, const jsonrpc::Id& id) {
  if (id.is_null()) return;
  if (auto s = id.string()) span.set("jsonrpc.request.id", std::move(*s));
  else span.set("jsonrpc.request.id", std::string(id.json()));
}

void set_outcome(Span& span, bool rpc_error, const json::Value& body) {
  if (!body.IsObject()) return;
  if (rpc_error) {
    const json::Value* code = json::find(body, "code");
    std::string type = code && code->IsInt() ? std::to_string(code->GetInt()) : "_OTHER";
    span.set("rpc.response.status_code", type);
    span.fail(std::move(type), std::string(json::get_string(body, "message").value_or("")));
  } else if (const json::Value* is_error = json::find(body, "isError"); is_error && is_error->IsTrue()) {
    span.fail("tool_error");
  }
}

}  // namespace mcpgw::mcp
