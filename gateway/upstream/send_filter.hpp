#pragma once
// How one request goes to an upstream: a chain of filters, each doing one
// concern of the call (its trace span, the failure text, the way back to
// the client, forwarded headers, a renewed session) around the rest of the
// chain, the last one sending on the connection. Upstream::send builds the
// request and runs its chain (upstream/send_filters.cpp has the filters and
// their order); a new concern is a new filter, not a branch in send().
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "transport/connection.hpp"
#include "upstream/origin.hpp"

namespace mcpgw::upstream {

/// One request to an upstream on its way through the send filters; each
/// filter may change it before passing it on.
struct Outgoing {
  std::string_view method;
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

/// The filters after the current one; calling it runs them.
class SendNext {
 public:
  explicit SendNext(std::span<SendFilter* const> rest) : rest_(rest) {}
  /// Runs the rest of the chain on `out`; a filter may call it more than
  /// once (a retry) or not at all (an answer of its own).
  Task<transport::Response> operator()(Outgoing& out) const;

 private:
  std::span<SendFilter* const> rest_;
};

/// One concern of sending a request upstream.
class SendFilter {
 public:
  virtual ~SendFilter() = default;
  /// Does this filter's part of `out`, with `next` for the rest; the last
  /// filter of a chain sends and does not call `next`.
  virtual Task<transport::Response> on_send(Outgoing& out, SendNext next) = 0;
};

}  // namespace mcpgw::upstream
