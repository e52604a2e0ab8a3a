#include "transport/shared_sessions.hpp"

#include <chrono>

#include "mcp/protocol.hpp"
#include "transport/downstream.hpp"

namespace mcpgw::transport {

SealedSession describe_session(const ClientContext& ctx, const jsonrpc::Message& initialize) {
  SealedSession s;
  s.principal = ctx.principal;
  s.mode = ctx.mode;
  const json::Value* p = initialize.params();
  if (p && p->IsObject()) {
    if (auto requested = json::get_string(*p, "protocolVersion")) s.protocol_version = mcp::negotiate(*requested);
    const json::Value* caps = json::find(*p, "capabilities");
    if (caps && caps->IsObject()) s.capabilities = json::write(*caps);
    const json::Value* info = json::find(*p, "clientInfo");
    if (info && info->IsObject()) s.client_info = json::write(*info);
  }
  if (s.capabilities.empty()) s.capabilities = "{}";
  if (s.client_info.empty()) s.client_info = "{}";
  s.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return s;
}

}  // namespace mcpgw::transport
