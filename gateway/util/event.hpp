#pragma once
// What coroutines wait on instead of a condition variable: an event count.
// A waiter reads the generation, checks its condition under its own lock,
// and then waits for a newer generation; a notify() in between is never
// lost. Nothing blocks a thread: the waiting coroutine is suspended and
// resumed on its own executor.
#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "util/cancel.hpp"
#include "util/task.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw {

namespace asio = boost::asio;

/// Completion handler `h` (move-only) as a copyable callable taking `Args`,
/// for callbacks stored as std::function; run it once.
template <class... Args, class Handler>
std::function<void(Args...)> shared_handler(Handler h) {
  auto held = std::make_shared<Handler>(std::move(h));
  return [held](Args... args) { std::move(*held)(std::move(args)...); };
}

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// The current generation: read it before checking the condition.
  std::uint64_t generation() const;
  /// Starts a new generation and wakes every waiter; any thread.
  void notify();
  /// Waits until the generation differs from `seen`, `deadline` passes or
  /// `cancel` (may be null) fires; true when woken by notify() or cancel.
  /// The coroutine's executor must not run two of its handlers at once (a
  /// strand, or a single-threaded loop).
  Task<bool> wait(std::uint64_t seen, Clock::time_point deadline, CancelSignal* cancel = nullptr);

 private:
  struct Waiter;
  mutable util::Mutex mu_;
  std::uint64_t generation_ GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<Waiter>> waiters_ GUARDED_BY(mu_);
};

}  // namespace mcpgw
