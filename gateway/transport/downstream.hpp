#pragma once
// The contract between the downstream transports (Streamable HTTP, stdio) and
// whatever answers MCP messages (the router). Transports know sessions,
// streams and HTTP; the handler knows methods. Neither knows the other's
// internals.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "util/cancel.hpp"

namespace mcpgw::transport {

/// Facts the transport learned about a client from its connection.
struct ClientContext {
  std::string mode;        ///< from /mcp/<mode>; empty = the default mode
  std::string principal;   ///< authenticated name; empty without auth
  std::vector<std::string> allowed_modes;  ///< principal's modes; empty = any
  /// A 2026-07-28 request served without a session: the session lives for
  /// this one request.
  bool stateless = false;
  /// The `Mcp-Param-<name>` headers of a stateless HTTP request, by
  /// lower-cased name, raw values; `has_param_headers` is false where the
  /// transport has no headers (stdio).
  std::vector<std::pair<std::string, std::string>> param_headers;
  bool has_param_headers = false;
};

/// A bounded queue of messages from the server to one client, drained by
/// whichever stream the transport has open for that client.
class Outbox {
 public:
  explicit Outbox(std::size_t capacity = 1024) : capacity_(capacity) {}
  /// Queues `msg`; false (and the message is dropped) when full or closed.
  bool push(std::string msg);
  /// Waits until a message arrives, the outbox closes, or `timeout` passes.
  std::optional<std::string> pop(std::chrono::milliseconds timeout);
  void close();
  bool closed() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> q_;
  std::size_t capacity_;
  bool closed_ = false;
};

/// One client session. The transport creates the id and keeps the session
/// alive; the handler subclasses it to keep its own per-client state.
class Session {
 public:
  virtual ~Session() = default;

  const std::string& id() const { return id_; }
  const ClientContext& context() const { return ctx_; }

  /// Sends a message outside any request (e.g. list_changed). Dropped when the
  /// client has no server-to-client stream open.
  void notify(std::string msg);

  /// Set by the transport when the session begins.
  void bind(std::string id, ClientContext ctx, std::function<bool(std::string)> sink);
  /// Replaces the sink (e.g. when a GET stream opens).
  void set_sink(std::function<bool(std::string)> sink);

 private:
  std::string id_;
  ClientContext ctx_;
  std::mutex sink_mu_;
  std::function<bool(std::string)> sink_;
};

/// The downstream side of one client request in flight.
class Exchange {
 public:
  virtual ~Exchange() = default;
  /// A message to the client related to this request (progress, a
  /// server-to-client request), delivered before the final reply.
  virtual void send(std::string msg) = 0;
  /// The final response. Exactly once per request.
  virtual void reply(std::string response) = 0;
  /// True when the handler may do this request's work on the calling
  /// thread: the transport has a thread for this request alone. Messages
  /// sent meanwhile are then delivered with the reply instead of as they
  /// happen.
  virtual bool may_block_caller() const { return false; }
  /// False when messages sent before the reply cannot reach the client (an
  /// HTTP client that accepts only a JSON response).
  virtual bool can_send() const { return true; }
  /// True once the client went away or cancelled this request.
  bool cancelled() const { return cancel_.cancelled(); }
  /// Cancels the work done for this request (it still gets a reply).
  void cancel() { cancel_.cancel(); }
  /// For work that blocks: wakes it when the request is cancelled.
  CancelSignal& cancel_signal() { return cancel_; }

 private:
  CancelSignal cancel_;
};

/// Implemented by the router.
class Handler {
 public:
  virtual ~Handler() = default;
  /// A new session for `ctx` (the transport binds it). An error refuses the
  /// client (e.g. unknown mode) and is reported by the transport as it fits.
  virtual Result<std::shared_ptr<Session>> open_session(const ClientContext& ctx) = 0;
  /// Handles one message of `session`. For a request, `exchange->reply` must
  /// be called exactly once, now or later from any thread; `exchange` is null
  /// for notifications and responses.
  virtual void handle(const std::shared_ptr<Session>& session, jsonrpc::Message msg,
                      std::shared_ptr<Exchange> exchange) = 0;
  /// The session ended (DELETE, idle expiry, stdin closed).
  virtual void close_session(const std::shared_ptr<Session>& session) = 0;
  /// Modes a client may select in the URL, for error messages and checks.
  virtual std::vector<std::string> modes() const = 0;
};

}  // namespace mcpgw::transport
