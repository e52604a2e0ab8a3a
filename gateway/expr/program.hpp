#pragma once
// The expression language of policies (`allow` / `deny`): a subset of CEL,
// compiled once (lexer, parser, checker) into a flat program whose
// evaluation reads the call's values in place, without building documents.
// No I/O: the caller hands in every value through an Env.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"
#include "util/result.hpp"

namespace mcpgw::expr {

/// The values an expression may name, each a field of a variable
/// (`principal.name`) or a variable of its own (`args`, `mode`).
enum class Field : std::uint8_t {
  PrincipalName,
  PrincipalClaims,
  PrincipalScopes,
  ToolName,
  ToolServer,
  ToolUpstreamName,
  ToolAnnotations,
  ToolSlices,
  Args,
  Mode,
  ClientName,
  ClientVersion,
};

/// What one evaluation reads; everything is borrowed for its duration. A
/// null JSON pointer is an empty map.
struct Env {
  std::string_view principal_name;
  const json::Value* claims = nullptr;
  std::span<const std::string> scopes;
  std::string_view tool_name, tool_server, tool_upstream_name;
  const json::Value* annotations = nullptr;
  std::span<const std::string> slices;
  const json::Value* args = nullptr;
  /// The arguments are not known (a listing): `args` evaluates to unknown,
  /// and what depends on it stays unknown.
  bool args_unknown = false;
  std::string_view mode, client_name, client_version;
};

/// What an expression came to.
enum class Truth : std::uint8_t {
  False,
  True,
  Unknown,  ///< depends on what Env::args_unknown hides
  Error,    ///< a missing field, a wrong type, a non-boolean result
};

/// An evaluation's result; `error` and `column` say why for Truth::Error.
struct Outcome {
  Truth truth = Truth::Error;
  std::string_view error;
  std::uint32_t column = 0;  ///< 1-based column in the source
};

struct Impl;

/// A compiled expression: immutable, shared by every evaluation, on any thread.
class Program {
 public:
  /// Compiles `source`; the error says where (`column N: ...`) and what:
  /// a syntax error, an unknown variable, field or function, a wrong type
  /// known from the source, an invalid regular expression, or an expression
  /// that is not a boolean.
  static Result<std::shared_ptr<const Program>> compile(std::string_view source);

  explicit Program(std::unique_ptr<Impl> impl);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  /// Evaluates the expression under `env`. Never throws; allocates only for
  /// strings joined with `+` and lists or maps built from non-constant parts.
  Outcome eval(const Env& env) const;
  /// Whether the expression reads `f` (the caller skips preparing the rest).
  bool uses(Field f) const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpgw::expr
