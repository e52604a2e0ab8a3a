#pragma once
// Upstream over MCP Streamable HTTP: each request is a POST answered as JSON
// or as an SSE stream (resumed with Last-Event-ID when it breaks off), the
// session's GET stream carries what the server sends on its own. All of it
// runs as coroutines on the I/O loop, over an HttpClient pool.
#include <atomic>
#include <deque>
#include <map>
#include <memory>

#include "transport/connection.hpp"
#include "transport/credential.hpp"
#include "transport/http_client.hpp"
#include "transport/io.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

/// What an HttpConnection needs to know of its server.
struct HttpTarget {
  std::string name;  ///< the server's name, for logs and errors
  std::string url;
  Headers headers;   ///< sent with every request
  TlsOptions tls;
  /// Largest JSON body or SSE event accepted; a larger answer fails its
  /// request (Failure::TooLarge).
  std::size_t max_response_bytes = 64 * 1024 * 1024;
  /// The Authorization of every request (an OAuth upstream); null = none.
  std::shared_ptr<Credential> credential;
};

/// One MCP session with a Streamable HTTP server.
class HttpConnection final : public Connection, public std::enable_shared_from_this<HttpConnection> {
 public:
  /// Validates the URL and the TLS settings and prepares the pool; connects lazily.
  static Result<std::shared_ptr<HttpConnection>> create(Io& io, HttpTarget target, ConnectionHandlers handlers);

  void async_request(std::string_view method, const json::Value* params, RequestOptions opts,
                     ResponseHandler done) override;
  Task<Response> call(std::string_view method, const json::Value* params, RequestOptions opts) override;
  bool notify(std::string_view method, const json::Value* params) override;
  bool respond(std::string message) override;
  void set_protocol_version(std::string version) override;
  void listen() override;
  void async_close(std::function<void()> done) override;
  bool alive() const override { return !closed_.load(); }
  std::string session_id() const override;

 private:
  HttpConnection(Io& io, HttpTarget target, std::shared_ptr<HttpClient> client, ConnectionHandlers handlers);
  /// An Abort for one exchange on a new strand, fired by close(); null when closed already.
  std::shared_ptr<Abort> new_abort(asio::any_io_executor strand, std::chrono::steady_clock::time_point deadline,
                                   CancelSignal* cancel);
  void forget(const std::shared_ptr<Abort>& abort);
  /// Keeps `sid`, the session a response named, as the connection's own.
  void remember_session(std::string sid);
  /// The headers of every request: the session's (`session`, else the
  /// connection's own; none when `routing` is a stateless request's own,
  /// naming its version), `routing` (with the request's extra headers),
  /// then the configured ones.
  Headers base_headers(const Headers& routing = {}, const std::string& session = {});
  /// The answer to one POST as it is read: a JSON body, or an SSE stream
  /// whose messages go to the request's handler until its response comes.
  struct PostAnswer;
  /// POSTs `body` (taken); for a request (`id`), reads until its response.
  /// `opts`' forwarded headers, session (another session of the server to
  /// send in) and on_related are taken; `abort` and `opts` must outlive it.
  Task<Response> post(std::string& body, std::optional<std::int64_t> id, Abort& abort, RequestOptions& opts,
                      const Headers& routing);
  /// After a 401 to `req`: renews the token and sends `req` again, its
  /// answer read anew into `p` and `res`; the error when no token came.
  Task<Result<void>> post_again(HttpRequest& req, PostAnswer& p, HttpResult& res, Abort& abort,
                                CancelSignal* cancel);
  /// Resumability (2025-11-25): a stream that ended before the answer,
  /// after events with ids, goes on in a GET with Last-Event-ID once the
  /// delay the server asked for has passed, at most kMaxResumes times.
  /// The error when a resumption got no token.
  Task<Result<void>> resume(PostAnswer& p, HttpResult& res, Abort& abort, CancelSignal* cancel);
  /// Adds the credential's Authorization to `req` (renewing `rejected`);
  /// the error when there is none. Only with a credential.
  Task<Result<void>> authorize(HttpRequest& req, const Abort& abort, CancelSignal* cancel,
                               const std::string& rejected = {});
  /// One request's exchange, on the calling coroutine's strand.
  Task<Response> exchange(std::int64_t id, std::string body, RequestOptions opts, Headers routing);
  /// Tells the server request `id` is given up (notifications/cancelled).
  void notify_cancelled(std::int64_t id, std::string_view reason);
  Task<void> drain_outbox();
  Task<void> listen_loop();
  /// Queues a notification or response; later requests wait for it.
  bool enqueue(std::string message);
  /// Handles one SSE event's data on the GET stream.
  void on_stream_event(std::string_view data);
  /// Why an answer of `bytes` or more was dropped.
  static std::string size_text(std::size_t bytes, std::size_t limit);
  /// Resumptions of one request's stream, at most.
  static constexpr int kMaxResumes = 5;

  Io& io_;
  HttpTarget target_;
  std::shared_ptr<HttpClient> client_;
  ConnectionHandlers handlers_;
  std::atomic<std::int64_t> next_id_{1};
  std::atomic<bool> closed_{false};
  /// Every request reads the session; a response that names another one
  /// writes it. Shared: requests on two workers never wait on each other.
  mutable util::SharedMutex session_mu_;
  std::string session_id_ GUARDED_BY(session_mu_);
  std::string protocol_version_ GUARDED_BY(session_mu_);
  /// One worker's exchanges in flight, which close() fires. A lock per
  /// worker, not one for the connection: at eight connections on two
  /// workers, one lock taken by every request made them wait on each other.
  struct InFlight;
  std::vector<std::unique_ptr<InFlight>> in_flight_;  ///< per worker
  InFlight& in_flight_here();
  mutable util::Mutex mu_;
  std::deque<std::string> outbox_ GUARDED_BY(mu_);
  /// The outbox is being sent. Written under mu_ with the outbox; call()
  /// reads it alone (a request racing a notification may go either first).
  std::atomic<bool> sending_{false};
  /// Requests waiting for the outbox to drain, so they follow what was queued before them.
  std::vector<std::function<void()>> after_outbox_ GUARDED_BY(mu_);
  bool close_over_ GUARDED_BY(mu_) = false;
  std::vector<std::function<void()>> on_closed_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::transport
