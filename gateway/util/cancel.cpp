#include "util/cancel.hpp"

namespace mcpgw {

CancelSignal::Subscription& CancelSignal::Subscription::operator=(Subscription&& o) noexcept {
  if (this != &o) {
    reset();
    s_ = o.s_;
    id_ = o.id_;
    o.s_ = nullptr;
  }
  return *this;
}

void CancelSignal::Subscription::reset() {
  if (!s_) return;
  util::MutexLock lk(s_->mu_);
  s_->callbacks_.erase(id_);
  s_ = nullptr;
}

bool CancelSignal::cancelled() const { return cancelled_.load(); }

void CancelSignal::cancel() {
  util::MutexLock lk(mu_);
  if (cancelled_.exchange(true)) return;
  for (auto& [id, fn] : callbacks_) fn();
}

CancelSignal::Subscription CancelSignal::on_cancel(std::function<void()> fn) {
  util::MutexLock lk(mu_);
  if (cancelled_) {
    fn();
    return {};
  }
  std::uint64_t id = next_++;
  callbacks_.emplace(id, std::move(fn));
  return Subscription(this, id);
}

}  // namespace mcpgw
