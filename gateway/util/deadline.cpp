#include "util/deadline.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive/set.hpp>

#include <optional>
#include <utility>
#include <vector>

#include "util/thread_annotations.hpp"

namespace mcpgw {

struct DeadlineOrder {
  bool operator()(const Deadline& a, const Deadline& b) const { return a.at_ < b.at_; }
};

/// The armed deadlines of one execution context, soonest first, and the one
/// timer that wakes for the soonest. The timer is moved only when a sooner
/// deadline comes (rare: most are armed with the same timeout, so later);
/// a met deadline is only unlinked, and the timer, when it wakes for it,
/// finds it gone and waits for the soonest left.
class DeadlineQueue : public asio::execution_context::service {
 public:
  using key_type = DeadlineQueue;

  explicit DeadlineQueue(asio::execution_context& ctx) : service(ctx) {}

  /// The queue of `ex`'s execution context.
  static DeadlineQueue& of(const asio::any_io_executor& ex) {
    return asio::use_service<DeadlineQueue>(asio::query(ex, asio::execution::context));
  }

  void arm(Deadline& d, Deadline::Clock::time_point at, std::function<void()> fire) {
    util::MutexLock lk(mu_);
    unlink(d);
    if (shut_) return;  // the loop is going away: nothing would run it
    d.at_ = at;
    d.fire_ = std::move(fire);
    set_.insert(d);
    if (!timer_) timer_.emplace(d.executor_);  // its handler only hands each deadline to its own executor
    if (!waiting_ || at < wakes_at_) wait_until(at);
  }

  void disarm(Deadline& d) {
    util::MutexLock lk(mu_);
    unlink(d);
  }

 private:
  using Set = boost::intrusive::multiset<
      Deadline, boost::intrusive::member_hook<Deadline, boost::intrusive::set_member_hook<>, &Deadline::hook_>,
      boost::intrusive::compare<DeadlineOrder>>;

  void unlink(Deadline& d) REQUIRES(mu_) {
    if (d.hook_.is_linked()) set_.erase(set_.iterator_to(d));
    d.fire_ = nullptr;
  }

  void shutdown() override {
    util::MutexLock lk(mu_);
    shut_ = true;
    while (!set_.empty()) unlink(*set_.begin());
    timer_.reset();
  }

  void wait_until(Deadline::Clock::time_point at) REQUIRES(mu_) {
    waiting_ = true;
    wakes_at_ = at;
    // Moving the timer ends the wait under way: its handler sees a newer
    // generation and leaves the timer to the new wait.
    timer_->expires_at(at);
    timer_->async_wait([this, generation = ++generation_](const boost::system::error_code& ec) {
      if (!ec) woken(generation);
    });
  }

  void woken(std::uint64_t generation) {
    std::vector<std::pair<asio::any_io_executor, std::function<void()>>> due;
    {
      util::MutexLock lk(mu_);
      if (generation != generation_ || shut_) return;
      waiting_ = false;
      const auto now = Deadline::Clock::now();
      while (!set_.empty() && set_.begin()->at_ <= now) {
        Deadline& d = *set_.begin();
        set_.erase(set_.begin());
        due.emplace_back(d.executor_, std::exchange(d.fire_, nullptr));
      }
      if (!set_.empty()) wait_until(set_.begin()->at_);
    }
    // Each on its deadline's own executor (at once when that is this thread's).
    for (auto& [ex, fire] : due) asio::dispatch(ex, std::move(fire));
  }

  util::Mutex mu_;
  Set set_ GUARDED_BY(mu_);
  std::optional<asio::steady_timer> timer_ GUARDED_BY(mu_);
  bool waiting_ GUARDED_BY(mu_) = false;
  bool shut_ GUARDED_BY(mu_) = false;
  Deadline::Clock::time_point wakes_at_ GUARDED_BY(mu_){};
  std::uint64_t generation_ GUARDED_BY(mu_) = 0;
};

Deadline::Deadline(asio::any_io_executor executor) : executor_(std::move(executor)) {}

Deadline::~Deadline() { disarm(); }

void Deadline::arm(Clock::time_point at, std::function<void()> fire) {
  if (!queue_) queue_ = &DeadlineQueue::of(executor_);
  queue_->arm(*this, at, std::move(fire));
}

void Deadline::disarm() {
  if (queue_) queue_->disarm(*this);
}

}  // namespace mcpgw
