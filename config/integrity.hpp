#pragma once
// The `integrity` section of gateway.yaml: pinned tool definitions, hidden
// instructions, invisible characters (docs/operations.md, "Tool integrity").
#include <string>

namespace mcpgw::config {

namespace yaml {
class Value;
}

/// `integrity`.
struct Integrity {
  /// `pins`: off (nothing pinned), warn (changes served and reported),
  /// block (changes withheld until approved).
  enum class Pins { Off, Warn, Block };
  Pins pins = Pins::Warn;
  /// File (absolute) the pins are kept in; "" = memory only, or Redis when
  /// cluster.redis is set.
  std::string store;
  /// Invisible, bidi-control and tag characters and terminal escapes are
  /// removed from listed names, titles and descriptions.
  bool strip_invisible = true;
  bool operator==(const Integrity&) const = default;
};

/// `integrity`; `redis` is cluster.redis (a store file beside it is an error).
Integrity read_integrity(const yaml::Value& v, const std::string& redis);

}  // namespace mcpgw::config
