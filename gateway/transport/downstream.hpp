#pragma once
// The contract between the downstream transports (Streamable HTTP, stdio) and
// whatever answers MCP messages (the router). Transports know sessions,
// streams and HTTP; the handler knows methods. Neither knows the other's
// internals.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "transport/shared_sessions.hpp"
#include "util/cancel.hpp"
#include "util/spliced_text.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

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
  /// Headers of the client's request named by some server's
  /// `forward_headers` (as received), for the upstreams that list them.
  std::vector<std::pair<std::string, std::string>> forward_headers;
  /// The client's own OAuth access token (auth.oauth) when it came with
  /// one: what an upstream of grant token_exchange exchanges (never sent
  /// upstream itself, never logged).
  std::string subject_token;
  /// The client's OAuth token's claims and scopes (auth.oauth), for
  /// policies; null and empty for a static token or without auth.
  std::shared_ptr<const json::Document> claims;
  std::vector<std::string> scopes;
};

/// One client session. The transport creates the id and keeps the session
/// alive; the handler subclasses it to keep its own per-client state.
class Session {
 public:
  virtual ~Session() = default;

  const std::string& id() const { return id_; }
  const ClientContext& context() const { return ctx_; }

  /// Sends a message outside any request (e.g. list_changed). Dropped when the
  /// client has no server-to-client stream open, or when that stream's
  /// bounded queue is full (the transport then closes the stream). Never
  /// blocks; safe from any thread.
  void notify(std::string msg);

  /// Set by the transport when the session begins.
  void bind(std::string id, ClientContext ctx, std::function<bool(std::string)> sink);
  /// Replaces the sink (e.g. when a GET stream opens).
  void set_sink(std::function<bool(std::string)> sink);
  /// The client's OAuth token of its latest request (ClientContext::
  /// subject_token): a session outlives the token it began with.
  std::string subject_token() const;
  void set_subject_token(std::string token);

 private:
  // Set by bind(), before the session is shared: read without a lock.
  std::string id_;
  ClientContext ctx_;
  mutable util::Mutex sink_mu_;
  std::function<bool(std::string)> sink_ GUARDED_BY(sink_mu_);
  std::string subject_token_ GUARDED_BY(sink_mu_);
};

/// The downstream side of one client request in flight.
class Exchange {
 public:
  virtual ~Exchange() = default;
  /// A message to the client related to this request (a log message, a
  /// server-to-client request), delivered before the final reply; false
  /// when it cannot be (the client takes no messages mid-request, or reads
  /// too slowly and its stream is full: the message was dropped).
  virtual bool send(std::string msg) = 0;
  /// A progress notification of this request. One still waiting for a
  /// slow client is replaced by it (the latest wins), so progress never
  /// fills a stream.
  virtual void progress(std::string msg) { send(std::move(msg)); }
  /// The final response, with the JSON-RPC error code it carries (0 for
  /// a result), so a transport chooses its status without reading the
  /// response again. Exactly once per request. A relayed result comes as
  /// a piece of its own (SplicedText): a transport that can write it
  /// where it lies does not copy it.
  virtual void reply(SplicedText response, int error) = 0;
  /// False when messages sent before the reply cannot reach the client (an
  /// HTTP client that accepts only a JSON response).
  virtual bool can_send() const { return true; }
  /// True once the client went away or cancelled this request.
  bool cancelled() const { return cancel_.cancelled(); }
  /// Cancels the work done for this request (it still gets a reply).
  void cancel() { cancel_.cancel(); }
  /// Fires when the request is cancelled (the client gave up), for the
  /// work done for it to stop.
  CancelSignal& cancel_signal() { return cancel_; }
  /// The strand the request's answer is written on, if it has one: work
  /// for the request that runs there needs no hop to another thread to
  /// start or to answer. Empty: none.
  virtual asio::any_io_executor executor() const { return {}; }

 private:
  CancelSignal cancel_;
};

/// Implemented by the router. The transports call every method on an I/O
/// thread: none may block (work that waits runs as a coroutine on the loop
/// and answers later through Exchange::reply, from any thread).
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
  /// The transport refused a request before handing it over (`reason`:
  /// auth, ...; `detail` says why; `tool`: the tool a refused call named),
  /// for the audit log and metrics. Must not block.
  virtual void refused(const ClientContext& /*ctx*/, std::string_view /*reason*/, std::string_view /*detail*/,
                       std::string_view /*tool*/ = {}) {}
  /// A session another replica began (cluster.secret), as its sealed id
  /// describes it: open_session() with the state initialize left.
  virtual Result<std::shared_ptr<Session>> resume_session(const ClientContext& ctx, const SealedSession& sealed) {
    (void)sealed;
    return open_session(ctx);
  }
  /// The session's server-to-client (GET) stream opened on this process.
  virtual void stream_opened(const std::shared_ptr<Session>& session) { (void)session; }
  /// That stream closed.
  virtual void stream_closed(const std::shared_ptr<Session>& session) { (void)session; }
};

}  // namespace mcpgw::transport
