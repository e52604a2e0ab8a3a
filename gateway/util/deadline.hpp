#pragma once
// Deadlines that share their io_context's one timer. Every call arms a
// deadline or two (the upstream exchange's, the wait for its answer) and
// nearly all are met; an Asio timer per deadline, cancelled when it is met,
// completes its wait through the loop (a trip around it, an epoll_wait and
// a handler), where disarming one of these unlinks it from an ordered set.
#include <boost/asio/any_io_executor.hpp>
#include <boost/intrusive/set_hook.hpp>

#include <chrono>
#include <functional>

namespace mcpgw {

namespace asio = boost::asio;

class DeadlineQueue;

/// One deadline: `fire` runs on `executor` when it passes, unless disarmed
/// (or re-armed) first. Arm, disarm and destroy it on its executor (a
/// strand, or a single-threaded loop); `fire` may destroy it.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(asio::any_io_executor executor);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  /// Runs `fire` at `at` (replacing what was armed).
  void arm(Clock::time_point at, std::function<void()> fire);
  /// Forgets what was armed; nothing runs.
  void disarm();
  const asio::any_io_executor& executor() const { return executor_; }

 private:
  friend class DeadlineQueue;
  friend struct DeadlineOrder;
  // hook_, at_ and fire_ are the queue's, under its lock (its timer may
  // wake on another thread of a loop that several threads run).
  boost::intrusive::set_member_hook<> hook_;
  Clock::time_point at_{};
  std::function<void()> fire_;
  const asio::any_io_executor executor_;
  DeadlineQueue* queue_ = nullptr;  ///< the queue of executor_'s context, once armed
};

}  // namespace mcpgw
