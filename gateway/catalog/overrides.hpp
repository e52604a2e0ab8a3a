#pragma once
// `servers[].tools` applied: the definition a client sees of an overridden
// tool (its name, description, title, annotations and input schema as the
// operator shaped them) and the way a call's arguments go back to the
// upstream's names and values. The catalog builds both once per snapshot;
// the call path only maps arguments.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/tool_overrides.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::catalog {

/// How the arguments of a call of an overridden tool reach its upstream.
struct ArgumentMap {
  struct Renamed {
    std::string exposed;   ///< the name clients see
    std::string upstream;  ///< the name the upstream takes
  };
  struct Preset {
    std::string upstream;  ///< the argument, as the upstream names it
    json::Document value;
  };
  std::vector<Renamed> renamed;
  std::vector<Preset> fixed;     ///< always sent; a client may not give them
  std::vector<Preset> defaults;  ///< sent when the call omits them
};

/// One upstream tool with its override applied (or not).
struct Overridden {
  const json::Value* upstream;                   ///< the upstream's definition
  std::optional<json::Document> rewritten;       ///< set when an override applies
  std::string_view name;                         ///< the tool's name before the server's prefix
  std::shared_ptr<const ArgumentMap> arguments;  ///< null: the arguments pass as they are
  /// The definition to expose.
  const json::Value& definition() const { return rewritten ? *rewritten : *upstream; }
};

/// The overrides of one server, looked up by the upstream's tool names.
class ServerOverrides {
 public:
  /// `server`'s overrides; `who` names it in warnings ("server gh").
  ServerOverrides(const std::vector<config::ToolOverride>& overrides, std::string who);

  /// Upstream tool `def` (named `name`) as it is exposed; what of its
  /// override cannot be applied to it (an argument its schema lacks, a new
  /// argument name its schema already has) goes to `warnings`.
  Overridden apply(const json::Value& def, std::string_view name, std::vector<std::string>& warnings) const;

  /// A warning for each override of a tool that `tools` (the server's
  /// listing) does not have.
  void warn_unknown(const json::Value& tools, std::vector<std::string>& warnings) const;

  bool empty() const { return by_tool_.empty(); }

 private:
  std::string who_;
  const std::vector<config::ToolOverride>& overrides_;  // the server's configuration outlives the build
  std::unordered_map<std::string_view, const config::ToolOverride*> by_tool_;
};

/// `def` with override `o` applied: name, description, title, annotations
/// merged (the override's keys win), and in its inputSchema a fixed argument
/// removed (from `properties` and `required`), a default declared (and no
/// longer required), an argument renamed or described. `map` gets how calls
/// are mapped back; `warnings` what could not be applied.
json::Document apply_override(const json::Value& def, const config::ToolOverride& o, ArgumentMap& map,
                              std::vector<std::string>& warnings, std::string_view who);

/// The fixed argument `args` (a call's arguments by the exposed names, may
/// be null) carries, or nullptr: a client may not choose it.
const std::string* fixed_argument_in(const ArgumentMap& map, const json::Value* args);

/// `args` (by the exposed names, may be null, none of them fixed) as the
/// upstream takes them: renamed back, the fixed values put in, the
/// defaults where the call omits them.
json::Document to_upstream(const ArgumentMap& map, const json::Value* args);
/// to_upstream() into `a`: a call builds it in an allocator of its own
/// frame, without the document's allocator object on the heap.
json::Value to_upstream(const ArgumentMap& map, const json::Value* args, json::Allocator& a);

/// `args` (may be null) given in the upstream's own names (an MCP Apps
/// view, or the server's own `_meta.nextTool`, calling the tool by its upstream name) in
/// the exposed names: renamed, and without the fixed arguments (the
/// configured value is the one sent).
json::Document from_upstream(const ArgumentMap& map, const json::Value* args);

}  // namespace mcpgw::catalog
