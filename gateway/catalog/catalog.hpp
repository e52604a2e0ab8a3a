#pragma once
// The tool set clients see: immutable snapshots built from every upstream's
// tool list, swapped atomically when one changes.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "upstream/upstream.hpp"

namespace mcpgw::catalog {

/// One tool as exposed to clients.
struct ExposedTool {
  std::string name;                          ///< as clients see and call it
  std::shared_ptr<upstream::Upstream> origin;
  std::string upstream_name;                 ///< the name the origin knows
  std::string definition;                    ///< serialised Tool, as listed
};

/// A consistent view of the catalog; never changes once published.
struct Snapshot {
  std::uint64_t generation = 0;
  std::vector<ExposedTool> tools;
  std::unordered_map<std::string, std::size_t> index;
  /// Readable problems found while building (e.g. name collisions).
  std::vector<std::string> warnings;

  const ExposedTool* find(std::string_view name) const;
};

/// Builds a snapshot from the upstreams' current tool lists, in config order.
std::shared_ptr<const Snapshot> build(const config::Config& cfg,
                                      const std::vector<std::shared_ptr<upstream::Upstream>>& upstreams,
                                      std::uint64_t generation);

/// Holds the current snapshot. Readers take a shared_ptr and keep it for the
/// whole request; publishing never blocks them for long.
class Catalog {
 public:
  std::shared_ptr<const Snapshot> snapshot() const;
  void publish(std::shared_ptr<const Snapshot> s);
  std::uint64_t next_generation() { return ++generation_; }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_ = std::make_shared<Snapshot>();
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace mcpgw::catalog
