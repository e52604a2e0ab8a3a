#pragma once
// How upstream tool names and descriptions are exposed to clients.
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace mcpgw::catalog {

/// `<server><separator><tool>`, or `tool` alone for a server with prefix: false.
std::string exposed_name(const config::Naming& n, std::string_view server, std::string_view tool, bool prefix);

/// The description prefix with `{server}` replaced, followed by `description`.
/// Without a description the prefix alone is returned, trailing space trimmed.
std::string exposed_description(const config::Naming& n, std::string_view server,
                                std::string_view description);

}  // namespace mcpgw::catalog
