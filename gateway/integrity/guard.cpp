#include "integrity/guard.hpp"

#include <spdlog/spdlog.h>

namespace mcpgw::integrity {

Guard::Guard(std::shared_ptr<Store> store) : store_(std::move(store)) {}

void Guard::reload(std::function<void()> then) {
  if (!store_) return;
  store_->load([this, then = std::move(then)](Result<Ledger> r) {
    {
      util::MutexLock lk(mu_);
      if (r) {
        ledger_ = std::make_shared<const Ledger>(std::move(*r));
        why_.clear();
        read_.notify_all();
      } else {
        why_ = store_->describe() + ": " + r.error();
      }
    }
    if (!r) spdlog::warn("integrity: cannot read the pins yet ({}); until they are read every server tool counts as new", why());
    if (then) then();
  });
}

std::shared_ptr<const Ledger> Guard::ledger() const {
  util::MutexLock lk(mu_);
  return ledger_;
}

bool Guard::await_read(std::chrono::milliseconds timeout) const {
  auto until = std::chrono::steady_clock::now() + timeout;
  util::UniqueLock lk(mu_);
  while (!ledger_)
    if (read_.wait_until(lk.native(), until) == std::cv_status::timeout) return ledger_ != nullptr;
  return true;
}

std::string Guard::why() const {
  util::MutexLock lk(mu_);
  return why_;
}

void Guard::record(const std::vector<Change>& changes) {
  if (changes.empty() || !store_) return;
  {
    util::MutexLock lk(mu_);
    if (!ledger_ || read_only_) return;
    auto next = std::make_shared<Ledger>(*ledger_);
    apply_changes(*next, changes);
    ledger_ = std::move(next);
  }
  store_->save(changes, [this](Result<void> r) {
    if (!r) spdlog::error("integrity: cannot write the pins to {}: {}", store_->describe(), r.error());
  });
}

}  // namespace mcpgw::integrity
