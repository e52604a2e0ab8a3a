#include "upstream/log_gate.hpp"

#include <algorithm>
#include <utility>

namespace mcpgw::upstream {

bool LogGate::admit(Clock::time_point now) {
  util::MutexLock lk(mu_);
  if (last_ != Clock::time_point{}) {
    double refill = std::chrono::duration<double>(now - last_).count() * kRate;
    tokens_ = std::min(kBurst, tokens_ + std::max(0.0, refill));
  }
  last_ = now;
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return true;
  }
  ++suppressed_;
  return false;
}

std::uint64_t LogGate::take_suppressed() {
  util::MutexLock lk(mu_);
  return std::exchange(suppressed_, 0);
}

}  // namespace mcpgw::upstream
