#pragma once
// A tool definition as the model reads it, in one canonical form: what is
// pinned, hashed and compared (docs/operations.md, "Tool integrity").
#include <string>
#include <vector>

#include "jsonrpc/json.hpp"

namespace mcpgw::integrity {

/// The parts of a Tool the model reads, in the order they are compared.
inline constexpr const char* kDefinitionParts[] = {"name",        "title",        "description",
                                                   "inputSchema", "outputSchema", "annotations"};

/// `tool`'s canonical form: the kDefinitionParts it has, as compact JSON
/// with every object's keys sorted, so that two servers writing the same
/// definition in another key order hash the same.
std::string canonical(const json::Value& tool);

/// The digest of a canonical definition ("sha256:<hex>").
std::string digest(std::string_view canonical_definition);

/// What differs from `before` to `after` (both Tool objects), each item a
/// short phrase an operator reads in a log or the audit: "description",
/// "title", "inputSchema: property sidenote added", "annotations.readOnlyHint".
std::vector<std::string> diff(const json::Value& before, const json::Value& after);

}  // namespace mcpgw::integrity
