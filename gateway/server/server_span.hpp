#pragma once
// The server span of each client request (OpenTelemetry's MCP
// conventions): started when the router has decoded the request, ended
// with its answer.
#include <memory>

#include "mcp/span.hpp"
#include "server/methods.hpp"

namespace mcpgw::server {

/// Starts the span of request `m` of session `s` as a child of the
/// client's traceparent (or a new trace, sampled by `sink`), and puts its
/// context in `ctx.span`. Null when `sink` is null.
std::shared_ptr<mcp::SpanTimer> start_server_span(mcp::SpanSink* sink, const jsonrpc::Message& m,
                                                  const McpSession& s, mcp::RequestContext& ctx);

/// Ends `span` (may be null) with the request's answer.
void end_server_span(const std::shared_ptr<mcp::SpanTimer>& span, Answer& answer);

}  // namespace mcpgw::server
