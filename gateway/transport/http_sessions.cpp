#include "transport/http_sessions.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "transport/sse.hpp"
#include "util/event.hpp"

namespace mcpgw::transport {

std::shared_ptr<HttpSession> HttpSession::make(const std::string& id, std::shared_ptr<Session> session,
                                               const ClientContext& ctx) {
  auto hs = std::make_shared<HttpSession>(std::move(session), ctx.mode, ctx.principal);
  std::weak_ptr<HttpSession> weak = hs;
  hs->session->bind(id, ctx, [weak](std::string msg) {
    auto s = weak.lock();
    return s && s->deliver(msg);
  });
  return hs;
}

Task<Result<void>> end_everywhere(SharedSessions& shared, std::string id) {
  struct Outcome {
    util::Mutex mu;
    std::optional<Result<void>> result GUARDED_BY(mu);
    Event done;  // posted: the cluster's callback may run under its own locks
  };
  auto outcome = std::make_shared<Outcome>();
  shared.end(id, [outcome](Result<void> r) {
    {
      util::MutexLock lk(outcome->mu);
      outcome->result = std::move(r);
    }
    outcome->done.notify();
  });
  // end() answers within its own bound; this loop only waits for it.
  for (;;) {
    std::uint64_t seen = outcome->done.generation();
    {
      util::MutexLock lk(outcome->mu);
      if (outcome->result) co_return std::move(*outcome->result);
    }
    co_await outcome->done.wait(seen, Event::Clock::time_point::max());
  }
}

bool HttpSession::open_stream(std::shared_ptr<http::StreamQueue> queue) {
  util::MutexLock lk(mu_);
  if (stream_ || ended_) return false;
  stream_ = std::move(queue);
  return true;
}

void HttpSession::close_stream(const std::shared_ptr<http::StreamQueue>& queue) {
  util::MutexLock lk(mu_);
  if (stream_ == queue) stream_.reset();
}

bool HttpSession::stream_open() const {
  util::MutexLock lk(mu_);
  return stream_ != nullptr;
}

bool HttpSession::deliver(const std::string& msg) {
  std::shared_ptr<http::StreamQueue> q;
  {
    util::MutexLock lk(mu_);
    q = stream_;
  }
  return q && q->push(sse::format_event(msg));
}

void HttpSession::end() {
  std::shared_ptr<http::StreamQueue> q;
  {
    util::MutexLock lk(mu_);
    ended_ = true;
    q = std::move(stream_);
  }
  if (q) q->close();
}

/// The expiry timer, on its own strand; shared so that a wake-up after the
/// store is gone finds it stopped rather than freed.
struct SessionStore::Sweeper {
  explicit Sweeper(asio::io_context& io) : timer(asio::make_strand(io)) {}
  asio::steady_timer timer;  // only on its strand
  util::Mutex mu;
  SessionStore* store GUARDED_BY(mu) = nullptr;  // null once stopped
};

SessionStore::SessionStore(Handler& handler, asio::io_context& io, int idle_s)
    : handler_(handler), idle_s_(idle_s), sweeper_(std::make_shared<Sweeper>(io)) {}

SessionStore::~SessionStore() { stop(); }

void SessionStore::add(const std::string& id, std::shared_ptr<HttpSession> s) {
  {
    util::MutexLock lk(mu_);
    sessions_.emplace(id, std::move(s));
  }
  if (shared_) shared_->held(id);
}

std::shared_ptr<HttpSession> SessionStore::find_or_add(const std::string& id,
                                                       const std::function<std::shared_ptr<HttpSession>()>& make) {
  std::shared_ptr<HttpSession> s;
  {
    util::MutexLock lk(mu_);
    if (auto it = sessions_.find(id); it != sessions_.end()) return it->second;
    s = make();
    if (!s) return nullptr;
    sessions_.emplace(id, s);
  }
  if (shared_) shared_->held(id);
  return s;
}

std::shared_ptr<HttpSession> SessionStore::find(const std::string& id) const {
  util::MutexLock lk(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

void SessionStore::remove(const std::string& id) {
  std::shared_ptr<HttpSession> hs;
  {
    util::MutexLock lk(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    hs = std::move(it->second);
    sessions_.erase(it);
  }
  if (shared_) shared_->released(id);
  hs->end();
  handler_.close_session(hs->session);
}

std::size_t SessionStore::size() const {
  util::MutexLock lk(mu_);
  return sessions_.size();
}

bool SessionStore::make_room(std::size_t max) {
  if (max == 0) return true;
  for (;;) {
    std::string oldest;
    {
      util::MutexLock lk(mu_);
      if (sessions_.size() < max) return true;
      HttpSession::Clock::time_point at = HttpSession::Clock::time_point::max();
      for (auto& [id, s] : sessions_) {
        if (s->in_flight.load() > 0 || s->stream_open() || s->last_active() >= at) continue;
        at = s->last_active();
        oldest = id;
      }
    }
    if (oldest.empty()) return false;
    remove(oldest);
    spdlog::info("session {} ended: limits.max_sessions ({}) reached and it was the longest idle", oldest.substr(0, 8),
                 max);
  }
}

std::size_t SessionStore::open_streams() const {
  util::MutexLock lk(mu_);
  return static_cast<std::size_t>(
      std::count_if(sessions_.begin(), sessions_.end(), [](const auto& s) { return s.second->stream_open(); }));
}

void SessionStore::start() {
  if (idle_s_ <= 0) return;
  {
    util::MutexLock lk(sweeper_->mu);
    sweeper_->store = this;
  }
  auto period = std::chrono::seconds(std::clamp(idle_s_ / 4, 1, 60));
  asio::co_spawn(
      sweeper_->timer.get_executor(),
      [sw = sweeper_, period]() -> Task<void> {
        for (;;) {
          sw->timer.expires_after(period);
          boost::system::error_code ec;
          co_await sw->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          util::MutexLock lk(sw->mu);
          if (ec || !sw->store) co_return;
          sw->store->sweep();
        }
      },
      asio::detached);
}

void SessionStore::sweep() {
  auto limit = HttpSession::Clock::now() - std::chrono::seconds(idle_s_);
  std::vector<std::string> idle;
  {
    util::MutexLock lk(mu_);
    for (auto& [id, s] : sessions_)
      if (!s->stream_open() && s->last_active() < limit) idle.push_back(id);
  }
  for (auto& id : idle) {
    // Logged once gone: whoever reads the line finds the id unknown.
    remove(id);
    spdlog::info("session {} ended after {} s idle", id.substr(0, 8), idle_s_);
  }
}

void SessionStore::stop() {
  {
    util::MutexLock lk(sweeper_->mu);
    sweeper_->store = nullptr;
  }
  asio::post(sweeper_->timer.get_executor(), [sw = sweeper_] { sw->timer.cancel(); });
  std::vector<std::shared_ptr<HttpSession>> all;
  {
    util::MutexLock lk(mu_);
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  for (auto& s : all) s->end();
}

}  // namespace mcpgw::transport
