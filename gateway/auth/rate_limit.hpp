#pragma once
// `limits.calls_per_s` and `limits.burst`: one token bucket per principal,
// so one principal calling too fast is slowed down without touching the
// others.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "util/thread_annotations.hpp"

namespace mcpgw::auth {

/// The `limits` section.
struct LimitSettings {
  double calls_per_s = 0;  ///< 0 = no rate limit
  int burst = 0;           ///< bucket size; 0 = max(1, calls_per_s)
  int max_in_flight_per_session = 0;  ///< 0 = no limit
  int max_sessions = 10000;           ///< 0 = no limit
  int max_batch_size = 100;           ///< messages in one JSON-RPC batch; 0 = no limit
  int batch_concurrency = 8;          ///< of a batch's requests running at once
  bool operator==(const LimitSettings&) const = default;
};

/// Token buckets by principal; safe from any thread.
class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  RateLimiter(double per_s, int burst);
  /// Takes one token of `principal`'s bucket at `now`: nullopt when the call
  /// may go, else the milliseconds until a token is there.
  std::optional<std::int64_t> take(std::string_view principal, Clock::time_point now);
  double rate() const { return rate_; }
  double capacity() const { return capacity_; }

 private:
  struct Bucket {
    double tokens;
    Clock::time_point at;
  };
  /// Forgets buckets that are full again (their principals are idle).
  void sweep(Clock::time_point now) REQUIRES(mu_);

  const double rate_, capacity_;
  util::Mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::auth
