#pragma once
// The `auth`, `limits` and `servers[].forward_headers` parts of the
// configuration, in the form the transport's admission takes.
#include <string>
#include <vector>

#include "auth/access.hpp"
#include "auth/rate_limit.hpp"
#include "config/config.hpp"

namespace mcpgw::server {

/// `auth` (and default_mode, to check a principal's modes).
auth::AccessSettings access_settings(const config::Config& cfg);
/// `limits`.
auth::LimitSettings limit_settings(const config::Config& cfg);
/// Every header some server forwards, once each.
std::vector<std::string> forwarded_header_names(const config::Config& cfg);

}  // namespace mcpgw::server
