#include "transport/http_client.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <cerrno>

#include "transport/message_head.hpp"
#include "transport/message_parser.hpp"
#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// Idle keep-alive connections kept per origin, at most; more are closed.
constexpr std::size_t kMaxIdle = 64;
/// Largest response head accepted (status line and headers).
constexpr std::uint32_t kMaxHead = 64 * 1024;
/// What a body is read by at most per system call (Beast's own cap).
constexpr std::size_t kBodyRead = 64 * 1024;

IpAddress ip_of(const asio::ip::address& a) {
  IpAddress out;
  if (a.is_v4()) return IpAddress::v4(a.to_v4().to_uint());
  out.v6 = true;
  out.bytes = a.to_v6().to_bytes();
  return out;
}

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

// ---------------------------------------------------------------------------
// Url

Result<Url> Url::parse(const std::string& url) {
  Url u;
  std::string_view rest(url);
  if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
    u.tls = true;
  } else {
    return Error{"url must start with http:// or https://: " + url};
  }
  auto slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (u.target.front() == '?') u.target.insert(0, "/");
  if (authority.find('@') != std::string_view::npos)
    return Error{"url must not carry credentials (use headers): " + url};
  u.host_header = std::string(authority);
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return Error{"url has an unclosed IPv6 address: " + url};
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return Error{"url has garbage after its IPv6 address: " + url};
      port = authority.substr(close + 2);
    }
  } else {
    auto colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Error{"url has no host: " + url};
  if (port.empty()) u.port = u.tls ? "443" : "80";
  else if (port.find_first_not_of("0123456789") != std::string_view::npos || port.size() > 5)
    return Error{"url has an invalid port: " + url};
  else u.port = std::string(port);
  return u;
}

std::string Url::text() const { return (tls ? "https://" : "http://") + host_header + target; }

std::string HttpHead::get(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

// ---------------------------------------------------------------------------
// Abort

Abort::Abort(asio::any_io_executor strand, Clock::time_point deadline)
    : strand_(strand), timer_(strand), deadline_(deadline) {}

std::shared_ptr<Abort> Abort::start(asio::any_io_executor strand, Clock::time_point deadline, CancelSignal* cancel) {
  auto a = std::make_shared<Abort>(std::move(strand), deadline);
  a->wait();
  // The callback runs in the cancelling thread: hop onto the strand.
  if (cancel) a->cancel_ = cancel->on_cancel([w = std::weak_ptr<Abort>(a)] {
    if (auto self = w.lock()) self->fire(Why::Cancelled);
  });
  return a;
}

void Abort::wait() {
  timer_.arm(deadline_, [w = weak_from_this()] {
    auto self = w.lock();
    if (!self || self->disarmed_) return;
    if (Clock::now() < self->deadline_) return self->wait();  // extended meanwhile
    self->fire_here(Why::Timeout);
  });
}

void Abort::fire(Why why) {
  asio::post(strand_, [self = shared_from_this(), why] { self->fire_here(why); });
}

void Abort::fire_here(Why why) {
  if (why_ != Why::None || disarmed_) return;
  why_ = why;
  if (action_) action_();
}

void Abort::on_fire(std::function<void()> action) {
  action_ = std::move(action);
  if (why_ != Why::None && action_) action_();
}

void Abort::disarm() {
  disarmed_ = true;
  action_ = {};
  timer_.disarm();
  cancel_.reset();
}

// ---------------------------------------------------------------------------
// HttpClient

struct HttpClient::Stream {
  std::unique_ptr<tcp::socket> plain;
  std::unique_ptr<ssl::stream<tcp::socket>> secure;
  beast::flat_buffer buffer;

  tcp::socket& socket() { return secure ? secure->next_layer() : *plain; }
  /// Aborts whatever runs on it; the stream is not used again.
  void close() {
    boost::system::error_code ignored;
    socket().close(ignored);
  }
  /// An idle connection the server has not closed (nor written to).
  bool idle_and_open() {
    if (!socket().is_open()) return false;
    char c;
    ssize_t n = ::recv(socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

struct HttpClient::Tls {
  ssl::context ctx{ssl::context::tls_client};
  bool verify = true;
};

namespace {

/// What one request/response on one connection gave.
struct Transfer {
  std::string error;
  HttpHead head;
  bool written = false;   ///< some byte of the request left (it may have reached the server)
  bool complete = false;  ///< the response was read to its end
  bool keep_alive = false;
  std::uint64_t body_bytes = 0;  ///< how much of the body came
};

/// The request `req` as Beast sends it.
using error_code = boost::system::error_code;
/// Beast's HTTP/1.1 parser, keeping a response's status and headers in
/// `head` and handing its body to `on_data` piece by piece as it is parsed:
/// Beast's response type held a node per header (then copied), and its
/// body type needed a buffer between the parser and the caller.
class ResponseParser final : public ::mcpgw::transport::http::MessageParser<false> {
 public:
  ResponseParser(HttpHead& head, HttpClient::OnData& on_data) : head_(head), on_data_(on_data) {}
  /// on_data wanted no more: the parse ended there.
  bool stopped() const { return stopped_; }
  /// How much of the body came so far.
  std::uint64_t body_bytes() const { return body_bytes_; }

 private:
  void on_response_impl(int status, string_view, int, error_code&) override {
    head_.status = status;
    head_.headers.reserve(8);
  }
  void on_field_impl(http::field, string_view name, string_view value, error_code&) override {
    head_.headers.emplace_back(std::string(name.data(), name.size()), std::string(value.data(), value.size()));
  }
  std::size_t on_body_impl(string_view body, error_code& ec) override {
    body_bytes_ += body.size();
    if (!body.empty() && !on_data_(std::string_view(body.data(), body.size()))) {
      stopped_ = true;
      ec = asio::error::operation_aborted;
    }
    return body.size();
  }

  HttpHead& head_;
  HttpClient::OnData& on_data_;
  bool stopped_ = false;
  std::uint64_t body_bytes_ = 0;
};

/// Runs `op`, a synchronous Beast operation on non-blocking socket `s`,
/// until it no longer would block, waiting for `s` to be ready in between.
/// Unlike an asynchronous operation that can finish at once, nothing
/// completes through another trip around the event loop, and no read is
/// tried before the epoll says there is something to read.
template <typename Op>
Task<error_code> when_ready(tcp::socket& s, tcp::socket::wait_type wait, Op op) {
  for (;;) {
    error_code ec;
    op(ec);
    if (ec != asio::error::would_block && ec != asio::error::try_again) co_return ec;
    auto [wec] = co_await s.async_wait(wait, kAwait);
    if (wec) co_return wec;
  }
}

// The steps of a transfer. Plain TCP (non-blocking, see open()) does each
// at once when the socket is ready; TLS goes through Beast's asynchronous
// operations, its engine in between.

/// The head and the body, from byte `written` on.
std::array<asio::const_buffer, 2> unsent(const std::string& head, const std::string& body, std::size_t written) {
  if (written < head.size()) return {asio::buffer(head) + written, asio::buffer(body)};
  return {asio::const_buffer(), asio::buffer(body) + (written - head.size())};
}

// Not coroutines of their own: each is its when_ready, whose operation
// holds what it works on (the caller's, alive while it is awaited).
Task<error_code> send_request(tcp::socket& s, const std::string& head, const std::string& body, std::size_t& written) {
  const std::size_t total = head.size() + body.size();
  return when_ready(s, tcp::socket::wait_write,
                    [sock = &s, h = &head, b = &body, n = &written, total](error_code& ec) {
                      while (*n < total && !ec) *n += sock->write_some(unsent(*h, *b, *n), ec);
                    });
}
template <typename S>
Task<error_code> send_request(S& s, const std::string& head, const std::string& body, std::size_t& written) {
  auto [ec, n] = co_await asio::async_write(s, unsent(head, body, 0), kAwait);
  written = n;
  co_return ec;
}

Task<error_code> read_head(tcp::socket& s, beast::flat_buffer& buffer, ResponseParser& p) {
  // Right after the request went, its answer has not come: a read tried
  // now finds nothing (a system call per exchange), so wait first, unless
  // some of it is buffered already. (Asio re-arms the epoll for a wait, so
  // an answer that came meanwhile is not missed.)
  if (buffer.size() == 0)
    if (auto [wec] = co_await s.async_wait(tcp::socket::wait_read, kAwait); wec) co_return wec;
  co_return co_await when_ready(s, tcp::socket::wait_read, [&](error_code& ec) { http::read_header(s, buffer, p, ec); });
}
template <typename S>
Task<error_code> read_head(S& s, beast::flat_buffer& buffer, ResponseParser& p) {
  auto [ec, n] = co_await http::async_read_header(s, buffer, p, kAwait);
  co_return ec;
}

Task<error_code> read_body(tcp::socket& s, beast::flat_buffer& buffer, ResponseParser& p) {
  return when_ready(s, tcp::socket::wait_read,
                    [sock = &s, buf = &buffer, parser = &p](error_code& ec) { http::read_some(*sock, *buf, *parser, ec); });
}
template <typename S>
Task<error_code> read_body(S& s, beast::flat_buffer& buffer, ResponseParser& p) {
  auto [ec, n] = co_await http::async_read_some(s, buffer, p, kAwait);
  co_return ec;
}

/// Reads into `to` from byte `got` on, until it is full; `got` counts.
Task<error_code> read_into(tcp::socket& s, std::span<char> to, std::size_t& got) {
  return when_ready(s, tcp::socket::wait_read, [sock = &s, to, n = &got](error_code& ec) {
    while (*n < to.size() && !ec) *n += sock->read_some(asio::buffer(to.data() + *n, to.size() - *n), ec);
  });
}
template <typename S>
Task<error_code> read_into(S& s, std::span<char> to, std::size_t& got) {
  while (got < to.size()) {
    auto [ec, n] = co_await s.async_read_some(asio::buffer(to.data() + got, to.size() - got), kAwait);
    got += n;
    if (ec) co_return ec;
  }
  co_return error_code{};
}

/// Reads a body of `whole.size()` bytes into `whole`: what came with the
/// head is in `buffer`, the rest straight from the socket, so a large body
/// is not copied on its way (nor read in pieces the buffer's size).
template <typename S>
Task<void> read_whole(S& stream, beast::flat_buffer& buffer, std::span<char> whole, Transfer& t) {
  std::size_t got = asio::buffer_copy(asio::buffer(whole.data(), whole.size()), buffer.data());
  buffer.consume(got);
  error_code ec = co_await read_into(stream, whole, got);
  t.body_bytes = got;
  if (ec) t.error = "connection closed while reading the response (" + ec.message() + ")";
  else t.complete = true;
}

template <typename S>
Task<void> transfer(S& stream, beast::flat_buffer& buffer, const Url& url, const HttpRequest& req,
                    HttpClient::OnHead& on_head, HttpClient::OnData& on_data, HttpClient::IntoBuffer& into,
                    Transfer& t) {
  auto head = request_head(url, req);
  if (!head) {
    t.error = "a request header has a line break or an empty name";
    co_return;
  }
  std::size_t written = 0;
  error_code wec = co_await send_request(stream, *head, req.body, written);
  t.written = written > 0;
  if (wec) {
    t.error = "connection closed while sending the request (" + wec.message() + ")";
    co_return;
  }
  ResponseParser p(t.head, on_data);
  // The callers bound what they keep of a body; a stream has no length.
  p.body_limit(boost::none);
  p.header_limit(kMaxHead);
  if (error_code hec = co_await read_head(stream, buffer, p)) {
    t.error = "connection closed while reading the response (" + hec.message() + ")";
    co_return;
  }
  t.keep_alive = p.keep_alive();
  if (!on_head(t.head)) co_return;
  if (into && !p.is_done() && !p.chunked() && p.content_length())
    if (std::span<char> whole = into(static_cast<std::size_t>(*p.content_length())); !whole.empty())
      co_return co_await read_whole(stream, buffer, whole, t);
  while (!p.is_done()) {
    // Beast reads as much as the buffer has room for, at least 512 bytes:
    // a large body, consumed as it comes, would otherwise arrive 512 bytes
    // per system call (32,768 of them for 16 MiB). A small one, or a
    // stream of small events, keeps the small buffer.
    if (buffer.capacity() < kBodyRead &&
        p.content_length_remaining().value_or(p.body_bytes()) > buffer.capacity())
      buffer.reserve(kBodyRead);
    error_code ec = co_await read_body(stream, buffer, p);
    t.body_bytes = p.body_bytes();
    if (p.stopped()) co_return;
    if (ec) {
      t.error = "connection closed while reading the response (" + ec.message() + ")";
      co_return;
    }
  }
  t.complete = true;
}

}  // namespace

HttpClient::HttpClient(Io& io, Url url) : io_(io), url_(std::move(url)) {
  idle_.reserve(io.threads());
  for (unsigned i = 0; i < io.threads(); ++i) idle_.push_back(std::make_unique<Idle>());
}

HttpClient::~HttpClient() = default;

Result<std::shared_ptr<HttpClient>> HttpClient::create(Io& io, Url url, const TlsOptions& tls,
                                                      std::optional<AddressPolicy> guard) {
  // Private constructor, so make_shared cannot reach it.
  std::shared_ptr<HttpClient> c(new HttpClient(io, std::move(url)));
  c->guard_ = guard;
  if (!c->url_.tls) return c;
  c->tls_ = std::make_unique<Tls>();
  c->tls_->verify = tls.verify;
  boost::system::error_code ec;
  if (!tls.verify) {
    c->tls_->ctx.set_verify_mode(ssl::verify_none);
    return c;
  }
  c->tls_->ctx.set_verify_mode(ssl::verify_peer, ec);
  if (tls.ca_file.empty()) {
    c->tls_->ctx.set_default_verify_paths(ec);
    if (ec) return Error{"cannot load the system's CA certificates: " + ec.message()};
  } else {
    c->tls_->ctx.load_verify_file(tls.ca_file, ec);
    if (ec) return Error{"cannot load tls.ca_file " + tls.ca_file + ": " + ec.message()};
  }
  return c;
}

/// A lock per worker, not one for the client: a worker takes and gives
/// back only its own connections, so two workers never wait for each other
/// (one lock for all, held across the liveness check's system call, made
/// them). The lock is for clear(), which comes from any thread.
struct HttpClient::Idle {
  util::Mutex mu;
  std::vector<std::unique_ptr<Stream>> streams GUARDED_BY(mu);
};

HttpClient::Idle& HttpClient::idle_here() {
  // Called on a worker (exchanges run on the loop); a worker's connections
  // are its own, so the calls it runs never wait on another thread's socket.
  auto worker = static_cast<std::size_t>(std::max(0, io_.current()));
  return *idle_[worker];
}

std::unique_ptr<HttpClient::Stream> HttpClient::take_idle() {
  Idle& idle = idle_here();
  for (;;) {
    std::unique_ptr<Stream> s;
    {
      util::MutexLock lk(idle.mu);
      if (idle.streams.empty()) return nullptr;
      s = std::move(idle.streams.back());
      idle.streams.pop_back();
    }
    // Checked, and closed when dead, outside the lock: both are system calls.
    if (s->idle_and_open()) return s;
  }
}

void HttpClient::give_back(std::unique_ptr<Stream> s) {
  Idle& idle = idle_here();
  util::MutexLock lk(idle.mu);
  if (idle.streams.size() < kMaxIdle) idle.streams.push_back(std::move(s));
}

void HttpClient::clear() {
  for (auto& idle : idle_) {
    std::vector<std::unique_ptr<Stream>> closing;  // closed after the lock
    util::MutexLock lk(idle->mu);
    closing.swap(idle->streams);
  }
}

Task<Result<std::unique_ptr<HttpClient::Stream>>> HttpClient::open(Abort& abort, HttpError& why) {
  const std::string where = url_.host + ":" + url_.port;
  why = HttpError::Unreachable;
  // A name the guard knows (or a literal it refuses) is not even looked up.
  if (guard_)
    if (auto refused = check_host(*guard_, url_.host)) {
      why = HttpError::Refused;
      co_return Error{"refused before connecting: " + refused->message};
    }
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  abort.on_fire([&resolver] { resolver.cancel(); });
  auto [rec, endpoints] = co_await resolver.async_resolve(url_.host, url_.port, kAwait);
  abort.on_fire({});
  if (abort.why() != Abort::Why::None) co_return Error{"aborted"};
  if (rec) co_return Error{"cannot resolve " + url_.host + " (" + rec.message() + ")"};
  // Every address, not only the first: the connect below tries them in turn.
  if (guard_)
    for (const auto& entry : endpoints)
      if (auto refused = check_resolved(*guard_, url_.host, ip_of(entry.endpoint().address()))) {
        why = HttpError::Refused;
        co_return Error{"refused before connecting: " + refused->message};
      }

  // The socket outlives this call in the pool of this worker: bind it to
  // the worker itself. It connects to the addresses just checked.
  tcp::socket sock(io_.executor());
  abort.on_fire([&sock] {
    boost::system::error_code ignored;
    sock.close(ignored);
  });
  auto [cec, ep] = co_await asio::async_connect(sock, endpoints, kAwait);
  abort.on_fire({});
  if (abort.why() != Abort::Why::None) co_return Error{"aborted"};
  if (cec) co_return Error{"cannot connect to " + where + " (" + cec.message() + ")"};
  boost::system::error_code ignored;
  sock.set_option(tcp::no_delay(true), ignored);

  auto s = std::make_unique<Stream>();
  if (!tls_) {
    // Registered anew with the loop: the connect registered it for
    // writability as well, which Asio never takes back, so each wait for
    // an answer (an epoll_ctl that re-arms it) would first wake the loop
    // for a socket merely writable. Fresh, it is registered for reading.
    auto fd = sock.release(ignored);
    if (ignored) co_return Error{"cannot connect to " + where + " (" + ignored.message() + ")"};
    sock.assign(ep.protocol(), fd, ignored);
    if (ignored) {
      ::close(fd);
      co_return Error{"cannot connect to " + where + " (" + ignored.message() + ")"};
    }
    // Its transfers read and write when it is ready: an operation that
    // would block says so instead of waiting.
    sock.non_blocking(true, ignored);
    s->plain = std::make_unique<tcp::socket>(std::move(sock));
    co_return s;
  }
  s->secure = std::make_unique<ssl::stream<tcp::socket>>(std::move(sock), tls_->ctx);
  SSL* native = s->secure->native_handle();
  // SNI: servers with several certificates pick by name (not for an address).
  if (!is_ip_literal(url_.host)) SSL_set_tlsext_host_name(native, url_.host.c_str());
  if (tls_->verify) s->secure->set_verify_callback(ssl::host_name_verification(url_.host));
  abort.on_fire([raw = s.get()] { raw->close(); });
  auto [hec] = co_await s->secure->async_handshake(ssl::stream_base::client, kAwait);
  abort.on_fire({});
  if (abort.why() != Abort::Why::None) co_return Error{"aborted"};
  if (hec) {
    std::string why = hec.message();
    if (long v = SSL_get_verify_result(native); tls_->verify && v != X509_V_OK)
      why = std::string("certificate verification failed: ") + X509_verify_cert_error_string(v);
    co_return Error{"TLS handshake with " + where + " failed: " + why};
  }
  co_return s;
}

Task<HttpResult> HttpClient::exchange(const HttpRequest& req, Abort& abort, OnHead on_head, OnData on_data,
                                      IntoBuffer into) {
  HttpResult out;
  for (;;) {
    if (abort.why() != Abort::Why::None) {
      out.error = "aborted";
      out.kind = HttpError::Aborted;
      co_return out;
    }
    auto s = take_idle();
    bool reused = s != nullptr;
    if (!s) {
      HttpError why = HttpError::Unreachable;
      auto opened = co_await open(abort, why);
      if (!opened) {
        out.error = opened.error();
        out.kind = abort.why() != Abort::Why::None ? HttpError::Aborted : why;
        co_return out;
      }
      s = std::move(*opened);
    }
    Transfer t;
    abort.on_fire([raw = s.get()] { raw->close(); });
    if (s->secure) co_await transfer(*s->secure, s->buffer, url_, req, on_head, on_data, into, t);
    else co_await transfer(*s->plain, s->buffer, url_, req, on_head, on_data, into, t);
    abort.on_fire({});
    out.body_bytes = t.body_bytes;
    if (t.error.empty()) {
      out.head = std::move(t.head);
      if (t.complete && t.keep_alive && s->buffer.size() == 0 && abort.why() == Abort::Why::None) {
        // An idle connection keeps a small buffer, whatever its last body.
        if (s->buffer.capacity() >= kBodyRead) s->buffer.shrink_to_fit();
        give_back(std::move(s));
      }
      co_return out;
    }
    // A pooled connection the server closed while idle, found out before a
    // byte of the request left: it never reached the server, so another
    // connection takes it. Once anything was written the server may be
    // acting on it (and may have crashed doing so): never again.
    if (reused && !t.written && abort.why() == Abort::Why::None) continue;
    out.error = std::move(t.error);
    out.kind = HttpError::Broken;
    co_return out;
  }
}

}  // namespace mcpgw::transport
