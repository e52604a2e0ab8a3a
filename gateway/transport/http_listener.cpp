#include "transport/http_listener.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <optional>

#include "transport/message_head.hpp"
#include "transport/message_parser.hpp"
#include "util/ascii.hpp"
#include "util/deadline.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

/// A response's head and its body's pieces, in the order they are written.
using Gather = std::array<asio::const_buffer, 4>;

/// What of `out` is left after its first `written` bytes.
Gather unsent(const Gather& out, std::size_t written) {
  Gather left;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t skip = std::min(written, out[i].size());
    left[i] = out[i] + skip;
    written -= skip;
  }
  return left;
}

/// Built outside the coroutine and passed as a named local: GCC 12 destroys
/// some temporaries of a co_await full-expression twice.
Response internal_error() {
  Response r;
  r.status = 500;
  r.headers.push_back({"Content-Type", "text/plain"});
  r.body = "Internal Server Error\n";
  return r;
}

auto with_ec(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

/// Runs `fn` when the scope ends, however it ends (unwinding included).
template <typename F>
struct Finally {
  F fn;
  ~Finally() { fn(); }
};
template <typename F>
Finally(F) -> Finally<F>;

/// What stop() needs of one connection; touched on its strand only.
struct Conn {
  bool idle = false;                 ///< waiting for a request's first byte
  std::function<void()> cancel;      ///< aborts the pending I/O; null once the stream is gone
};

}  // namespace

// --- Request ------------------------------------------------------------

std::string_view Request::path() const {
  std::string_view t(target);
  return t.substr(0, t.find('?'));
}

bool Request::has(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const Header& h) { return iequals(h.name, name); });
}

std::string_view Request::get(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return {};
}

// --- Listener -----------------------------------------------------------

struct Listener::Impl : std::enable_shared_from_this<Impl> {
  Impl(Io& i, ListenerOptions o, Handler h)
      : io(i), opts(std::move(o)), handler(std::move(h)), acceptor(i.next()) {}

  Io& io;
  ListenerOptions opts;
  Handler handler;
  tcp::acceptor acceptor;
  std::optional<asio::ssl::context> ssl;
  std::atomic<bool> stopping{false};
  mutable util::Mutex mu;
  std::condition_variable cv;
  std::map<std::uint64_t, std::pair<asio::any_io_executor, std::shared_ptr<Conn>>> conns GUARDED_BY(mu);
  std::uint64_t next_id GUARDED_BY(mu) = 0;
  bool accepting GUARDED_BY(mu) = false;  // the accept loop runs

  /// What a body may reach before reading stops: past the limit a body is
  /// still read (and dropped) so the connection stays usable for the next
  /// request, but not forever.
  std::uint64_t hard_cap() const { return std::max<std::uint64_t>(16 * opts.max_body_bytes, 1 << 20); }

  template <typename Stream>
  class ConnResponder;

  Task<void> accept_loop();
  void spawn(tcp::socket sock);
  template <typename Stream>
  Task<void> serve(Stream& stream, Conn& conn, bool deadline_running);
  template <typename Stream>
  Task<bool> read_request(Stream& stream, beast::flat_buffer& buffer, Conn& conn, bool first, Deadline& idle,
                          Request& req, bool& keep_alive);

  void forget(std::uint64_t id) {
    util::MutexLock lk(mu);
    conns.erase(id);
    if (conns.empty()) cv.notify_all();
  }
};

/// The Responder of one request on a `Stream` (tcp_stream or ssl_stream).
template <typename Stream>
class Listener::Impl::ConnResponder final : public Responder {
 public:
  /// `buffer`: the connection's read buffer (what a client pipelines while
  /// it reads a stream is kept there for its next request).
  ConnResponder(Stream& s, beast::flat_buffer& buffer, const ListenerOptions& o, bool head_only, bool keep_alive)
      : stream_(s), buffer_(buffer), opts_(o), head_only_(head_only), keep_alive_(keep_alive) {}

  bool answered() const override { return answered_; }
  /// The connection must close after this response.
  bool must_close() const { return close_ || !keep_alive_; }

  asio::any_io_executor executor() override { return stream_.get_executor(); }

  Task<bool> send(Response r) override {
    answered_ = true;
    auto head = response_head(r, keep_alive_);
    if (!head) {
      // Only the gateway's own code names the headers: a line break in one
      // is a bug, and the connection ends rather than carry a split head.
      spdlog::error("HTTP response {} not sent: a header has a line break or an empty name", r.status);
      close_ = true;
      co_return false;
    }
    Gather out{asio::buffer(*head)};
    if (!head_only_) {
      auto pieces = r.body.pieces();
      for (std::size_t i = 0; i < pieces.size(); ++i) out[i + 1] = asio::buffer(pieces[i]);
    }
    const std::size_t total = asio::buffer_size(out);
    std::size_t written = 0;
    error_code ec;
    // Over plain TCP (a non-blocking socket, see spawn()) the answer is
    // written at once when the socket takes it (the usual case: it fits the
    // socket's buffer), saving the trip around the loop that an
    // asynchronous write finishing at once costs; what is left goes
    // asynchronously, within the write deadline.
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      while (written < total && !ec) written += stream_.socket().write_some(unsent(out, written), ec);
      if (ec != asio::error::would_block && ec != asio::error::try_again) {
        if (ec) close_ = true;
        co_return !ec;
      }
      ec = {};
    }
    beast::get_lowest_layer(stream_).expires_after(opts_.write_timeout);
    co_await asio::async_write(stream_, unsent(out, written), with_ec(ec));
    if (ec) close_ = true;
    co_return !ec;
  }

  Task<StreamEnd> stream(Response head, std::shared_ptr<StreamQueue> q, StreamOptions o) override {
    answered_ = true;
    bhttp::response<bhttp::empty_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(head.status));
    for (auto& h : head.headers) res.set(h.name, h.value);
    res.keep_alive(keep_alive_);
    res.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr(res);
    error_code ec;
    beast::get_lowest_layer(stream_).expires_after(opts_.write_timeout);
    co_await bhttp::async_write_header(stream_, sr, with_ec(ec));
    beast::get_lowest_layer(stream_).expires_never();
    StreamEnd end = ec ? StreamEnd::PeerGone : co_await pump(*q, o);
    if (end != StreamEnd::Done) close_ = true;
    co_return end;
  }

 private:
  /// A read pending while a stream is written: a client reading a stream
  /// sends nothing, so its completion means the client closed the
  /// connection (noticed at once, not at the next heartbeat), or pipelined
  /// its next request (kept in the buffer; the watch ends).
  struct PeerWatch {
    bool done = false, gone = false;
  };

  Task<StreamEnd> pump(StreamQueue& q, const StreamOptions& o) {
    set_interrupt(q, [this] { beast::get_lowest_layer(stream_).cancel(); });
    Finally detach{[&q] { set_interrupt(q, nullptr); }};
    auto watch = std::make_shared<PeerWatch>();
    auto watched = [this, watch, &q](const error_code& ec, std::size_t n) {
      buffer_.commit(n);
      watch->done = true;
      watch->gone = ec || n == 0;
      notify(q);
    };
    stream_.async_read_some(buffer_.prepare(4096), std::move(watched));
    StreamEnd end = co_await pump_queue(q, o, *watch);
    if (!watch->done) {
      // The read refers to this frame's buffer: it ends before we do.
      beast::get_lowest_layer(stream_).cancel();
      for (auto seen = generation(q); !watch->done; seen = generation(q)) co_await wait(q, seen, std::chrono::hours(1));
    }
    co_return end;
  }

  Task<StreamEnd> pump_queue(StreamQueue& q, const StreamOptions& o, const PeerWatch& watch) {
    bool beat = !o.heartbeat.empty();
    if (o.prime && beat && !co_await chunk(o.heartbeat)) co_return StreamEnd::PeerGone;
    std::string batch;
    for (;;) {
      std::uint64_t seen = generation(q);
      if (q.overflowed()) co_return StreamEnd::Overflow;
      if (watch.gone) co_return StreamEnd::PeerGone;
      batch.clear();
      bool last = take(q, batch);
      if (!batch.empty()) {
        if (!co_await chunk(batch)) co_return q.overflowed() ? StreamEnd::Overflow : StreamEnd::PeerGone;
        continue;
      }
      if (last) {
        error_code ec;
        beast::get_lowest_layer(stream_).expires_after(opts_.write_timeout);
        co_await asio::async_write(stream_, bhttp::make_chunk_last(), with_ec(ec));
        co_return ec ? StreamEnd::PeerGone : StreamEnd::Done;
      }
      bool woken =
          co_await wait(q, seen, beat ? std::chrono::steady_clock::duration(o.heartbeat_every) : std::chrono::hours(24));
      if (!woken && beat && !co_await chunk(o.heartbeat)) co_return StreamEnd::PeerGone;
    }
  }

  Task<bool> chunk(std::string_view data) {
    error_code ec;
    beast::get_lowest_layer(stream_).expires_after(opts_.write_timeout);
    co_await asio::async_write(stream_, bhttp::make_chunk(asio::buffer(data.data(), data.size())), with_ec(ec));
    // The write timeout must not cut the peer watch's read short later.
    beast::get_lowest_layer(stream_).expires_never();
    co_return !ec;
  }

  Stream& stream_;
  beast::flat_buffer& buffer_;
  const ListenerOptions& opts_;
  bool head_only_, keep_alive_;
  bool answered_ = false, close_ = false;
};

Task<void> Listener::Impl::accept_loop() {
  auto self = shared_from_this();
  asio::steady_timer backoff(acceptor.get_executor());
  for (;;) {
    // Each connection goes to the next worker and stays there: a worker's
    // thread alone runs it, so it needs no strand.
    tcp::socket sock(io.next());
    error_code ec;
    co_await acceptor.async_accept(sock, with_ec(ec));
    if (stopping.load() || ec == asio::error::operation_aborted) break;
    if (ec) {
      // Out of descriptors, typically: retry soon rather than spin.
      spdlog::warn("accept failed: {}", ec.message());
      backoff.expires_after(std::chrono::milliseconds(100));
      co_await backoff.async_wait(with_ec(ec));
      continue;
    }
    spawn(std::move(sock));
  }
  util::MutexLock lk(mu);
  accepting = false;
  cv.notify_all();
}

void Listener::Impl::spawn(tcp::socket sock) {
  error_code ignored;
  sock.set_option(tcp::no_delay(true), ignored);
  // A plain connection's answers are written synchronously when the socket
  // takes them (ConnResponder::send): a write that would block must say so.
  if (!ssl) sock.non_blocking(true, ignored);
  auto conn = std::make_shared<Conn>();
  auto ex = sock.get_executor();
  std::uint64_t id;
  {
    util::MutexLock lk(mu);
    id = next_id++;
    conns.emplace(id, std::make_pair(ex, conn));
  }
  auto done = [self = shared_from_this(), id](std::exception_ptr ep) {
    if (ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        spdlog::debug("HTTP connection closed on error: {}", e.what());
      } catch (...) {
      }
    }
    self->forget(id);
  };
  auto self = shared_from_this();
  if (ssl) {
    asio::co_spawn(
        ex,
        [self, conn, sock = std::move(sock)]() mutable -> Task<void> {
          beast::ssl_stream<beast::tcp_stream> stream(std::move(sock), *self->ssl);
          beast::get_lowest_layer(stream).expires_after(self->opts.header_timeout);
          error_code ec;
          co_await stream.async_handshake(asio::ssl::stream_base::server, with_ec(ec));
          if (ec) co_return;
          co_await self->serve(stream, *conn, true);
          beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
          co_await stream.async_shutdown(with_ec(ec));
        },
        std::move(done));
  } else {
    asio::co_spawn(
        ex,
        [self, conn, sock = std::move(sock)]() mutable -> Task<void> {
          beast::tcp_stream stream(std::move(sock));
          co_await self->serve(stream, *conn, false);
          error_code ec;
          stream.socket().shutdown(tcp::socket::shutdown_send, ec);
        },
        std::move(done));
  }
}

/// Over plain TCP (a non-blocking socket, see spawn()) runs `read`, a
/// synchronous Beast read, which parses what is buffered and reads what the
/// socket has: a request usually comes whole in one segment, and then no
/// trip around the loop follows, as one would after an asynchronous read
/// that finishes at once (two a request, head and body). False when it
/// would block (or the stream is TLS): read asynchronously then, within
/// the deadline. `ec` is `read`'s error otherwise.
template <typename Stream, typename Read>
bool read_buffered(Stream& stream, error_code& ec, Read read) {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    read(stream.socket());
    if (ec != asio::error::would_block && ec != asio::error::try_again) return true;
    ec = {};
  }
  return false;
}

template <typename Stream>
Task<bool> Listener::Impl::read_request(Stream& stream, beast::flat_buffer& buffer, Conn& conn, bool first,
                                        Deadline& idle, Request& req, bool& keep_alive) {
  auto& tcp_layer = beast::get_lowest_layer(stream);
  error_code ec;
  if (buffer.size() == 0) {
    // Idle: the only state stop() may cut short.
    if (stopping.load()) co_return false;
    conn.idle = true;
    // Between requests a connection waits on the loop's one timer
    // (util/deadline), the stream's own off: that is an Asio timer armed
    // per read, whose cancel when the request comes costs a trip around
    // the loop. The first request's deadline runs from accept, on the
    // stream's timer (serve).
    if (!first) {
      tcp_layer.expires_never();
      idle.arm(Deadline::Clock::now() + opts.idle_timeout, [&tcp_layer] {
        error_code ignored;  // a socket already closed has no read to end
        tcp_layer.socket().cancel(ignored);
      });
    }
    std::size_t n = co_await stream.async_read_some(buffer.prepare(4096), with_ec(ec));
    idle.disarm();
    conn.idle = false;
    if (ec) co_return false;
    buffer.commit(n);
  }
  // The first request's deadline runs from accept; later ones' from their first byte.
  if (!first) tcp_layer.expires_after(opts.header_timeout);
  RequestParser parser(req, opts.max_body_bytes);
  parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
  parser.body_limit(boost::none);  // max_body_bytes and the hard cap are enforced here, for chunked bodies too
  if (!read_buffered(stream, ec, [&](tcp::socket& s) { bhttp::read_header(s, buffer, parser, ec); }))
    co_await bhttp::async_read_header(stream, buffer, parser, with_ec(ec));
  if (ec) {
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      // Not HTTP we can read: say so once, then close.
      bhttp::response<bhttp::string_body> bad(ec == bhttp::error::header_limit
                                                  ? bhttp::status::request_header_fields_too_large
                                                  : bhttp::status::bad_request,
                                              11);
      bad.keep_alive(false);
      bad.prepare_payload();
      tcp_layer.expires_after(opts.write_timeout);
      co_await bhttp::async_write(stream, bad, with_ec(ec));
    }
    co_return false;
  }
  keep_alive = parser.keep_alive();
  if (iequals(req.get("Expect"), "100-continue")) {
    bhttp::response<bhttp::empty_body> cont(bhttp::status::continue_, 11);
    tcp_layer.expires_after(opts.write_timeout);
    co_await bhttp::async_write(stream, cont, with_ec(ec));
    if (ec) co_return false;
  }
  tcp_layer.expires_after(opts.body_timeout);
  // The parser appends the body to the request (RequestParser); past the
  // hard cap the rest is never read.
  while (!parser.is_done()) {
    if (parser.seen() > hard_cap()) {
      keep_alive = false;
      break;
    }
    if (!read_buffered(stream, ec, [&](tcp::socket& s) { bhttp::read_some(s, buffer, parser, ec); }))
      co_await bhttp::async_read_some(stream, buffer, parser, with_ec(ec));
    if (ec) co_return false;
  }
  co_return true;
}

template <typename Stream>
Task<void> Listener::Impl::serve(Stream& stream, Conn& conn, bool deadline_running) {
  auto& tcp_layer = beast::get_lowest_layer(stream);
  conn.cancel = [&tcp_layer] { tcp_layer.cancel(); };
  Finally forget_stream{[&conn] { conn.cancel = nullptr; }};
  if (!deadline_running) tcp_layer.expires_after(opts.header_timeout);
  beast::flat_buffer buffer;
  Deadline idle(stream.get_executor());
  for (bool first = true;; first = false) {
    Request req;
    bool keep_alive = false;
    if (!co_await read_request(stream, buffer, conn, first, idle, req, keep_alive)) co_return;
    tcp_layer.expires_never();
    ConnResponder<Stream> res(stream, buffer, opts, req.method == "HEAD", keep_alive && !stopping.load());
    bool failed = false;
    try {
      co_await handler(req, res);
    } catch (const std::exception& e) {
      spdlog::error("HTTP handler failed on {} {}: {}", req.method, req.target, e.what());
      failed = true;
    }
    if (!res.answered()) {
      if (!failed) spdlog::error("HTTP handler gave no answer to {} {}", req.method, req.target);
      auto reply = internal_error();
      co_await res.send(std::move(reply));
      co_return;
    }
    if (res.must_close() || stopping.load()) co_return;
  }
}

Listener::Listener(Io& io, ListenerOptions opts, Handler handler)
    : impl_(std::make_shared<Impl>(io, std::move(opts), std::move(handler))) {}

Listener::~Listener() { stop(); }

Result<int> Listener::bind() {
  auto& o = impl_->opts;
  auto fail = [&](const std::string& why) {
    std::string shown = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
    std::string text = why;
    if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return Error{"cannot listen on " + shown + ":" + std::to_string(o.port) + ": " + text};
  };
  if (!o.tls_cert_file.empty() || !o.tls_key_file.empty()) {
    auto& ctx = impl_->ssl.emplace(asio::ssl::context::tls_server);
    ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                    asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    error_code ec;
    ctx.use_certificate_chain_file(o.tls_cert_file, ec);
    if (ec) return fail("TLS certificate " + o.tls_cert_file + ": " + ec.message());
    ctx.use_private_key_file(o.tls_key_file, asio::ssl::context::pem, ec);
    if (ec) return fail("TLS key " + o.tls_key_file + ": " + ec.message());
  }
  error_code ec;
  tcp::resolver resolver(impl_->io.next());
  auto found = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return fail(ec ? ec.message() : "no address");
  tcp::endpoint ep = found.begin()->endpoint();
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && o.reuse_port) a.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    a.close();
    return fail(ec.message());
  }
  return static_cast<int>(a.local_endpoint().port());
}

void Listener::start() {
  {
    util::MutexLock lk(impl_->mu);
    if (impl_->stopping.load() || !impl_->acceptor.is_open()) return;
    impl_->accepting = true;
  }
  auto self = impl_;
  asio::co_spawn(impl_->acceptor.get_executor(), [self]() { return self->accept_loop(); },
                 [self](std::exception_ptr) {
                   util::MutexLock lk(self->mu);
                   self->accepting = false;
                   self->cv.notify_all();
                 });
}

void Listener::stop() {
  if (impl_->stopping.exchange(true)) return;
  auto self = impl_;
  asio::post(impl_->acceptor.get_executor(), [self] {
    error_code ec;
    self->acceptor.close(ec);
  });
  util::MutexLock lk(impl_->mu);
  for (auto& [id, entry] : impl_->conns)
    asio::post(entry.first, [conn = entry.second] {
      if (conn->idle && conn->cancel) conn->cancel();
    });
  impl_->cv.notify_all();
}

void Listener::wait() {
  util::UniqueLock lk(impl_->mu);
  impl_->cv.wait(lk.native(), [&]() REQUIRES(impl_->mu) {
    return impl_->stopping.load() && !impl_->accepting && impl_->conns.empty();
  });
}

std::size_t Listener::connections() const {
  util::MutexLock lk(impl_->mu);
  return impl_->conns.size();
}

bool Listener::tls() const { return impl_->ssl.has_value(); }

}  // namespace mcpgw::transport::http
