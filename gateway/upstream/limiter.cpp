#include "upstream/limiter.hpp"

namespace mcpgw::upstream {

Result<Limiter::Slot> Limiter::acquire(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel) {
  if (max_ <= 0) return Slot();
  CancelSignal::Subscription sub;
  if (cancel)
    sub = cancel->on_cancel([this] {
      // Taking the lock orders the wake-up after the waiter's check.
      std::lock_guard lk(mu_);
      cv_.notify_all();
    });
  std::unique_lock lk(mu_);
  const std::uint64_t ticket = next_ticket_++;
  ++waiting_;
  bool got = cv_.wait_until(lk, deadline, [&] {
    return (ticket == serving_ && in_flight_ < max_) || (cancel && cancel->cancelled());
  });
  --waiting_;
  if (got && !(cancel && cancel->cancelled())) {
    ++serving_;
    while (abandoned_.erase(serving_)) ++serving_;
    ++in_flight_;
    // The next waiter in line may find a free slot too.
    cv_.notify_all();
    return Slot(this);
  }
  // Giving up its place: a later ticket must not wait for this one. Tickets
  // of waiters that left are skipped by moving `serving_` past them.
  abandoned_.insert(ticket);
  while (abandoned_.erase(serving_)) ++serving_;
  cv_.notify_all();
  if (cancel && cancel->cancelled()) return Error{"cancelled while waiting for a free call slot"};
  return Error{"timed out waiting for a free call slot (max_concurrency " + std::to_string(max_) + ")"};
}

void Limiter::release() {
  {
    std::lock_guard lk(mu_);
    --in_flight_;
  }
  cv_.notify_all();
}

int Limiter::in_flight() const {
  std::lock_guard lk(mu_);
  return in_flight_;
}

int Limiter::waiting() const {
  std::lock_guard lk(mu_);
  return waiting_;
}

}  // namespace mcpgw::upstream
