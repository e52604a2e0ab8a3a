#pragma once
// The request and limit filters of the MCP endpoint (the interfaces and
// items are in http_admission.hpp), as the chains Admission runs.
#include "transport/http_admission.hpp"

namespace mcpgw::transport {

/// A request to the MCP endpoint: Host, Origin, token, mode, scope; the
/// last fills the client's context.
Chain<RequestFilter> endpoint_filters(const Admission& a);
/// A request to an operator endpoint (the status page's data): Host,
/// Origin, and a token the MCP endpoint would accept in any mode.
Chain<RequestFilter> operator_filters(const Admission& a);
/// One JSON-RPC request of an admitted client: the session's requests in
/// flight, then the principal's call rate.
Chain<LimitFilter> limit_filters(const Admission& a);

}  // namespace mcpgw::transport
