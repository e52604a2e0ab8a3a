// Start-up: the servers still in their first connection attempt, and how
// requests wait for them (startup_wait_ms), so that a client that connects
// while upstreams start sees what a later client sees.
#include <algorithm>

#include "catalog/catalog.hpp"

namespace mcpgw::catalog {

using Clock = std::chrono::steady_clock;

Clock::time_point Snapshot::starting_until() const {
  Clock::time_point until{};
  for (const auto& p : pending) until = std::max(until, p.until);
  return until;
}

Clock::time_point Snapshot::starting_until(std::string_view name) const {
  Clock::time_point until{};
  for (const auto& p : pending)
    if (name.substr(0, p.prefix.size()) == p.prefix) until = std::max(until, p.until);
  return until;
}

std::string Snapshot::pending_names() const {
  std::string out;
  for (const auto& p : pending) out += (out.empty() ? "" : ", ") + p.server->name();
  return out;
}

bool Catalog::starting() const {
  const auto until = starting_until_.load(std::memory_order_acquire);
  return until != 0 && Clock::now().time_since_epoch().count() < until;
}

Task<std::shared_ptr<const Snapshot>> Catalog::started(Clock::time_point deadline, CancelSignal* cancel) {
  for (;;) {
    auto snap = snapshot();
    // Each server that settles publishes a snapshot without it; one still
    // trying at its bound is waited for no longer.
    const auto until = std::min(snap->starting_until(), deadline);
    if (snap->pending.empty() || Clock::now() >= until) co_return snap;
    if (!co_await wait_newer(snap->generation, until, cancel)) co_return snapshot();
  }
}

}  // namespace mcpgw::catalog
