#pragma once
// How many of an upstream's own log messages (notifications/message sent
// outside any call) become gateway log lines: a token bucket, so a server
// that floods its log cannot flood the gateway's. What it holds back is
// counted, for one "N suppressed" line.
#include <chrono>
#include <cstdint>

#include "util/thread_annotations.hpp"

namespace mcpgw::upstream {

class LogGate {
 public:
  using Clock = std::chrono::steady_clock;
  /// Lines a second in the long run.
  static constexpr double kRate = 20;
  /// Lines at once after a quiet spell.
  static constexpr double kBurst = 100;

  /// Whether a line arriving at `now` is written; false = it is counted as
  /// suppressed instead.
  bool admit(Clock::time_point now);
  /// The lines suppressed since the last call (0 for none); the count
  /// starts again from 0.
  std::uint64_t take_suppressed();

 private:
  util::Mutex mu_;
  double tokens_ GUARDED_BY(mu_) = kBurst;
  Clock::time_point last_ GUARDED_BY(mu_){};
  std::uint64_t suppressed_ GUARDED_BY(mu_) = 0;
};

}  // namespace mcpgw::upstream
