#pragma once
// `mcpgw pins list` and `mcpgw pins approve`: the pins in the configured
// store (integrity.store or Redis), read and changed without a running
// gateway; a running one sees an approval at once (it watches the store).
#include <ostream>

#include "config/config.hpp"
#include "integrity/pins.hpp"

namespace mcpgw::server {

/// Prints every pinned or waiting tool (server, tool, state, when, what
/// changed); `as_json` as a JSON array. Returns the exit code (0, or 1 when
/// the store cannot be read or there is none).
int run_pins_list(const config::Config& cfg, bool as_json, std::ostream& out, std::ostream& err);

/// Accepts the listed definitions of `sel` as the pins and prints each
/// one approved. Returns the exit code (0, or 1 for a name the store does
/// not have or a store that cannot be read or written).
int run_pins_approve(const config::Config& cfg, const integrity::Selection& sel, std::ostream& out, std::ostream& err);

}  // namespace mcpgw::server
