#pragma once
// The one codec between the wire revisions and the gateway's handlers:
// which era a request speaks (the session revisions 2025-03-26 … 2025-11-25,
// or the stateless 2026-07-28), what its envelope declares about its
// client, which methods the era has, and how a result looks in that era.
// Handlers see one request context and build one result shape; the
// differences between the eras are decided here.
#include <string>
#include <string_view>
#include <optional>
#include <variant>

#include "mcp/era.hpp"
#include "mcp/trace.hpp"

namespace mcpgw::mcp {

/// One request as the handlers see it, whatever revision it came in.
struct RequestContext {
  /// The request speaks the stateless revision: no session, its client
  /// described by `envelope`.
  bool stateless = false;
  Envelope envelope;  ///< stateless only
  /// The request's own span when spans are recorded (a child of the
  /// client's traceparent, or a new trace): its upstream requests descend
  /// from it. Unset otherwise.
  std::optional<TraceContext> span;
};

/// Decodes the era of request `m` of a session. `session_stateless`: the
/// session is a stateless request's own (2026-07-28 HTTP); `negotiated`:
/// the client chose a session revision with initialize, so a request that
/// claims the stateless one is still served as a session's. Refuses, as
/// the era says: a bad envelope, a method the era does not have.
std::variant<RequestContext, Refusal> decode(const jsonrpc::Message& m, bool session_stateless, bool negotiated);

/// Finishes `result` of `method` for the request's era: a stateless result
/// gets `resultType` and the caching hints (`cache_scope`: "public" when
/// every client of a mode sees the same, else "private").
void encode_result(json::Value& result, std::string_view method, const RequestContext& ctx,
                   std::string_view cache_scope, json::Allocator& a);

/// The error code of a resource that does not exist: -32002 in the session
/// revisions, invalid params in 2026-07-28.
int resource_not_found_code(const RequestContext& ctx);

}  // namespace mcpgw::mcp
