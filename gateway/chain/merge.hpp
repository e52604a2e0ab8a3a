#pragma once
// The one result a client gets for a nextTool chain (docs/protocol.md "nextTool
// chains"). Clients differ in what they show the model: some show
// `content`, Claude Code and Codex show only `structuredContent` when it is
// there, and the official SDK clients reject a `structuredContent` that does
// not conform to the called tool's `outputSchema` (and one missing when the
// tool declares a schema). The merge is built so that every one of them
// works and sees every hop.
#include <string>
#include <vector>

#include "catalog/hops_schema.hpp"
#include "config/config.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::chain {

/// One call of a chain: the client's own call, or a hop the gateway made.
struct Call {
  std::string tool;  ///< the exposed name
  json::Document arguments{rapidjson::kObjectType};
  json::Document result;
  bool is_error = false;
  double ms = 0;
};

/// A hop the gateway refused, and the text saying which and why.
struct Refusal {
  std::string text;
  Call hop;
};

/// The key under which a conforming `structuredContent` carries the text of
/// every call the content shows, for clients that show only
/// `structuredContent` (added only where the called tool's schema admits it:
/// an open schema, or one whose listing declares the key).
using catalog::kHopsKey;

/// Merges `calls` (the client's own first; at least one) and the refusal
/// that ended the chain early, if any, into one result. `output_schema` is
/// the called tool's `outputSchema` as listed, or null.
json::Document merge(const std::vector<Call>& calls, const Refusal* refusal,
                     const json::Value* output_schema, config::Chain::Merge mode);

/// Whether `value` conforms to `schema` (RapidJSON's validator, draft-04
/// keywords; unknown keywords are ignored).
bool conforms(const json::Value& schema, const json::Value& value);

/// Whether every object valid against `schema` stays valid with one more
/// property named `key` of any value: the schema is a plain object schema
/// (no composition, references, pattern or name rules, closed or counted
/// properties) that does not describe `key` itself. Unknown keywords answer
/// no, so a client validating with a later draft cannot disagree.
bool admits_extra_property(const json::Value& schema, std::string_view key);

}  // namespace mcpgw::chain
