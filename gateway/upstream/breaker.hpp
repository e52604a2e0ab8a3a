#pragma once
// The circuit breaker of one upstream server (`servers[].circuit`): after
// `failures` consecutive failed calls it opens and calls fail fast; after
// `open_ms` one probe call goes through, whose outcome closes or reopens it.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::upstream {

class Breaker {
 public:
  enum class State { Closed, Open, HalfOpen };
  using Clock = std::chrono::steady_clock;
  /// A call admitted by admit(); hand it back to record().
  struct Ticket {
    bool probe = false;
  };

  /// `now` tells the time (the steady clock; tests pass their own, so that
  /// `open_ms` passes without waiting).
  explicit Breaker(config::Circuit cfg, std::function<Clock::time_point()> now = Clock::now)
      : cfg_(cfg), now_(std::move(now)) {}

  /// Whether a call may go now: a ticket, or why not (the breaker is open,
  /// or its probe is in flight).
  std::optional<Ticket> admit(std::string& why);
  /// The outcome of an admitted call; returns the new state when it changed.
  std::optional<State> record(const Ticket& t, bool ok);
  /// An admitted call that ended without telling (cancelled by its client):
  /// a probe lets the next call probe instead.
  void release(const Ticket& t);
  State state() const;
  bool enabled() const { return cfg_.failures > 0; }
  int failures_to_open() const { return cfg_.failures; }

 private:
  const config::Circuit cfg_;
  const std::function<Clock::time_point()> now_;
  mutable util::Mutex mu_;
  State state_ GUARDED_BY(mu_) = State::Closed;
  int consecutive_ GUARDED_BY(mu_) = 0;
  Clock::time_point opened_at_ GUARDED_BY(mu_){};
  bool probing_ GUARDED_BY(mu_) = false;
};

/// "closed", "open" or "half_open".
std::string_view state_name(Breaker::State s);

}  // namespace mcpgw::upstream
