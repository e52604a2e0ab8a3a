#pragma once
// The client side of one JSON-RPC connection to an upstream MCP server,
// whatever carries it (a child's stdio, Streamable HTTP).
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonrpc/message.hpp"
#include "util/cancel.hpp"

namespace mcpgw::transport {

/// Per-request knobs.
struct RequestOptions {
  std::chrono::steady_clock::time_point deadline;
  /// Messages the server sends while this request runs that the transport
  /// can tie to it (on its SSE stream). Optional.
  std::function<void(jsonrpc::Message&)> on_related;
  /// Aborts the request when cancelled (the client gave up); may be null.
  CancelSignal* cancel = nullptr;
  /// Extra HTTP headers (a stateless tool call's `Mcp-Param-*`); stdio has
  /// no headers and ignores them.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Why a request produced no response.
enum class Failure { Timeout, Closed, Transport, Cancelled, SessionExpired };

/// A request's outcome: the response message, or why there is none.
struct Response {
  std::optional<jsonrpc::Message> message;
  Failure failure = Failure::Transport;
  std::string detail;  ///< readable reason when `message` is empty
};

/// Callbacks for what the server sends on its own.
struct ConnectionHandlers {
  /// Server-initiated requests and notifications not tied to a request.
  std::function<void(jsonrpc::Message&)> on_message;
  /// The connection died (child exited, stream broke); `reason` is readable.
  std::function<void(const std::string& reason)> on_close;
};

class Connection {
 public:
  virtual ~Connection() = default;
  /// Sends a request and waits for its response, the deadline, or cancellation.
  virtual Response request(std::string_view method, const json::Value* params,
                           const RequestOptions& opts) = 0;
  /// Sends a notification; false when it could not be delivered.
  virtual bool notify(std::string_view method, const json::Value* params) = 0;
  /// Sends a response to a server-initiated request.
  virtual bool respond(std::string message) = 0;
  /// Records the negotiated protocol version (sent as a header over HTTP).
  virtual void set_protocol_version(std::string version) = 0;
  /// Starts taking messages the server sends outside any request (over
  /// HTTP, the session's GET stream); call after initialization.
  virtual void listen() {}
  /// Ends the connection (stops the child, deletes the HTTP session).
  virtual void close() = 0;
  /// False once the connection has died.
  virtual bool alive() const = 0;
};

}  // namespace mcpgw::transport
