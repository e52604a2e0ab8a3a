#pragma once
// `servers[].max_concurrency`: at most N calls in flight to one server; the
// others wait in arrival order, each until its own deadline or cancellation.
// Waiters are suspended coroutines: a queue of thousands costs no thread.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "util/cancel.hpp"
#include "util/event.hpp"
#include "util/result.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::upstream {

class Limiter {
 public:
  /// Releases its slot when destroyed.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(Limiter* l) : l_(l) {}
    Slot(Slot&& o) noexcept : l_(o.l_) { o.l_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot() {
      if (l_) l_->release();
    }

   private:
    Limiter* l_ = nullptr;
  };

  /// `max` = 0: no limit.
  explicit Limiter(int max) : max_(max) {}
  /// A slot, once one is free (first come, first served); an error when
  /// `deadline` passes or `cancel` fires first.
  Task<Result<Slot>> acquire(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel);
  /// Calls holding a slot.
  int in_flight() const;
  /// Calls waiting for one.
  int waiting() const;

 private:
  void release() EXCLUDES(mu_);
  /// Wakes the waiter whose turn it is, if any: only the head of the line
  /// can take a slot, so a freed slot costs one wake-up, not one per waiter.
  void wake_head() EXCLUDES(mu_);
  const int max_;
  mutable util::Mutex mu_;
  std::map<std::uint64_t, std::shared_ptr<Event>> waiters_ GUARDED_BY(mu_);  ///< by ticket
  int in_flight_ GUARDED_BY(mu_) = 0;
  // FIFO order of the waiters
  std::uint64_t next_ticket_ GUARDED_BY(mu_) = 0;
  std::uint64_t serving_ GUARDED_BY(mu_) = 0;
  std::set<std::uint64_t> abandoned_ GUARDED_BY(mu_);  // tickets of waiters that gave up, not yet reached
  int waiting_ GUARDED_BY(mu_) = 0;
};

}  // namespace mcpgw::upstream
