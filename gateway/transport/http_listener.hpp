#pragma once
// A small HTTP/1.1 server on Boost.Beast, generic (it knows nothing of MCP):
// an acceptor (plain TCP or TLS), one coroutine per connection that owns its
// socket and buffers, keep-alive, deadlines against slow peers, a body
// limit, and two ways to answer: a whole response, or a chunked stream fed
// from any thread through a bounded StreamQueue (server-sent events;
// stream_queue.hpp).
//
// Usage:
//
//   http::Listener l(io, opts,
//       [](http::Request& req, http::Responder& res) -> Task<void> {
//         co_await res.send({200, {{"Content-Type", "text/plain"}}, "hello\n"});
//       });
//   if (auto port = l.bind(); !port) fail(port.error());
//   l.start();
//   ...
//   l.stop();   // stop accepting; idle connections close, busy ones finish
//   l.wait();   // until every connection is gone
//
// The handler runs on the connection's strand, one request at a time per
// connection; it must answer exactly once (send or stream) and never block.
// A handler that throws closes its connection only.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/io.hpp"
#include "transport/stream_queue.hpp"
#include "util/result.hpp"
#include "util/spliced_text.hpp"
#include "util/task.hpp"

namespace mcpgw::transport::http {

/// One header field, as received or to send.
struct Header {
  std::string name;
  std::string value;
};

/// A request, read whole before the handler runs.
struct Request {
  std::string method;  ///< "GET", "POST", ...
  std::string target;  ///< as sent: path and query
  std::vector<Header> headers;
  std::string body;  ///< empty when body_too_large
  /// The body was over ListenerOptions::max_body_bytes; it was read (up to
  /// a hard cap) and dropped. The handler decides how to refuse.
  bool body_too_large = false;

  /// The target without its query string.
  std::string_view path() const;
  /// True when a header `name` (any case) is present.
  bool has(std::string_view name) const;
  /// The first value of header `name` (any case); "" when absent. A view
  /// into the request: valid while it lives.
  std::string_view get(std::string_view name) const;
};

/// A whole response. Content-Length is added by the listener.
struct Response {
  int status = 200;
  std::vector<Header> headers;
  SplicedText body;  ///< written from its pieces as they are (a relayed result is not copied)
};

/// How a streamed response is paced.
struct StreamOptions {
  /// Written when nothing else was for this long (keeps proxies and the
  /// peer's read timeouts quiet, and reveals a gone peer).
  std::chrono::milliseconds heartbeat_every{15000};
  std::string heartbeat;  ///< empty = no heartbeats
  bool prime = false;     ///< write a heartbeat right after the header
};

/// How a stream ended.
enum class StreamEnd {
  Done,      ///< the queue was closed and drained
  PeerGone,  ///< a write failed or timed out
  Overflow,  ///< the peer read too slowly; the connection is closed
};

/// Answers one request. Implemented by the listener for each stream type.
class Responder {
 public:
  virtual ~Responder() = default;
  /// Sends `r` whole; false when the peer is gone.
  virtual Task<bool> send(Response r) = 0;
  /// Sends `head` (status and headers) then the chunks of `queue` as a
  /// chunked body until the queue is closed and drained, the peer goes, or
  /// the queue overflows.
  virtual Task<StreamEnd> stream(Response head, std::shared_ptr<StreamQueue> queue, StreamOptions opts) = 0;
  /// The connection's strand (what StreamQueue needs).
  virtual asio::any_io_executor executor() = 0;
  /// True once send() or stream() began: the request has its answer.
  virtual bool answered() const = 0;

 protected:
  static bool take(StreamQueue& q, std::string& out) { return q.take(out); }
  static void set_interrupt(StreamQueue& q, std::function<void()> fn) { q.set_interrupt(std::move(fn)); }
  /// What the writer of `q` reads before checking the queue and then waits past.
  static std::uint64_t generation(const StreamQueue& q) { return q.ready_.generation(); }
  /// Waits up to `d` for a generation of `q` newer than `seen`; false when `d` passed.
  static Task<bool> wait(StreamQueue& q, std::uint64_t seen, std::chrono::steady_clock::duration d) {
    return q.ready_.wait(seen, std::chrono::steady_clock::now() + d);
  }
  /// Wakes the writer of `q` (on its strand: something it watches changed).
  static void notify(StreamQueue& q) { q.ready_.notify(); }
};

/// Handles one request; see the file comment.
using Handler = std::function<Task<void>(Request&, Responder&)>;

struct ListenerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  ///< 0 = any free port
  bool reuse_port = false;  ///< SO_REUSEPORT (several processes on one port)
  std::string tls_cert_file;  ///< both set = HTTPS (PEM chain and key)
  std::string tls_key_file;
  std::size_t max_body_bytes = 4 << 20;
  std::size_t max_header_bytes = 64 << 10;
  /// From accept (TLS handshake included) or from a request's first byte
  /// to its last header line: a peer trickling headers is cut off here.
  std::chrono::milliseconds header_timeout{10000};
  /// A keep-alive connection with no request coming is closed after this.
  std::chrono::milliseconds idle_timeout{60000};
  /// The whole body of one request must arrive within this.
  std::chrono::milliseconds body_timeout{60000};
  /// One write that makes no progress for this long ends the connection.
  std::chrono::milliseconds write_timeout{30000};
};

/// The acceptor and its connections.
class Listener {
 public:
  Listener(Io& io, ListenerOptions opts, Handler handler);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// Opens, binds and listens (backlog SOMAXCONN); the bound port, or
  /// "cannot listen on HOST:PORT: why". Loads the TLS files when set.
  Result<int> bind();
  /// Starts accepting on the I/O threads; call after bind().
  void start();
  /// Stops accepting; closes idle connections; a connection busy with a
  /// request closes after answering it. Safe from any thread; idempotent.
  void stop();
  /// Blocks until stop() was called and every connection is closed.
  void wait();
  /// Open connections.
  std::size_t connections() const;
  /// True when serving HTTPS.
  bool tls() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcpgw::transport::http
