#pragma once
// `mcpgw/hops` in a listed outputSchema. When the gateway merges a nextTool
// chain it carries every hop's text in the called tool's structuredContent
// under this key, for clients that show the model only structuredContent
// (Claude Code, Codex); declaring the key as an optional property in the
// listed schema lets a closed schema (`additionalProperties: false`) accept
// it, so such clients show every hop whatever the schema.
#include <string_view>

#include "jsonrpc/json.hpp"

namespace mcpgw::catalog {

/// The key under which a conforming `structuredContent` carries the text of
/// every call the merged content shows.
inline constexpr std::string_view kHopsKey = "mcpgw/hops";

/// Declares kHopsKey as an optional property of object schema `schema`,
/// when the schema is plain enough that the declaration alone decides
/// (only annotations, `type`, `required`, `properties`, `additionalProperties`,
/// `unevaluatedProperties`, `minProperties`, `$defs`) and does not name the
/// key already; otherwise leaves it as it is. Returns whether it declared.
bool declare_hops(json::Value& schema, json::Allocator& a);

/// Whether `schema` carries the declaration declare_hops adds (so a value
/// with the key conforms wherever it conformed without it).
bool declares_hops(const json::Value& schema);

}  // namespace mcpgw::catalog
