#include "server/call_history.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace mcpgw::server {
namespace {

constexpr double kFirstMs = 0.05;
constexpr double kGrowth = 1.25;

std::int64_t current_epoch() {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return s / CallHistory::kBucketSeconds;
}

}  // namespace

int CallHistory::bin_of(double ms) {
  if (!(ms > kFirstMs)) return 0;
  int i = static_cast<int>(std::log(ms / kFirstMs) / std::log(kGrowth));
  return std::clamp(i, 0, kBins - 1);
}

double CallHistory::percentile(const Bucket& b, double q) {
  std::uint32_t total = 0;
  for (auto n : b.bins) total += n;
  if (!total) return 0;
  auto rank = static_cast<std::uint32_t>(std::ceil(q * total));
  std::uint32_t seen = 0;
  for (int i = 0; i < kBins; ++i) {
    seen += b.bins[static_cast<std::size_t>(i)];
    // The bin's geometric middle stands for its calls.
    if (seen >= rank) return kFirstMs * std::pow(kGrowth, i + 0.5);
  }
  return kFirstMs * std::pow(kGrowth, kBins);
}

void CallHistory::record(const std::string& origin, bool ok, double seconds) {
  Origin* o;
  {
    util::MutexLock lk(mu_);
    auto& slot = origins_[origin];
    if (!slot) slot = std::make_unique<Origin>();
    o = slot.get();
  }
  std::int64_t epoch = current_epoch();
  util::MutexLock lk(o->mu);
  Bucket& b = o->ring[static_cast<std::size_t>(epoch % kBuckets)];
  if (b.epoch != epoch) b = Bucket{epoch};
  ++b.calls;
  if (!ok) ++b.errors;
  ++b.bins[static_cast<std::size_t>(bin_of(seconds * 1000))];
}

std::vector<CallHistory::Series> CallHistory::snapshot() const {
  std::vector<std::pair<std::string, const Origin*>> all;
  {
    util::MutexLock lk(mu_);
    for (const auto& [name, o] : origins_) all.emplace_back(name, o.get());
  }
  std::sort(all.begin(), all.end());
  std::int64_t now = current_epoch();
  std::vector<Series> out;
  for (const auto& [name, o] : all) {
    Series s;
    s.origin = name;
    bool any = false;
    util::MutexLock lk(o->mu);
    for (std::int64_t e = now - kBuckets + 1; e <= now; ++e) {
      const Bucket& b = o->ring[static_cast<std::size_t>(e % kBuckets)];
      bool here = b.epoch == e;
      any |= here && b.calls > 0;
      s.calls.push_back(here ? b.calls : 0);
      s.errors.push_back(here ? b.errors : 0);
      s.p50_ms.push_back(here ? percentile(b, 0.5) : 0);
      s.p99_ms.push_back(here ? percentile(b, 0.99) : 0);
    }
    if (any) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mcpgw::server
