#pragma once
// The work of a tool call, shared by tools/call and the saga methods.
#include <memory>

#include "server/calls.hpp"

namespace mcpgw::server {

/// The work of a call of `tool` by `s` with `arguments` (and the `_meta`
/// the upstream may see), nextTool chains included; it owns everything it
/// reads, so it may outlive the request. `task` set: the upstream may run
/// the call as a task (upstream::CallOptions::task); the chain's hops never.
Work tool_work(Services& sv, const McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
               const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
               std::shared_ptr<json::Document> meta, std::shared_ptr<const json::Document> task = nullptr);

}  // namespace mcpgw::server
