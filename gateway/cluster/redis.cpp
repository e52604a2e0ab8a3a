#include "cluster/redis.hpp"

#include "util/event.hpp"
#include "util/thread_annotations.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdint>
#include <future>
#include <map>

namespace mcpgw::cluster {

namespace asio = boost::asio;

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
constexpr auto kConnectTimeout = std::chrono::milliseconds(2000);

RedisReply convert(const redisReply* r) {
  RedisReply out;
  if (!r) return out;
  switch (r->type) {
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::Status; break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::Error; break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::Integer; break;
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::String; break;
    case REDIS_REPLY_ARRAY: out.type = RedisReply::Type::Array; break;
    default: out.type = RedisReply::Type::Nil; break;
  }
  out.integer = r->integer;
  if (r->str) out.text.assign(r->str, r->len);
  for (std::size_t i = 0; i < r->elements; ++i) out.items.push_back(convert(r->element[i]));
  return out;
}

void* tag(std::uint64_t id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
std::uint64_t untag(void* p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); }

}  // namespace

/// The connection's state; every member below `mu` is touched on `strand`
/// only (hiredis is not thread-safe).
struct Redis::Conn : std::enable_shared_from_this<Redis::Conn> {
  Conn(asio::io_context& io, RedisEndpoint ep, State st, std::string ch, Message msg)
      : strand(asio::make_strand(io)),
        endpoint(std::move(ep)),
        on_state(std::move(st)),
        channel(std::move(ch)),
        on_message(std::move(msg)),
        resolver(strand),
        socket(strand),
        retry(strand),
        connect_deadline(strand) {}

  struct Pending {
    Done done;
    std::unique_ptr<asio::steady_timer> timer;
  };

  asio::strand<asio::io_context::executor_type> strand;
  const RedisEndpoint endpoint;
  const State on_state;
  const std::string channel;  // "" = a command connection
  const Message on_message;

  mutable util::Mutex mu;  // up_ and status_ are read from any thread
  bool up_ GUARDED_BY(mu) = false;
  std::string status_ GUARDED_BY(mu) = "not connected yet";

  // The rest only on the strand: no lock.
  asio::ip::tcp::resolver resolver;
  asio::posix::stream_descriptor socket;
  asio::steady_timer retry;
  asio::steady_timer connect_deadline;
  redisAsyncContext* ac = nullptr;
  bool connected = false;
  bool stopped = false;
  bool reading = false, writing = false;
  bool read_waiting = false, write_waiting = false;
  std::chrono::milliseconds backoff = kFirstBackoff;
  std::uint64_t next_id = 1;
  std::map<std::uint64_t, Pending> pending;

  std::string down_message(const std::string& why) const {
    return "Redis at " + endpoint.shown + " is unreachable: " + why;
  }

  void set_state(bool up, const std::string& why) {
    bool changed;
    {
      util::MutexLock lk(mu);
      changed = up_ != up || (!up && status_ != why);
      up_ = up;
      status_ = up ? "up" : why;
    }
    if (!changed) return;
    if (up) spdlog::info("redis {}: connected{}", endpoint.shown, channel.empty() ? "" : " (subscribed)");
    else spdlog::warn("redis {}: {}", endpoint.shown, why);
    if (on_state) on_state(up, why);
  }

  // --- hiredis's event hooks (called on the strand, inside hiredis) ---

  static Conn* of(void* p) { return static_cast<Conn*>(p); }
  static void add_read(void* p) { of(p)->want(true, true); }
  static void del_read(void* p) { of(p)->want(true, false); }
  static void add_write(void* p) { of(p)->want(false, true); }
  static void del_write(void* p) { of(p)->want(false, false); }
  static void cleanup(void* p) {
    Conn* c = of(p);
    c->reading = c->writing = false;
    c->ac = nullptr;
    // hiredis closes the descriptor itself.
    if (c->socket.is_open()) c->socket.release();
  }

  void want(bool read, bool on) {
    (read ? reading : writing) = on;
    if (on) wait(read);
  }

  void wait(bool read) {
    bool& waiting = read ? read_waiting : write_waiting;
    if (waiting || !socket.is_open()) return;
    waiting = true;
    auto type = read ? asio::posix::stream_descriptor::wait_read : asio::posix::stream_descriptor::wait_write;
    socket.async_wait(type, [self = shared_from_this(), read](boost::system::error_code ec) {
      (read ? self->read_waiting : self->write_waiting) = false;
      if (ec || !self->ac || !(read ? self->reading : self->writing)) return;
      if (read) redisAsyncHandleRead(self->ac);
      else redisAsyncHandleWrite(self->ac);
      if (self->ac && (read ? self->reading : self->writing)) self->wait(read);
    });
  }

  // --- connecting ---

  void connect() {
    if (stopped) return;
    resolver.async_resolve(endpoint.host, std::to_string(endpoint.port),
                           [self = shared_from_this()](boost::system::error_code ec,
                                                       asio::ip::tcp::resolver::results_type results) {
                             if (self->stopped) return;
                             if (ec || results.empty()) {
                               self->failed("cannot resolve " + self->endpoint.host + ": " + ec.message());
                               return;
                             }
                             self->open(results.begin()->endpoint());
                           });
  }

  void open(const asio::ip::tcp::endpoint& to) {
    // A numeric address: hiredis's connect then does no blocking lookup.
    std::string ip = to.address().to_string();
    ac = redisAsyncConnect(ip.c_str(), to.port());
    if (!ac || ac->err) {
      std::string why = ac ? ac->errstr : "out of memory";
      if (ac) redisAsyncFree(ac);
      ac = nullptr;
      failed(why);
      return;
    }
    boost::system::error_code ec;
    socket.assign(ac->c.fd, ec);
    if (ec) {
      redisAsyncFree(ac);
      ac = nullptr;
      failed("cannot watch the socket: " + ec.message());
      return;
    }
    ac->ev.data = this;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    connect_deadline.expires_after(kConnectTimeout);
    connect_deadline.async_wait([self = shared_from_this(), attempt = ac](boost::system::error_code ec) {
      if (ec || self->connected || self->ac != attempt) return;
      // Not connected in time (a black-holed address): give up this try.
      redisAsyncFree(self->ac);
      self->failed("no connection within " + std::to_string(kConnectTimeout.count()) + " ms");
    });
  }

  static void on_connect(const redisAsyncContext* c, int status) {
    Conn* self = of(c->ev.data);
    self->connect_deadline.cancel();
    if (status != REDIS_OK) {
      // hiredis frees the context after this returns.
      std::string why = c->errstr ? c->errstr : "connection failed";
      self->failed(why);
      return;
    }
    self->connected = true;
    self->handshake();
  }

  static void on_disconnect(const redisAsyncContext* c, int) {
    Conn* self = of(c->ev.data);
    std::string why = c->err ? std::string(c->errstr ? c->errstr : "error") : std::string("connection closed");
    self->connected = false;
    if (self->stopped) return;
    self->failed(why);
  }

  /// AUTH and SELECT, then SUBSCRIBE or PING: up on the last one's answer.
  void handshake() {
    auto refused = [self = shared_from_this()](const char* what) {
      return [self, what](Result<RedisReply> r) {
        if (r && r->type == RedisReply::Type::Error) self->fail_connection(std::string(what) + " refused: " + r->text);
      };
    };
    if (!endpoint.password.empty()) send({"AUTH", endpoint.password}, refused("AUTH"));
    if (endpoint.db != 0) send({"SELECT", std::to_string(endpoint.db)}, refused("SELECT"));
    if (!channel.empty()) {
      const char* argv[] = {"SUBSCRIBE", channel.c_str()};
      std::size_t lens[] = {9, channel.size()};
      redisAsyncCommandArgv(ac, on_subscribed, nullptr, 2, argv, lens);
      return;
    }
    send({"PING"}, [self = shared_from_this()](Result<RedisReply> r) {
      if (r && r->type != RedisReply::Type::Error) {
        self->backoff = kFirstBackoff;
        self->set_state(true, "");
      }
    });
  }

  static void on_subscribed(redisAsyncContext* c, void* r, void*) {
    Conn* self = of(c->ev.data);
    if (!r) return;
    RedisReply reply = convert(static_cast<redisReply*>(r));
    if (reply.type == RedisReply::Type::Error) {
      self->fail_connection("SUBSCRIBE refused: " + reply.text);
      return;
    }
    if (reply.type != RedisReply::Type::Array || reply.items.size() != 3) return;
    const std::string& kind = reply.items[0].text;
    if (kind == "subscribe") {
      self->backoff = kFirstBackoff;
      self->set_state(true, "");
    } else if (kind == "message" && self->on_message) {
      self->on_message(reply.items[2].text);
    }
  }

  /// A handshake reply refused us (wrong password, bad db): drop and retry.
  void fail_connection(const std::string& why) {
    set_state(false, down_message(why));
    if (ac) redisAsyncDisconnect(ac);
  }

  void failed(const std::string& why) {
    ac = nullptr;
    connected = false;
    fail_pending(down_message(why));
    set_state(false, down_message(why));
    if (stopped) return;
    retry.expires_after(backoff);
    backoff = std::min(backoff * 2, kMaxBackoff);
    retry.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->connect();
    });
  }

  void fail_pending(const std::string& why) {
    auto all = std::move(pending);
    pending.clear();
    for (auto& [id, p] : all) {
      if (p.timer) p.timer->cancel();
      if (p.done) p.done(Error{why});
    }
  }

  // --- commands ---

  void send(const std::vector<std::string>& args, Done done,
            std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
    if (!ac || !connected) {
      if (done) done(Error{down_message(status())});
      return;
    }
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    std::uint64_t id = next_id++;
    Pending p{std::move(done), nullptr};
    if (p.done) {
      p.timer = std::make_unique<asio::steady_timer>(strand, timeout);
      p.timer->async_wait([self = shared_from_this(), id, timeout](boost::system::error_code ec) {
        if (ec) return;
        auto it = self->pending.find(id);
        if (it == self->pending.end()) return;
        Done d = std::move(it->second.done);
        self->pending.erase(it);
        d(Error{"Redis at " + self->endpoint.shown + " did not answer within " + std::to_string(timeout.count()) +
                " ms"});
      });
    }
    pending.emplace(id, std::move(p));
    if (redisAsyncCommandArgv(ac, on_reply, tag(id), static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
      auto it = pending.find(id);
      if (it != pending.end()) {
        Done d = std::move(it->second.done);
        if (it->second.timer) it->second.timer->cancel();
        pending.erase(it);
        if (d) d(Error{down_message("the command could not be sent")});
      }
    }
  }

  static void on_reply(redisAsyncContext* c, void* r, void* privdata) {
    Conn* self = of(c->ev.data);
    auto it = self->pending.find(untag(privdata));
    if (it == self->pending.end()) return;
    Done d = std::move(it->second.done);
    if (it->second.timer) it->second.timer->cancel();
    self->pending.erase(it);
    if (!d) return;
    if (!r) d(Error{self->down_message("the connection was lost")});
    else d(convert(static_cast<redisReply*>(r)));
  }

  std::string status() const {
    util::MutexLock lk(mu);
    return status_;
  }
};

Redis::Redis(asio::io_context& io, RedisEndpoint endpoint, State on_state)
    : conn_(std::make_shared<Conn>(io, std::move(endpoint), std::move(on_state), std::string(), nullptr)) {}

Redis::Redis(asio::io_context& io, RedisEndpoint endpoint, State on_state, std::string channel, Message on_message)
    : conn_(std::make_shared<Conn>(io, std::move(endpoint), std::move(on_state), std::move(channel),
                                   std::move(on_message))) {}

Redis::~Redis() { stop(); }

void Redis::start() {
  asio::post(conn_->strand, [c = conn_] { c->connect(); });
}

void Redis::stop() {
  auto done = std::make_shared<std::promise<void>>();
  auto closed = done->get_future();
  asio::post(conn_->strand, [c = conn_, done] {
    if (!c->stopped) {
      c->stopped = true;
      c->retry.cancel();
      c->connect_deadline.cancel();
      c->resolver.cancel();
      if (c->ac) redisAsyncFree(c->ac);
      c->ac = nullptr;
      c->connected = false;
      c->fail_pending("mcpgw is shutting down");
    }
    done->set_value();
  });
  // A loop that no longer runs never gets there: nothing is connected then.
  closed.wait_for(std::chrono::seconds(2));
}

void Redis::command(std::vector<std::string> args, Done done, std::chrono::milliseconds timeout) {
  asio::post(conn_->strand, [c = conn_, args = std::move(args), done = std::move(done), timeout]() mutable {
    c->send(args, std::move(done), timeout);
  });
}

bool Redis::up() const {
  util::MutexLock lk(conn_->mu);
  return conn_->up_;
}

std::string Redis::status() const { return conn_->status(); }

Task<Result<RedisReply>> Redis::call(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(Result<RedisReply>)>(
      [&](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = shared_handler<Result<RedisReply>>(std::move(handler));
        command(
            std::move(args),
            [h, ex](Result<RedisReply> r) { asio::dispatch(ex, [h, r = std::move(r)]() mutable { h(std::move(r)); }); },
            timeout);
      },
      asio::use_awaitable);
}

}  // namespace mcpgw::cluster
