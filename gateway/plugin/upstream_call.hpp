#pragma once
// A plugin's call of an upstream server's tool (the host functions
// call_tool and call_tool_async), under either isolation: run in the
// gateway, on the loop, for the client call it belongs to.
#include <string>

#include "plugin/plugin.hpp"

namespace mcpgw::plugin {

/// Calls `tool` of upstream `server` with `arguments` (JSON object text, or
/// null for none) for the client call of `opts`, bounded by both deadlines;
/// reports it through opts.on_upstream_call (audit, metrics). The
/// CallToolResult as JSON text; failures are isError results naming the
/// server and the cause. Any argument may be null (an error result says so).
Task<std::string> call_upstream(Host& host, const upstream::CallOptions& opts, const char* server, const char* tool,
                                const char* arguments);

}  // namespace mcpgw::plugin
