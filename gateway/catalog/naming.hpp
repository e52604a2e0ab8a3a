#pragma once
// How upstream tool names and descriptions are exposed to clients.
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace mcpgw::catalog {

/// `<server><separator><tool>`, or `tool` alone for a server with prefix: false.
std::string exposed_name(const config::Naming& n, std::string_view server, std::string_view tool, bool prefix);

/// `name` when it fits `max_length` (0 = no limit), else a deterministic
/// shortening: a readable prefix, "-", and 10 hex digits of SHA-256 of the
/// full name, `max_length` characters in all. Stable across runs and builds.
std::string shorten(std::string_view name, int max_length);

/// The description prefix with `{server}` replaced, followed by `description`.
/// Without a description the prefix alone is returned, trailing space trimmed.
std::string exposed_description(const config::Naming& n, std::string_view server,
                                std::string_view description);

/// Within the MCP recommendation for tool names: [A-Za-z0-9_.-]{1,128}.
bool mcp_recommended_name(std::string_view name);
/// Within what several popular clients enforce: [A-Za-z0-9_-]{1,64}.
bool strict_client_name(std::string_view name);

/// Shell-style glob: `*` any run, `?` one character, everything else literal.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace mcpgw::catalog
