#pragma once
// Slices and the filter decision (seed 002's order), shared by the global
// filters, per-server overrides and modes.
#include <string>
#include <vector>

#include "config/config.hpp"
#include "jsonrpc/json.hpp"

namespace mcpgw::catalog {

/// The slices of one upstream tool, from the first source that gives any:
/// the server's `slices` globs (over the upstream name), the tool's
/// `_meta.slices`, `annotations.readOnlyHint` (read), `destructiveHint`
/// (delete); else `other`.
std::vector<std::string> slices_of(const config::Server* server, std::string_view upstream_name,
                                   const json::Value& tool);

/// Whether a tool passes `f`: an excluded tool is out; a non-empty
/// include_tools list decides alone; an excluded slice is out; a non-empty
/// include_slices needs one of the tool's slices (a tool whose only slice is
/// `other` passes only when `other` is included). Tool globs match the
/// exposed name and, when `upstream` is not empty (a server's own filters),
/// also the name the server gives the tool.
bool passes(const config::Filters& f, std::string_view exposed, std::string_view upstream,
            const std::vector<std::string>& slices);

}  // namespace mcpgw::catalog
