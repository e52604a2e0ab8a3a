#pragma once
// The syntax of the expression language: source text to a tree (lexer and
// recursive-descent parser with CEL's precedence). Names are not resolved
// here: the checker (compile.cpp) does that.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace mcpgw::expr {

/// One node of the syntax tree.
struct Ast {
  enum class Kind : std::uint8_t {
    Null,
    Bool,
    Number,
    String,
    Ident,   ///< text: the name
    Select,  ///< kids[0].text
    Index,   ///< kids[0][kids[1]]
    Call,    ///< text: the function; target (a method's receiver) may be null; kids: the arguments
    Unary,   ///< text: "!" or "-"; kids[0]
    Binary,  ///< text: the operator; kids[0] op kids[1]
    List,    ///< kids: the elements
    Map,     ///< kids: key, value, key, value...
  };
  Kind kind = Kind::Null;
  std::uint32_t column = 0;  ///< 1-based
  std::string text;
  bool boolean = false;
  double number = 0;
  std::unique_ptr<Ast> target;
  std::vector<std::unique_ptr<Ast>> kids;
};

/// Longest source accepted, and deepest nesting: a bound on the parser's and
/// the evaluator's recursion whatever the input.
inline constexpr std::size_t kMaxSource = 16 * 1024;
inline constexpr int kMaxDepth = 100;

/// Parses `source`; the error is `column N: what`.
Result<std::unique_ptr<Ast>> parse(std::string_view source);

}  // namespace mcpgw::expr
