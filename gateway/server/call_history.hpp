#pragma once
// The last 15 minutes of tool calls per origin (server or plugin), in
// 10-second buckets: how many, how many failed, and a latency histogram,
// so the status page can chart calls per second and p50/p99 latency.
// Recording is two short locks and a few increments.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/thread_annotations.hpp"

namespace mcpgw::server {

class CallHistory {
 public:
  static constexpr int kBuckets = 90;
  static constexpr int kBucketSeconds = 10;

  /// One finished call to `origin`.
  void record(const std::string& origin, bool ok, double seconds);

  /// One origin's buckets, oldest first; the last is the current one
  /// (partial). Latencies in ms; 0 where a bucket had no call.
  struct Series {
    std::string origin;
    std::vector<std::uint32_t> calls, errors;
    std::vector<double> p50_ms, p99_ms;
  };
  /// Every origin that had a call in the last 15 minutes, by name.
  std::vector<Series> snapshot() const;

 private:
  /// Latency bins: bin i holds [kFirstMs * kGrowth^i, kFirstMs * kGrowth^(i+1)).
  static constexpr int kBins = 64;
  struct Bucket {
    std::int64_t epoch = -1;  ///< which 10-second slot of time it holds
    std::uint32_t calls = 0, errors = 0;
    std::array<std::uint32_t, kBins> bins{};
  };
  struct Origin {
    mutable util::Mutex mu;
    std::array<Bucket, kBuckets> ring GUARDED_BY(mu);
  };
  static int bin_of(double ms);
  static double percentile(const Bucket& b, double q);

  mutable util::Mutex mu_;
  /// Origins are never removed: a pointer taken under mu_ stays valid.
  std::unordered_map<std::string, std::unique_ptr<Origin>> origins_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::server
