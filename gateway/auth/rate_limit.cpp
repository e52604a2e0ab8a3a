#include "auth/rate_limit.hpp"

#include <algorithm>
#include <cmath>

namespace mcpgw::auth {
namespace {
/// Past this many buckets the full ones are dropped, so a stream of
/// distinct principals cannot grow the map without bound.
constexpr std::size_t kSweepAbove = 4096;
}  // namespace

RateLimiter::RateLimiter(double per_s, int burst)
    : rate_(per_s), capacity_(burst > 0 ? burst : std::max(1.0, std::floor(per_s))) {}

std::optional<std::int64_t> RateLimiter::take(std::string_view principal, Clock::time_point now) {
  if (rate_ <= 0) return std::nullopt;
  util::MutexLock lk(mu_);
  auto it = buckets_.find(std::string(principal));
  if (it == buckets_.end()) {
    if (buckets_.size() >= kSweepAbove) sweep(now);
    it = buckets_.emplace(std::string(principal), Bucket{capacity_, now}).first;
  }
  Bucket& b = it->second;
  double elapsed = std::chrono::duration<double>(now - b.at).count();
  b.tokens = std::min(capacity_, b.tokens + std::max(0.0, elapsed) * rate_);
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::ceil((1 - b.tokens) / rate_ * 1000));
}

void RateLimiter::sweep(Clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    double elapsed = std::chrono::duration<double>(now - it->second.at).count();
    if (it->second.tokens + elapsed * rate_ >= capacity_) it = buckets_.erase(it);
    else ++it;
  }
}

}  // namespace mcpgw::auth
