#pragma once
// `mcpgw revoke`: asks a running gateway to forget the caller's stored
// upstream OAuth tokens (POST /oauth/revoke on its admin listener, or its
// MCP listener without one), authenticated with the caller's own gateway
// credential.
#include <ostream>
#include <string>

#include "config/config.hpp"

namespace mcpgw::server {

/// Revokes the tokens of the principal `token` authenticates (all servers,
/// or `server`) at the gateway `cfg` describes, or at `url` (its
/// /oauth/revoke endpoint). Prints what was revoked to `out`, a failure to
/// `err`; returns the exit code (0 done, 1 refused or unreachable, 2 usage).
int run_revoke(const config::Config& cfg, const std::string& server, const std::string& url, const std::string& token,
               std::ostream& out, std::ostream& err);

}  // namespace mcpgw::server
