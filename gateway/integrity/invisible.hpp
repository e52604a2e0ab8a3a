#pragma once
// Characters a person does not see and a model reads: Unicode tag
// characters (U+E0000-E007F), zero-width and other invisible formatting
// characters, bidi controls, and terminal escape sequences and other
// control characters. `integrity.strip_invisible` removes them from what
// the gateway lists.
#include <cstddef>
#include <string>
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::integrity {

/// Removes every invisible character and escape sequence from `text`
/// (valid UTF-8 or not: bytes that are not part of one are kept); returns
/// how many were removed (an escape sequence counts once). Tab, line feed
/// and carriage return stay.
std::size_t strip_invisible(std::string& text);

/// Strips a Tool's name, title, description and annotations.title and
/// every `title` and `description` inside its input and output schemas;
/// returns how many characters and sequences were removed.
std::size_t strip_tool(json::Value& tool, json::Allocator& a);

/// Strips a prompt's, resource's or resource template's name, title and
/// description (a prompt's arguments' too); returns how many were removed.
std::size_t strip_entry(json::Value& entry, json::Allocator& a);

}  // namespace mcpgw::integrity
