#pragma once
// The work of a tool call, shared by tools/call and the saga methods.
#include <memory>

#include "server/calls.hpp"

namespace mcpgw::server {

/// The work of a call of `tool` by `s` with `arguments` (and the `_meta`
/// the upstream may see), nextTool chains included; it owns everything it
/// reads, so it may outlive the request.
Work tool_work(Services& sv, const McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
               const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
               std::shared_ptr<json::Document> meta, std::optional<mcp::TraceContext> request_span = std::nullopt);

}  // namespace mcpgw::server
