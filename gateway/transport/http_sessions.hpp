#pragma once
// The stateful sessions of the Streamable HTTP transport: their ids, their
// server-to-client (GET) stream, and their expiry when idle.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "transport/downstream.hpp"
#include "transport/http_listener.hpp"
#include "transport/shared_sessions.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

namespace asio = boost::asio;

/// One client session as the HTTP transport sees it.
class HttpSession {
 public:
  using Clock = std::chrono::steady_clock;
  HttpSession(std::shared_ptr<Session> s, std::string mode, std::string principal)
      : session(std::move(s)), mode(std::move(mode)), principal(std::move(principal)) {}
  /// Session `id` of a client described by `ctx`: `session` bound to it,
  /// its messages going to the GET stream when one is open here.
  static std::shared_ptr<HttpSession> make(const std::string& id, std::shared_ptr<Session> session,
                                           const ClientContext& ctx);

  const std::shared_ptr<Session> session;
  const std::string mode;
  const std::string principal;

  /// Marks the session used now (idle expiry counts from here).
  void touch() { last_active_.store(Clock::now().time_since_epoch().count()); }
  Clock::time_point last_active() const { return Clock::time_point(Clock::duration(last_active_.load())); }

  /// Opens the GET stream on `queue`; false when one is open already or
  /// the session ended.
  bool open_stream(std::shared_ptr<http::StreamQueue> queue);
  /// The GET stream on `queue` ended.
  void close_stream(const std::shared_ptr<http::StreamQueue>& queue);
  bool stream_open() const;
  /// The session's sink: queues `msg` as an SSE event on the open stream;
  /// false when there is none or it is full.
  bool deliver(const std::string& msg);
  /// Ends the open stream, if any, and refuses new ones.
  void end();

  /// Requests of this session still running (for max_in_flight_per_session
  /// and for telling an idle session from a busy one).
  std::atomic<int> in_flight{0};

 private:
  mutable util::Mutex mu_;
  std::shared_ptr<http::StreamQueue> stream_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;
  std::atomic<Clock::rep> last_active_{Clock::now().time_since_epoch().count()};
};

/// Ends session `id` through `shared` (every replica); completes with its
/// outcome, on the calling coroutine's executor.
Task<Result<void>> end_everywhere(SharedSessions& shared, std::string id);

/// The live sessions by id, and their idle expiry.
class SessionStore {
 public:
  /// `idle_s` = 0: sessions never expire.
  SessionStore(Handler& handler, asio::io_context& io, int idle_s);
  ~SessionStore();
  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  void add(const std::string& id, std::shared_ptr<HttpSession> s);
  std::shared_ptr<HttpSession> find(const std::string& id) const;
  /// Session `id`, or else the one `make` returns, added; under the store's
  /// lock, so that two requests restoring one session make one copy. Null
  /// when `make` returns null.
  std::shared_ptr<HttpSession> find_or_add(const std::string& id,
                                           const std::function<std::shared_ptr<HttpSession>()>& make);
  /// Tells `shared` (cluster) of every session added here and removed;
  /// call before serving.
  void share(SharedSessions* shared) { shared_ = shared; }
  /// Ends session `id` and tells the handler; nothing when unknown.
  void remove(const std::string& id);
  std::size_t size() const;
  /// Makes room for one more session under `max` (0 = no limit) by ending
  /// the longest-idle sessions (no GET stream, no request running); false
  /// when every session is busy.
  bool make_room(std::size_t max);
  /// Sessions with their GET stream open.
  std::size_t open_streams() const;
  /// Starts expiring idle sessions (a timer on the loop).
  void start();
  /// Stops expiry and ends every open GET stream; sessions stay.
  void stop();

 private:
  struct Sweeper;
  Handler& handler_;
  int idle_s_;
  mutable util::Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<HttpSession>> sessions_ GUARDED_BY(mu_);
  std::shared_ptr<Sweeper> sweeper_;
  SharedSessions* shared_ = nullptr;  ///< set by share() before serving: read without a lock
  void sweep();
};

}  // namespace mcpgw::transport
