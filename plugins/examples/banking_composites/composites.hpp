#pragma once
// The banking composites of the example configuration, one file each; the
// plugin (plugin.cpp) registers them with their part of its config.
#include <mcpgw/plugin.hpp>

namespace banking {

/// Seed 002's composite: one upstream call, its structured result plus a
/// source marker and, on request, a timestamp.
void add_get_chained_info(mcpgw::Plugin& plugin, const mcpgw::Json& config);

/// Two upstreams called in parallel and merged; one failing side gives a
/// partial answer that says which.
void add_account_overview(mcpgw::Plugin& plugin, const mcpgw::Json& config);

/// Validation before a call, and a handoff via nextTool when policy says no.
void add_safe_transfer(mcpgw::Plugin& plugin, const mcpgw::Json& config);

/// `config[key]` as a string, or `def` when absent; throws when present but
/// not a string (a typo in gateway.yaml should fail the load, not a call).
std::string setting(const mcpgw::Json& config, const char* key, const char* def);

}  // namespace banking
