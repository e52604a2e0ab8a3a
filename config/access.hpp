#pragma once
// Reading the access sections of gateway.yaml: auth.oauth, limits, admin
// (a part of config.cpp's schema, kept apart by subject).
#include <functional>

#include "config/config.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

/// `auth.oauth`; `known_mode` checks the modes named in scope_modes.
OAuth read_oauth(const yaml::Value& v, const std::function<bool(const std::string&)>& known_mode);
/// `limits`.
Limits read_limits(const yaml::Value& v);
/// `admin`.
Admin read_admin(const yaml::Value& v);

}  // namespace mcpgw::config
