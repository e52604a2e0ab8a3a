#pragma once
// `policies`: who may call what. Each rule's expression is compiled when the
// file is read (expr/program.hpp), so a configuration that loads has none
// that fails to parse or names an unknown value.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "expr/program.hpp"

namespace mcpgw::config {

namespace yaml {
class Value;
}

/// One rule of `policies`, in file order; the first whose match holds decides.
struct Policy {
  std::string name;
  /// `match`: globs over exposed tool names, modes and principal names;
  /// an empty list matches any.
  std::vector<std::string> tools, modes, principals;
  /// `allow`: the call is allowed only when the expression is true;
  /// `deny`: it is refused when it is true.
  enum class Kind { Allow, Deny } kind = Kind::Allow;
  std::string expression;  ///< as written
  std::shared_ptr<const expr::Program> program;
  std::string message;
  int line = 0;  ///< of the rule in the file, for messages
};

/// Reads `policies` (a list); `known_mode` tells a mode's name ("all" or
/// a key of `modes`).
std::vector<Policy> read_policies(const yaml::Value& v, const std::function<bool(const std::string&)>& known_mode);

}  // namespace mcpgw::config
