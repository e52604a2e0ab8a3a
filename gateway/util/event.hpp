#pragma once
// The gateway's one wake-up primitive: what a coroutine waits on instead
// of a condition variable, an event count. A waiter reads the generation,
// checks its condition under its own lock, and then waits for a newer
// generation; a notify() in between is never lost. Nothing blocks a
// thread: the waiting coroutine is suspended and resumed on its own
// executor. Cancellation (util/cancel.hpp) and deadlines
// (util/deadline.hpp) end a wait early; they are not wake-ups of their own.
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

/// How notify() resumes a waiter.
enum class Resume {
  /// Through the waiter's executor's queue, never inside notify(): for a
  /// notifier that holds locks or goes on with its own work after it.
  Posted,
  /// Inside notify() when that runs on the waiter's own thread (a
  /// connection's answer made on its worker), else posted: no trip around
  /// the loop. Only for notifiers that hold no lock the waiter takes and
  /// have nothing left to do that the waiter could depend on.
  Inline,
};

/// An event count that coroutines wait on; see the file comment.
class Event {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Event(Resume resume = Resume::Posted) : resume_(resume) {}
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
  const Resume resume_;
  mutable util::Mutex mu_;
  std::uint64_t generation_ GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<Waiter>> waiters_ GUARDED_BY(mu_);
};

}  // namespace mcpgw
