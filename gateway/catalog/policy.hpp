#pragma once
// The policies' decision about one tool for one caller: the first rule
// whose match (tool globs, modes, principals) holds decides, by its
// expression; no rule matching allows. The same decision serves calls
// (with their arguments) and listings (arguments unknown: a tool is left
// out only when no arguments could make its rule allow it).
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "config/policies.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::catalog {

/// Who calls, as the policies see them.
struct Subject {
  std::string principal;  ///< "" without auth
  /// The OAuth token's claims (an object); null for a static token or none.
  std::shared_ptr<const json::Document> claims;
  std::vector<std::string> scopes;
  std::string mode;
  std::string client_name, client_version;
};

/// A tool as the policies see it.
struct ToolView {
  std::string_view name;  ///< exposed
  std::string_view server, upstream_name;
  const json::Value* annotations = nullptr;  ///< null: none
  std::span<const std::string> slices;
};

/// The view of an exposed tool.
ToolView view_of(const ExposedTool& t);

/// What the policies decided.
struct Decision {
  /// The rule that refused; null: allowed.
  const config::Policy* refused_by = nullptr;
  /// Set when that rule's expression failed at run time (refused: fail closed).
  std::string_view error;
  std::uint32_t column = 0;
  bool allowed() const { return refused_by == nullptr; }
};

/// The first of `rules` whose match holds for `who` calling `tool`; null: none.
const config::Policy* first_match(std::span<const config::Policy> rules, const Subject& who, std::string_view tool);

/// Whether `who` may call `tool` with `args` (null: none) under `rules`.
Decision decide(std::span<const config::Policy> rules, const Subject& who, const ToolView& tool,
                const json::Value* args);

/// Whether some arguments could let `who` call `tool`: false only when the
/// deciding rule refuses whatever the arguments (a listing leaves it out).
bool may_allow(std::span<const config::Policy> rules, const Subject& who, const ToolView& tool);

/// The isError text of a call `p` refused: `mcpgw: refused by policy <name>: <message>`.
std::string refusal_text(const config::Policy& p);

}  // namespace mcpgw::catalog
