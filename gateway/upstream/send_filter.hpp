#pragma once
// The filter chains of an upstream. One request to an upstream goes
// through the send filters, each doing one concern of the request (its
// input rounds, trace span, the failure text, the way back to the client,
// forwarded headers, a renewed session) around the rest of the chain, the
// last one sending on the link's connection; one tools/call of the server goes
// through its call filters first (the circuit breaker, max_concurrency),
// the last one making the request on the caller's link. Link::call_tool
// and Link::request build the send item, Upstream::call_tool the call
// item, and run their chain (upstream/link_send.cpp and upstream/calls.cpp
// have the filters and their order); a new concern is a new filter, not a
// branch in those functions. The chains are of the gateway's one shape
// (util/filter_chain.hpp).
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "transport/connection.hpp"
#include "upstream/origin.hpp"
#include "util/filter_chain.hpp"

namespace mcpgw::upstream {

/// One request to an upstream on its way through the send filters; each
/// filter may change it before passing it on.
struct Outgoing {
  std::string_view method;
  /// The link spoke the stateless revision (2026-07-28) when the request
  /// was made: its params carry the envelope, and only such a server
  /// answers input_required.
  bool stateless = false;
  /// The request's params, as they will be written.
  json::Document params;
  /// What the caller asked for the call.
  const CallOptions& opts;
  /// What the transport gets: deadline, cancellation, headers, the session.
  transport::RequestOptions wire;
  /// The progress token the gateway sends in place of the client's; empty
  /// when the call has neither progress nor a client.
  std::string token;
  /// Set by the sending filter when the request failed because there was
  /// no connection to send it on (the failure is then the server's state).
  bool unconnected = false;
};

class SendFilter;
/// The send filters after the current one.
using SendNext = ChainNext<SendFilter, Outgoing, Task<transport::Response>>;

/// One concern of sending a request upstream.
class SendFilter {
 public:
  virtual ~SendFilter() = default;
  /// Does this filter's part of `out`, with `next` for the rest; the last
  /// filter of a chain sends and does not call `next`.
  virtual Task<transport::Response> on_call(Outgoing& out, SendNext next) = 0;
};

/// One tools/call of an upstream on its way through its call filters.
struct ToolCall {
  std::string_view tool;  ///< the server's own name of the tool
  const json::Value* arguments;  ///< may be null
  const json::Value* meta;  ///< the `_meta` the server may see; may be null
  const CallOptions& opts;
  /// Set by a filter that answered the call itself without the server (no
  /// max_concurrency slot in time): the answer says nothing of the
  /// server's health.
  bool refused = false;
};

class ToolFilter;
/// The call filters after the current one.
using ToolNext = ChainNext<ToolFilter, ToolCall, Task<Reply>>;

/// One concern of a tools/call of an upstream, around its requests.
class ToolFilter {
 public:
  virtual ~ToolFilter() = default;
  /// Does this filter's part of `call`, with `next` for the rest; the last
  /// filter makes the request and does not call `next`.
  virtual Task<Reply> on_call(ToolCall& call, ToolNext next) = 0;
};

}  // namespace mcpgw::upstream
