#include "transport/http_connection.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>

#include "mcp/era.hpp"
#include "transport/sse.hpp"
#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// Notifications and responses queued for the server, at most.
constexpr std::size_t kMaxOutbox = 1024;
/// A GET stream silent this long is dead (servers send heartbeats far more often).
constexpr auto kStreamSilence = 5min;

/// The headers a request of the stateless revision repeats for
/// intermediaries that route on them (version, method, addressed name),
/// then the request's `extra` ones (any revision: e.g. traceparent).
Headers routing_headers(std::string_view method, const json::Value* params, Headers extra) {
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  auto version = meta ? json::get_string(*meta, mcp::kMetaVersion) : std::nullopt;
  if (!version) return extra;
  Headers routing;
  routing.reserve(3 + extra.size());
  routing.emplace_back("MCP-Protocol-Version", std::string(*version));
  routing.emplace_back("Mcp-Method", std::string(method));
  if (const char* key = mcp::named_param(method))
    if (auto name = json::get_string(*params, key)) routing.emplace_back("Mcp-Name", mcp::encode_header_value(*name));
  std::move(extra.begin(), extra.end(), std::back_inserter(routing));
  return routing;
}

}  // namespace

std::string HttpConnection::size_text(std::size_t bytes, std::size_t limit) {
  return "sent an answer of " + std::to_string(bytes) + " bytes or more, over its max_response_bytes (" +
         std::to_string(limit) + ")";
}

Result<std::shared_ptr<HttpConnection>> HttpConnection::create(Io& io, HttpTarget target,
                                                               ConnectionHandlers handlers) {
  auto url = Url::parse(target.url);
  if (!url) return Error{url.error()};
  auto client = HttpClient::create(io, std::move(*url), target.tls);
  if (!client) return Error{client.error()};
  // Private constructor, so make_shared cannot reach it.
  return std::shared_ptr<HttpConnection>(
      new HttpConnection(io, std::move(target), std::move(*client), std::move(handlers)));
}

struct HttpConnection::InFlight {
  util::Mutex mu;
  std::map<const Abort*, std::weak_ptr<Abort>> aborts GUARDED_BY(mu);
};

HttpConnection::HttpConnection(Io& io, HttpTarget target, std::shared_ptr<HttpClient> client,
                               ConnectionHandlers handlers)
    : io_(io), target_(std::move(target)), client_(std::move(client)), handlers_(std::move(handlers)) {
  in_flight_.reserve(io.threads());
  for (unsigned i = 0; i < io.threads(); ++i) in_flight_.push_back(std::make_unique<InFlight>());
}

void HttpConnection::set_protocol_version(std::string version) {
  util::WriterLock lk(session_mu_);
  protocol_version_ = std::move(version);
}

HttpConnection::InFlight& HttpConnection::in_flight_here() {
  return *in_flight_[static_cast<std::size_t>(std::max(0, io_.current()))];
}

std::shared_ptr<Abort> HttpConnection::new_abort(asio::any_io_executor strand, Clock::time_point deadline,
                                                 CancelSignal* cancel) {
  auto abort = Abort::start(std::move(strand), deadline, cancel);
  InFlight& here = in_flight_here();
  util::MutexLock lk(here.mu);
  // close() sets closed_ before it takes each worker's lock: an exchange
  // filed before that lock is fired, one after it sees closed_.
  if (closed_.load()) {
    abort->disarm();
    return nullptr;
  }
  here.aborts.emplace(abort.get(), abort);
  return abort;
}

void HttpConnection::forget(const std::shared_ptr<Abort>& abort) {
  abort->disarm();
  // Filed on the worker the exchange runs on, which is this one: a strand
  // stays on its worker. The others are searched only if it was not.
  InFlight& here = in_flight_here();
  {
    util::MutexLock lk(here.mu);
    if (here.aborts.erase(abort.get())) return;
  }
  for (auto& other : in_flight_) {
    util::MutexLock lk(other->mu);
    if (other->aborts.erase(abort.get())) return;
  }
}

void HttpConnection::remember_session(std::string sid) {
  // Every response names the session: read shared, written only when it changed.
  {
    util::ReaderLock lk(session_mu_);
    if (session_id_ == sid) return;
  }
  util::WriterLock lk(session_mu_);
  session_id_ = std::move(sid);
}

std::string HttpConnection::session_id() const {
  util::ReaderLock lk(session_mu_);
  return session_id_;
}

Headers HttpConnection::base_headers(const Headers& routing, const std::string& session) {
  Headers h;
  // A stateless request names its version itself and has no session.
  bool stateless =
      std::any_of(routing.begin(), routing.end(), [](const auto& r) { return r.first == "MCP-Protocol-Version"; });
  {
    util::ReaderLock lk(session_mu_);
    if (!stateless) {
      const std::string& sid = session.empty() ? session_id_ : session;
      if (!sid.empty()) h.emplace_back("Mcp-Session-Id", sid);
      if (!protocol_version_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version_);
    }
  }
  h.insert(h.end(), routing.begin(), routing.end());
  h.insert(h.end(), target_.headers.begin(), target_.headers.end());
  return h;
}

void HttpConnection::async_request(std::string_view method, const json::Value* params, RequestOptions opts,
                                   ResponseHandler done) {
  std::int64_t id = next_id_.fetch_add(1);
  Headers routing = routing_headers(method, params, std::move(opts.headers));
  std::string request = jsonrpc::make_request(id, method, params, raw_arguments_of(opts));
  auto start = [self = shared_from_this(), id, body = std::move(request),
                opts = std::move(opts), routing = std::move(routing), done = std::move(done)]() mutable {
    auto strand = asio::make_strand(self->io_.executor());
    auto run = [](std::shared_ptr<HttpConnection> c, std::int64_t id, std::string body, RequestOptions opts,
                  Headers routing, ResponseHandler done) -> Task<void> {
      done(co_await c->exchange(id, std::move(body), std::move(opts), std::move(routing)));
    };
    auto task = run(self, id, std::move(body), std::move(opts), std::move(routing), std::move(done));
    asio::co_spawn(strand, std::move(task), asio::detached);
  };
  {
    // What was queued before this request reaches the server first
    // (notifications/initialized before the first list, say).
    util::MutexLock lk(mu_);
    if (sending_) {
      after_outbox_.push_back(std::move(start));
      return;
    }
  }
  start();
}

/// Not a coroutine: the request's body and headers are made now, and the
/// exchange is its only frame.
Task<Response> HttpConnection::call(std::string_view method, const json::Value* params, RequestOptions opts) {
  // Queued notifications go first: the request waits its turn in async_request.
  if (sending_.load()) return Connection::call(method, params, std::move(opts));
  std::int64_t id = next_id_.fetch_add(1);
  Headers routing = routing_headers(method, params, std::move(opts.headers));
  std::string body = jsonrpc::make_request(id, method, params, raw_arguments_of(opts));
  return exchange(id, std::move(body), std::move(opts), std::move(routing));
}

Task<Response> HttpConnection::exchange(std::int64_t id, std::string body, RequestOptions opts, Headers routing) {
  auto self = shared_from_this();
  auto abort = new_abort(co_await asio::this_coro::executor, opts.deadline, opts.cancel);
  if (!abort) co_return Response{std::nullopt, Failure::Closed, "connection closed"};
  Response r;
  try {
    r = co_await post(body, id, *abort, opts, routing);
  } catch (const std::exception& e) {
    // A bug or an allocation failure fails this request only.
    r = {std::nullopt, Failure::Transport, std::string("internal error: ") + e.what()};
  }
  forget(abort);
  if (!r.message && (r.failure == Failure::Timeout || r.failure == Failure::Cancelled))
    notify_cancelled(id, r.failure == Failure::Timeout ? "timeout" : "cancelled by client");
  co_return r;
}

void HttpConnection::notify_cancelled(std::int64_t id, std::string_view reason) {
  json::Document p(rapidjson::kObjectType);
  p.AddMember("requestId", id, p.GetAllocator());
  p.AddMember("reason", json::str(reason, p.GetAllocator()), p.GetAllocator());
  notify("notifications/cancelled", &p);
}

Task<Result<void>> HttpConnection::authorize(HttpRequest& req, const Abort& abort, CancelSignal* cancel,
                                             const std::string& rejected) {
  auto value = co_await target_.credential->authorization(abort.deadline(), cancel, rejected);
  if (!value) co_return Error{value.error()};
  std::erase_if(req.headers, [](const auto& h) { return istarts_with(h.first, "authorization") && h.first.size() == 13; });
  req.headers.emplace_back("Authorization", std::move(*value));
  co_return Result<void>{};
}

bool HttpConnection::notify(std::string_view method, const json::Value* params) {
  return enqueue(jsonrpc::make_notification(method, params));
}

bool HttpConnection::respond(std::string message) { return enqueue(std::move(message)); }

bool HttpConnection::enqueue(std::string message) {
  {
    util::MutexLock lk(mu_);
    if (closed_.load()) return false;
    if (outbox_.size() >= kMaxOutbox) {
      spdlog::warn("upstream {}: {} messages wait to be sent already; dropping one", target_.name, kMaxOutbox);
      return false;
    }
    outbox_.push_back(std::move(message));
    if (sending_) return true;
    sending_ = true;
  }
  asio::co_spawn(asio::make_strand(io_.executor()), drain_outbox(), asio::detached);
  return true;
}

Task<void> HttpConnection::drain_outbox() {
  auto self = shared_from_this();
  auto strand = co_await asio::this_coro::executor;
  for (;;) {
    std::string message;
    std::vector<std::function<void()>> waiting;
    {
      util::MutexLock lk(mu_);
      if (outbox_.empty()) {
        sending_ = false;
        waiting.swap(after_outbox_);
      } else {
        message = std::move(outbox_.front());
        outbox_.pop_front();
      }
    }
    if (message.empty()) {
      for (auto& start : waiting) start();
      co_return;
    }
    auto abort = new_abort(strand, Clock::now() + 5s, nullptr);
    if (!abort) continue;  // closed: the rest is dropped
    Response r;
    try {
      RequestOptions none;
      r = co_await post(message, std::nullopt, *abort, none, {});
    } catch (const std::exception& e) {
      r.detail = e.what();
    }
    forget(abort);
    if (!r.detail.empty()) spdlog::warn("upstream {}: a notification or response was not delivered: {}", target_.name, r.detail);
  }
}

void HttpConnection::listen() {
  asio::co_spawn(asio::make_strand(io_.executor()), listen_loop(), asio::detached);
}

void HttpConnection::on_stream_event(std::string_view data) {
  if (data.empty() || closed_.load()) return;
  auto read = jsonrpc::read(data);
  auto* m = std::get_if<jsonrpc::Message>(&read);
  try {
    if (m && handlers_.on_message) handlers_.on_message(*m);
  } catch (const std::exception& e) {
    // The stream goes on: one message must not end the session's stream.
    spdlog::error("upstream {}: handling a message of its stream failed: {}", target_.name, e.what());
  }
}

Task<void> HttpConnection::listen_loop() {
  auto self = shared_from_this();
  auto strand = co_await asio::this_coro::executor;
  auto backoff = 100ms;
  std::string refused;  // the Authorization the last GET was refused with (HTTP 401)
  bool streamed = false;  // the server has served this session a stream
  while (!closed_.load()) {
    auto abort = new_abort(strand, Clock::now() + kStreamSilence, nullptr);
    if (!abort) break;
    HttpRequest get{"GET", base_headers(), {}, {}};
    get.headers.emplace_back("Accept", "text/event-stream");
    if (target_.credential)
      if (auto authorized = co_await authorize(get, *abort, nullptr, refused); !authorized)
        spdlog::warn("upstream {}: its GET stream waits for a token: {}", target_.name, authorized.error());
    sse::Parser parser(
        [this](std::string_view, std::string_view data) {
          on_stream_event(data);
          return !closed_.load();
        },
        target_.max_response_bytes,
        [this](std::size_t bytes) {
          spdlog::warn("upstream {}: discarded an event of its stream: {}", target_.name,
                       size_text(bytes, target_.max_response_bytes));
          return true;
        });
    auto res = co_await client_->exchange(
        get, *abort, [](const HttpHead& h) { return h.status == 200; },
        [&](std::string_view data) {
          abort->extend(Clock::now() + kStreamSilence);
          return parser.feed(data);
        });
    forget(abort);
    int status = res.head.status;
    refused.clear();
    if (status == 401)
      for (const auto& [name, value] : get.headers)
        if (istarts_with(name, "authorization")) refused = value;
    if (closed_.load()) break;
    // A server without a GET route (405 as the spec says; 404 or 400 from a
    // server that routes POST only) can push nothing outside a call, and
    // its POSTs tell whether the session lives: stop asking.
    if (status == 405 || (!streamed && (status == 404 || status == 400))) {
      spdlog::info("upstream {}: offers no GET stream (HTTP {}): it can send messages only while a call runs",
                   target_.name, status);
      break;
    }
    // The server is gone or forgot the session: the connection is dead, and
    // the upstream initializes a new one (it comes back by itself).
    bool has_session = !session_id().empty();
    // (A 400 on a stream that worked is not taken as a lost session: the
    // next request tells.)
    std::string lost;
    if (status == 404 && has_session) lost = "its GET stream was refused (HTTP 404): the server forgot the session";
    else if (status == 0 && res.kind == HttpError::Unreachable) lost = "its GET stream dropped: " + res.error;
    if (!lost.empty()) {
      if (handlers_.on_close) handlers_.on_close(lost);
      break;
    }
    if (status == 200) {
      streamed = true;
      backoff = 100ms;
    }
    auto pause = new_abort(strand, Clock::now() + backoff, nullptr);
    if (!pause) break;
    asio::steady_timer timer(strand, Clock::time_point::max());
    pause->on_fire([&timer] { timer.cancel(); });
    co_await timer.async_wait(kAwait);
    forget(pause);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, 30s);
  }
}

void HttpConnection::async_close(std::function<void()> done) {
  {
    util::MutexLock lk(mu_);
    if (closed_.exchange(true)) {
      if (!close_over_) on_closed_.push_back(std::move(done));
      else if (done) asio::post(io_.executor(), std::move(done));
      return;
    }
    if (done) on_closed_.push_back(std::move(done));
    outbox_.clear();
  }
  const std::string sid = session_id();
  std::vector<std::shared_ptr<Abort>> aborts;
  for (auto& here : in_flight_) {
    util::MutexLock lk(here->mu);
    for (auto& [raw, weak] : here->aborts)
      if (auto a = weak.lock()) aborts.push_back(std::move(a));
  }
  for (auto& a : aborts) a->fire(Abort::Why::Closed);
  client_->clear();
  auto self = shared_from_this();
  auto over = [self](std::exception_ptr) {
    std::vector<std::function<void()>> waiting;
    {
      util::MutexLock lk(self->mu_);
      self->close_over_ = true;
      waiting.swap(self->on_closed_);
    }
    for (auto& w : waiting) w();
  };
  auto strand = asio::make_strand(io_.executor());
  asio::co_spawn(strand, [self, sid, strand]() -> Task<void> {
    if (sid.empty()) co_return;
    // Tell the server the session is over so it can free it; best effort.
    auto abort = Abort::start(strand, Clock::now() + 1s, nullptr);
    HttpRequest del{"DELETE", {{"Mcp-Session-Id", sid}}, {}, {}};
    del.headers.insert(del.headers.end(), self->target_.headers.begin(), self->target_.headers.end());
    if (self->target_.credential) co_await self->authorize(del, *abort, nullptr);
    co_await self->client_->exchange(
        del, *abort, [](const HttpHead&) { return true; }, [](std::string_view) { return true; });
    abort->disarm();
  }, over);
}

}  // namespace mcpgw::transport
