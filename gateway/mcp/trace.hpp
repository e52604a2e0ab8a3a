#pragma once
// W3C Trace Context (traceparent) as MCP carries it: an HTTP header, or
// `params._meta.traceparent` where there are no headers (stdio).
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/message.hpp"

namespace mcpgw::mcp {

/// `_meta` key of the trace context.
inline constexpr std::string_view kMetaTraceparent = "traceparent";

/// One span of a trace: version 00 `traceparent` fields.
struct TraceContext {
  std::string trace_id;  ///< 32 lower-case hex digits, not all zero
  std::string span_id;   ///< 16 lower-case hex digits, not all zero
  std::string flags = "01";

  /// Parses a `traceparent` value; nullopt when it is not a valid one
  /// (W3C rules: a version other than 00 is read by its first four fields).
  static std::optional<TraceContext> parse(std::string_view traceparent);
  /// A new trace (random ids), for a call that came without one.
  static TraceContext fresh();
  /// A child span of this one: the same trace, a new span id.
  TraceContext child() const;
  /// `00-<trace>-<span>-<flags>`.
  std::string header() const;
};

/// The trace context a client sent with request `params` (`_meta.traceparent`),
/// or nullopt.
std::optional<TraceContext> trace_of(const json::Value* params);

/// Puts `traceparent` (an HTTP request's header) into request `m`'s
/// `_meta.traceparent` unless the request carries one already, so the
/// handler finds the trace context where stdio clients put it.
void adopt_traceparent(jsonrpc::Message& m, std::string_view traceparent);

}  // namespace mcpgw::mcp
