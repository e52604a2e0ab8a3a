#pragma once
// Cancellation that wakes whoever waits, instead of being polled.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>

#include "util/thread_annotations.hpp"

namespace mcpgw {

/// A one-shot flag: once cancelled, stays cancelled. Waiters register a
/// callback that runs when it is set (at once when it already is), e.g. to
/// close a socket a thread is blocked on or to notify a condition variable.
class CancelSignal {
 public:
  /// Unregisters its callback when destroyed; waits for it if it is running.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(CancelSignal* s, std::uint64_t id) : s_(s), id_(id) {}
    Subscription(Subscription&& o) noexcept : s_(o.s_), id_(o.id_) { o.s_ = nullptr; }
    Subscription& operator=(Subscription&& o) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }
    void reset();

   private:
    CancelSignal* s_ = nullptr;
    std::uint64_t id_ = 0;
  };

  bool cancelled() const;
  /// Sets the flag and runs every registered callback (once).
  void cancel();
  /// Runs `fn` on cancel; the callback must not register or unregister.
  [[nodiscard]] Subscription on_cancel(std::function<void()> fn);

 private:
  // Callbacks run under this lock, so unregistering waits for a running one
  // and a callback never runs after its owner is gone.
  mutable util::Mutex mu_;
  // Read without the lock: a waiter checks it while holding its own lock,
  // which a running callback may be waiting for.
  std::atomic<bool> cancelled_{false};
  std::uint64_t next_ GUARDED_BY(mu_) = 1;
  std::map<std::uint64_t, std::function<void()>> callbacks_ GUARDED_BY(mu_);
};

}  // namespace mcpgw
