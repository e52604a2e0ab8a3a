#pragma once
// `servers[].tools`: how the operator reshapes a server's tools without
// forking it (a new name, description, title, annotations; per argument a
// fixed value, a default, a new name or description), as plain values.
// The catalog applies them (catalog/overrides.hpp); nothing here reads YAML.
#include <optional>
#include <string>
#include <vector>

namespace mcpgw::config {

/// `servers[].tools.<tool>.arguments.<argument>`.
struct ArgumentOverride {
  std::string argument;                ///< the upstream's argument name (the key)
  std::optional<std::string> value;    ///< fixed (compact JSON): out of the schema, always sent
  std::optional<std::string> fallback; ///< `default` (compact JSON): sent when the client omits it
  std::string name;                    ///< exposed name; "" = the upstream's
  std::optional<std::string> description;
  bool operator==(const ArgumentOverride&) const = default;
};

/// `servers[].tools.<tool>`: one upstream tool's override.
struct ToolOverride {
  std::string tool;                    ///< the upstream's tool name (the key)
  std::string name;                    ///< exposed as `<server><sep><name>`; "" = the upstream's
  std::optional<std::string> description;
  std::optional<std::string> title;
  std::string annotations = "{}";      ///< compact JSON object, merged over the upstream's (these win)
  std::vector<ArgumentOverride> arguments;  ///< in file order
  bool operator==(const ToolOverride&) const = default;
};

}  // namespace mcpgw::config
