#pragma once
// The built-in secret detectors (`redact.builtin`): each a name, what it
// finds, and its RE2 pattern. A pattern with a capturing group masks only
// what the group matched (the value of `password=...`, not the key).
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mcpgw::redact {

/// One built-in detector.
struct Builtin {
  std::string_view name;
  std::string_view description;
  std::string_view regex;
  /// Matches by context rather than by a token's own shape: a specific
  /// detector (and an operator's pattern) names an overlapping match first.
  bool generic = false;
};

/// Every built-in detector, in the order `mcpgw check` lists them.
std::span<const Builtin> builtins();

/// The built-in detector named `name`, or null.
const Builtin* find_builtin(std::string_view name);

/// The built-in detectors' names, comma-separated (for messages).
std::string builtin_names();

/// Why `regex` is not a valid RE2 pattern; nullopt when it is.
std::optional<std::string> regex_error(const std::string& regex);

}  // namespace mcpgw::redact
