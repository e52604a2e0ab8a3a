#pragma once
// `mcpgw call`: one tools/call through the configured gateway, without a
// client. It opens a session on the router and sends initialize and the
// call as a client would, so the call takes the same path as a client's
// (catalog, modes, filters, chains, plugins, audit).
#include <iosfwd>
#include <string>

#include "config/config.hpp"

namespace mcpgw::server {

/// What to call, and as whom.
struct CallCommand {
  std::string tool;             ///< the exposed name
  std::string arguments = "{}"; ///< a JSON object
  std::string mode;             ///< "" = the default mode
  std::string principal;        ///< "" = none
};

/// Starts the gateway of `cfg`, waits for the upstreams' first attempt,
/// makes the call and prints its result (or JSON-RPC error) as JSON to
/// `out`. Returns the exit code: 0 for a result, 1 for an error result or
/// a JSON-RPC error, 2 when the configuration or the arguments are invalid
/// (told on `err`).
int run_call(config::Config cfg, const CallCommand& call, std::ostream& out, std::ostream& err);

}  // namespace mcpgw::server
