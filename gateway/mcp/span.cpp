#include "mcp/span.hpp"

namespace mcpgw::mcp {

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
