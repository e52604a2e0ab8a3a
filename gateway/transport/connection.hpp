#pragma once
// The client side of one JSON-RPC connection to an upstream MCP server,
// whatever carries it (a child's stdio, Streamable HTTP). Asynchronous
// first: requests complete through handlers run on the I/O loop, and no
// thread of the transport waits for anything.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonrpc/message.hpp"
#include "util/cancel.hpp"
#include "util/event.hpp"

namespace mcpgw::transport {

/// Per-request knobs.
struct RequestOptions {
  std::chrono::steady_clock::time_point deadline;
  /// Messages the server sends while this request runs that the transport
  /// can tie to it (on its SSE stream). Optional; runs on an I/O thread.
  std::function<void(jsonrpc::Message&)> on_related;
  /// Aborts the request when cancelled (the client gave up); may be null.
  CancelSignal* cancel = nullptr;
  /// Extra HTTP headers (a stateless tool call's `Mcp-Param-*`); stdio has
  /// no headers and ignores them.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The client's headers this server's forward_headers lists, sent with
  /// the request whatever the revision; stdio ignores them.
  std::vector<std::pair<std::string, std::string>> forwarded;
  /// Non-empty: the HTTP session to send in instead of the connection's
  /// own; stdio ignores it.
  std::string session;
  /// The answer's result may stay the bytes it came in
  /// (jsonrpc::Message::relayed): the caller relays it rather than reads it.
  bool relay = false;
  /// Sent as the params' "arguments" (which params then lacks): a client's
  /// tool call arguments as the bytes it wrote them in. May be null.
  std::shared_ptr<const jsonrpc::RawArguments> raw_arguments;
};

/// The raw arguments `opts` carries, or empty.
inline std::string_view raw_arguments_of(const RequestOptions& opts) {
  return opts.raw_arguments ? opts.raw_arguments->arguments : std::string_view();
}

/// Why a request produced no response. TooLarge: the answer was over the
/// server's max_response_bytes (it was discarded; the connection goes on).
/// SessionExpired: the server answered our session id with HTTP 400 or 404
/// (it restarted). Unreachable: the server could not be connected to, so the
/// request never reached it. Interrupted: the connection broke after the
/// request was sent and before its answer, so the server may have acted on
/// it. Rejected: the server refused this request with an HTTP 4xx status.
/// Credential: no Authorization could be had for it
/// (transport/credential.hpp), so it was not sent. Unauthorized: the server
/// refused the credential (HTTP 401, even renewed, or 403).
enum class Failure {
  Timeout, Closed, Transport, Cancelled, SessionExpired, TooLarge, Unreachable, Interrupted, Rejected, Credential,
  Unauthorized
};

/// A request's outcome: the response message, or why there is none.
struct Response {
  std::optional<jsonrpc::Message> message;
  Failure failure = Failure::Transport;
  std::string detail;  ///< readable reason when `message` is empty
};

/// Callbacks for what the server sends on its own; they run on I/O threads
/// and must not block.
struct ConnectionHandlers {
  /// Server-initiated requests and notifications not tied to a request.
  std::function<void(jsonrpc::Message&)> on_message;
  /// The connection died (child exited, stream broke); `reason` is readable.
  std::function<void(const std::string& reason)> on_close;
  /// What a log line may show of text the server wrote (its stderr): the
  /// text with secrets masked, before it is cut to length, so that a cut
  /// never leaves part of one for the log's own masking to miss. Empty: as
  /// it is.
  std::function<std::string(std::string_view text)> log_text;
};

/// Completion of an asynchronous request; runs exactly once, on an I/O
/// thread (it must not block).
using ResponseHandler = std::function<void(Response)>;

/// One connection to an upstream server. Implementations are held by
/// shared_ptr and keep themselves alive while operations are in flight;
/// call close() (or async_close) before letting go of one.
class Connection {
 public:
  virtual ~Connection() = default;
  /// Sends a request; `done` gets its response, or the failure at the
  /// deadline, on cancellation or when the connection dies. Nothing waits in
  /// a thread meanwhile. `opts.cancel`, when set, must outlive the request.
  virtual void async_request(std::string_view method, const json::Value* params, RequestOptions opts,
                             ResponseHandler done) = 0;
  /// async_request as a step of a coroutine (resumed on its executor, which
  /// must be a strand). Transports that can run the exchange in the caller's
  /// coroutine override it, saving two hops between threads per request.
  virtual Task<Response> call(std::string_view method, const json::Value* params, RequestOptions opts);
  /// Queues a notification; false when the connection is closed. Delivery
  /// is asynchronous (a failure is logged), in order with later requests.
  virtual bool notify(std::string_view method, const json::Value* params) = 0;
  /// Queues a response to a server-initiated request, like notify.
  virtual bool respond(std::string message) = 0;
  /// Records the negotiated protocol version (sent as a header over HTTP).
  virtual void set_protocol_version(std::string version) = 0;
  /// Starts taking messages the server sends outside any request (over
  /// HTTP, the session's GET stream); call after initialization.
  virtual void listen() {}
  /// Ends the connection (stops the child, deletes the HTTP session): pending
  /// requests fail at once; `done` runs on an I/O thread when it is over
  /// (the child reaped, the DELETE answered or given up on). Idempotent.
  virtual void async_close(std::function<void()> done) = 0;
  /// async_close as a step of a coroutine.
  Task<> shut();
  /// False once the connection has died.
  virtual bool alive() const = 0;
  /// The session the server gave this connection (HTTP, session
  /// revisions); "" where there is none.
  virtual std::string session_id() const { return {}; }
};

}  // namespace mcpgw::transport
