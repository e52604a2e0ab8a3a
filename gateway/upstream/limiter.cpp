#include "upstream/limiter.hpp"

namespace mcpgw::upstream {

Task<Result<Limiter::Slot>> Limiter::acquire(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel) {
  if (max_ <= 0) co_return Slot();
  std::uint64_t ticket = 0;
  auto turn = std::make_shared<Event>();
  {
    util::MutexLock lk(mu_);
    ticket = next_ticket_++;
    ++waiting_;
    waiters_.emplace(ticket, turn);
  }
  bool got = false;
  for (;;) {
    const std::uint64_t seen = turn->generation();
    {
      util::MutexLock lk(mu_);
      if (cancel && cancel->cancelled()) break;
      if (ticket == serving_ && in_flight_ < max_) {
        got = true;
        ++serving_;
        while (abandoned_.erase(serving_)) ++serving_;
        ++in_flight_;
        break;
      }
    }
    if (!co_await turn->wait(seen, deadline, cancel)) break;
  }
  {
    util::MutexLock lk(mu_);
    --waiting_;
    waiters_.erase(ticket);
    if (!got) {
      // Giving up its place: a later ticket must not wait for this one.
      // Tickets of waiters that left are skipped by moving `serving_` past
      // them.
      abandoned_.insert(ticket);
      while (abandoned_.erase(serving_)) ++serving_;
    }
  }
  // The next waiter in line may find a free slot too.
  wake_head();
  if (got) co_return Slot(this);
  if (cancel && cancel->cancelled()) co_return Error{"cancelled while waiting for a free call slot"};
  co_return Error{"timed out waiting for a free call slot (max_concurrency " + std::to_string(max_) + ")"};
}

void Limiter::release() {
  {
    util::MutexLock lk(mu_);
    --in_flight_;
  }
  wake_head();
}

void Limiter::wake_head() {
  std::shared_ptr<Event> head;
  {
    util::MutexLock lk(mu_);
    if (auto it = waiters_.find(serving_); it != waiters_.end()) head = it->second;
  }
  if (head) head->notify();
}

int Limiter::in_flight() const {
  util::MutexLock lk(mu_);
  return in_flight_;
}

int Limiter::waiting() const {
  util::MutexLock lk(mu_);
  return waiting_;
}

}  // namespace mcpgw::upstream
