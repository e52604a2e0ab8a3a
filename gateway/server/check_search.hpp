#pragma once
// The tool search part of `mcpgw check`: each mode's discovery setting, and
// what a query (`--search "QUERY"`) finds in each mode, so an operator can
// tune descriptions.
#include <optional>
#include <ostream>
#include <string>

#include "catalog/catalog.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::server {

/// Adds `discovery` ([{mode, discovery}]) and, with a query, `search`
/// ({query, modes: [{mode, tools: [{name, score}]}]}) to the JSON report `d`.
void add_search_report(const catalog::Snapshot& s, const std::optional<std::string>& query, json::Document& d);

/// Prints the same as text.
void print_search_report(const catalog::Snapshot& s, const std::optional<std::string>& query, std::ostream& out);

}  // namespace mcpgw::server
