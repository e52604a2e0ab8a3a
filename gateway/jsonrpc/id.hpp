#pragma once
// A JSON-RPC id exactly as its sender wrote it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::jsonrpc {

/// The id of a request or response as JSON text: a string, a number or
/// null. A number keeps the digits its sender wrote, so an integer beyond a
/// double's precision (or `1.50`, `1e2`) is answered under the very id the
/// client sent, and two such ids never collide as keys.
class Id {
 public:
  /// The null id (of a reply to a message whose id could not be read).
  Id() = default;
  /// The id `v` holds; a number is written back as RapidJSON parsed it.
  Id(const json::Value& v);  // NOLINT(google-explicit-constructor): every id value is an id
  /// A number whose text `digits` was checked to be a JSON number.
  static Id number(std::string_view digits);

  /// The id as JSON text (`"abc"`, `42`, `null`).
  std::string_view json() const { return text_.empty() ? std::string_view("null") : std::string_view(text_); }
  bool is_null() const { return text_.empty(); }
  bool is_string() const { return !text_.empty() && text_.front() == '"'; }
  /// The string of a string id, unescaped.
  std::optional<std::string> string() const;
  /// The value of an integer id that fits 64 bits.
  std::optional<std::int64_t> int64() const;
  /// The id as a value in a document of `a` (a number as RapidJSON reads it).
  json::Value value(json::Allocator& a) const;

  friend bool operator==(const Id&, const Id&) = default;

 private:
  std::string text_;  ///< empty = null
};

}  // namespace mcpgw::jsonrpc
