#include "mcp/codec.hpp"

namespace mcpgw::mcp {
namespace {

/// MCP's "resource not found" code (spec: server/resources, error handling).
constexpr int kResourceNotFound = -32002;

/// Methods 2026-07-28 added: a session's client gets them as unknown.
bool added_in_stateless(std::string_view method) {
  return method == "server/discover" || method == "subscriptions/listen" || method == "tasks/update";
}

Refusal method_not_found(std::string message) {
  return Refusal{jsonrpc::kMethodNotFound, std::move(message), json::Document()};
}

}  // namespace

std::variant<RequestContext, Refusal> decode(const jsonrpc::Message& m, bool session_stateless, bool negotiated) {
  // A request claiming the stateless revision is one, unless the client
  // already chose the session revisions with initialize.
  bool stateless = session_stateless || (!negotiated && claimed_version(m));
  if (!stateless) {
    if (added_in_stateless(m.method()))
      return method_not_found("Method not found: " + std::string(m.method()));
    return RequestContext{};
  }
  auto envelope = read_envelope(m, std::nullopt);
  if (auto* r = std::get_if<Refusal>(&envelope)) return std::move(*r);
  if (removed_in_stateless(m.method()))
    return method_not_found("Method not found: " + std::string(m.method()) + " is not part of MCP " +
                            std::string(kStatelessVersion));
  return RequestContext{true, std::move(std::get<Envelope>(envelope)), std::nullopt};
}

void encode_result(json::Value& result, std::string_view method, const RequestContext& ctx,
                   std::string_view cache_scope, json::Allocator& a) {
  if (ctx.stateless) stamp_result(result, method, cache_scope, a);
}

int resource_not_found_code(const RequestContext& ctx) {
  return ctx.stateless ? jsonrpc::kInvalidParams : kResourceNotFound;
}

}  // namespace mcpgw::mcp
