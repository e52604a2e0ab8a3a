#pragma once
// The compiled form of an expression, shared by the checker (compile.cpp,
// which writes it) and the evaluator (eval.cpp, which runs it): a flat
// array of nodes referring to each other by index, constants and regular
// expressions made once.
#include <re2/re2.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/program.hpp"

namespace mcpgw::expr {

/// A value during evaluation: a scalar, or a borrowed JSON list or map, or
/// a borrowed list of strings; never owns anything.
struct Value {
  enum class Kind : std::uint8_t { Null, Bool, Number, String, Json, Strings, Unknown, Error };
  Kind kind = Kind::Null;
  bool b = false;
  std::uint32_t column = 0;  ///< Error: where
  double n = 0;
  std::string_view s;               ///< String; Error: the message
  const json::Value* j = nullptr;   ///< Json: an array or an object
  std::span<const std::string> strs;  ///< Strings

  static Value boolean(bool v) {
    Value r;
    r.kind = Kind::Bool;
    r.b = v;
    return r;
  }
  static Value number(double v) {
    Value r;
    r.kind = Kind::Number;
    r.n = v;
    return r;
  }
  static Value string(std::string_view v) {
    Value r;
    r.kind = Kind::String;
    r.s = v;
    return r;
  }
  static Value unknown() {
    Value r;
    r.kind = Kind::Unknown;
    return r;
  }
  static Value error(std::string_view why, std::uint32_t column) {
    Value r;
    r.kind = Kind::Error;
    r.s = why;
    r.column = column;
    return r;
  }
  /// A JSON value as the language sees it (arrays and objects borrowed).
  static Value of(const json::Value& v);
};

enum class Op : std::uint8_t {
  Const,
  Var,
  Local,
  Select,
  Index,
  Has,
  Not,
  Neg,
  And,
  Or,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  In,
  Add,
  Sub,
  Mul,
  Div,
  Size,
  StartsWith,
  EndsWith,
  Contains,
  Matches,
  Exists,
  All,
  List,
  Map,
};

/// One node of the program. Children are indices into Impl::nodes; a
/// list's or map's are `count` entries of Impl::operands from `first`.
struct Node {
  Op op = Op::Const;
  Field field = Field::Args;  ///< Var
  std::uint8_t slot = 0;      ///< Local, Exists, All: the comprehension variable
  std::uint32_t column = 0;
  std::int32_t a = -1, b = -1;
  std::uint32_t first = 0, count = 0;
  std::uint32_t index = 0;  ///< Const: constant; Matches: regex
  std::string_view name;    ///< Select, Has: the field
};

/// Deepest nesting of `exists` / `all`.
inline constexpr std::size_t kMaxLocals = 8;

struct Impl {
  std::vector<Node> nodes;
  std::vector<std::int32_t> operands;
  std::vector<Value> constants;
  std::vector<std::unique_ptr<RE2>> regexes;
  /// Own what constants and names point into (deques: they never move
  /// what they hold).
  std::deque<std::string> texts;
  json::Pool pool;
  std::deque<json::Value> literals;
  std::int32_t root = -1;
  std::uint32_t fields = 0;  ///< bit per Field read
};

}  // namespace mcpgw::expr
