#include "util/event.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "util/deadline.hpp"

namespace mcpgw {

/// One suspended wait. Its deadline lives on the waiting coroutine's
/// executor and is only touched there (armed by the initiation, disarmed by
/// the handler that resumes the waiter, which runs there whether posted or
/// dispatched), so a notify() on another thread never races it.
struct Event::Waiter : std::enable_shared_from_this<Event::Waiter> {
  using Handler = std::function<void(bool)>;
  Waiter(asio::any_io_executor ex, Resume r) : executor(ex), expiry(ex), resume(r) {}

  /// Ends the wait once; `notified` is what the coroutine gets.
  void fire(bool notified) {
    Handler h;
    {
      util::MutexLock lk(mu);
      if (fired) return;
      fired = true;
      outcome = notified;
      h = std::move(handler);
    }
    if (!h) return;  // not suspended yet: arm() finds `fired`
    auto resume_waiter = [self = shared_from_this(), h = std::move(h), notified] {
      self->expiry.disarm();
      h(notified);
    };
    if (resume == Resume::Inline)
      asio::dispatch(executor, std::move(resume_waiter));
    else
      asio::post(executor, std::move(resume_waiter));
  }

  void arm(Handler h, Clock::time_point deadline) {
    bool v;
    {
      util::MutexLock lk(mu);
      if (!fired) {
        handler = std::move(h);
        if (deadline == Clock::time_point::max()) return;
        expiry.arm(deadline, [w = weak_from_this()] {
          if (auto self = w.lock()) self->fire(false);
        });
        return;
      }
      v = outcome;
    }
    asio::post(executor, [h = std::move(h), v] { h(v); });
  }

  asio::any_io_executor executor;
  // Only touched on `executor` (see above), not under mu.
  Deadline expiry;
  const Resume resume;
  util::Mutex mu;
  bool fired GUARDED_BY(mu) = false;
  bool outcome GUARDED_BY(mu) = false;
  Handler handler GUARDED_BY(mu);
};

std::uint64_t Event::generation() const {
  util::MutexLock lk(mu_);
  return generation_;
}

void Event::notify() {
  std::vector<std::shared_ptr<Waiter>> woken;
  {
    util::MutexLock lk(mu_);
    ++generation_;
    woken.swap(waiters_);
  }
  for (auto& w : woken) w->fire(true);
}

Task<bool> Event::wait(std::uint64_t seen, Clock::time_point deadline, CancelSignal* cancel) {
  asio::any_io_executor ex = co_await asio::this_coro::executor;
  auto w = std::make_shared<Waiter>(ex, resume_);
  {
    util::MutexLock lk(mu_);
    if (generation_ != seen) co_return true;
    waiters_.push_back(w);
  }
  if (cancel && cancel->cancelled()) {
    util::MutexLock lk(mu_);
    std::erase(waiters_, w);
    co_return true;
  }
  // The callback runs under the signal's lock; fire() takes only the
  // waiter's own, so it may run on any thread at any time.
  CancelSignal::Subscription sub;
  if (cancel) sub = cancel->on_cancel([w] { w->fire(true); });
  // The frame's `w` keeps the waiter alive meanwhile; the initiation holds
  // nothing with a destructor (GCC 12 may destroy such temporaries of a
  // co_await expression twice).
  Waiter* waiter = w.get();
  bool notified = co_await asio::async_initiate<decltype(asio::use_awaitable), void(bool)>(
      [waiter, deadline](auto handler) { waiter->arm(shared_handler<bool>(std::move(handler)), deadline); },
      asio::use_awaitable);
  {
    // Woken by its deadline or the cancel signal, it is still listed.
    util::MutexLock lk(mu_);
    std::erase(waiters_, w);
  }
  co_return notified;
}

}  // namespace mcpgw
