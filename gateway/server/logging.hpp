#pragma once
// Log set-up: everything goes to stderr (stdout may carry the protocol).
#include <string>

#include "util/result.hpp"

namespace mcpgw::server {

/// Configures the default logger. `level`: trace|debug|info|warn|error;
/// `format`: text|json (one JSON object per line).
Result<void> setup_logging(const std::string& level, const std::string& format);

}  // namespace mcpgw::server
