#pragma once
// `mcpgw check`: connect every upstream once and report the catalog.
#include <optional>
#include <ostream>
#include <string>

#include "config/config.hpp"
#include "server/check_principal.hpp"

namespace mcpgw::server {

/// Starts the upstreams of `cfg`, prints the catalog and every problem to
/// `out` (a table, or JSON with `as_json`), stops them. Returns the exit
/// code: 0 when every upstream connected and nothing is in error (warnings
/// are printed but do not fail the check), else 1.
/// With `search`, also what that query finds in each mode; with `as`, the
/// catalog as that principal sees it under the policies.
int run_check(config::Config cfg, bool as_json, std::ostream& out,
              const std::optional<std::string>& search = std::nullopt,
              const std::optional<PrincipalView>& as = std::nullopt);

}  // namespace mcpgw::server
