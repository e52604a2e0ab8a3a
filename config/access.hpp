#pragma once
// Reading the access sections of gateway.yaml: auth.oauth, limits, admin
// (a part of config.cpp's schema, kept apart by subject).
#include <functional>

#include "config/config.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

/// An http:// or https:// URL (`https_only`: https://) with a host.
std::string url_of(const yaml::Value& v, bool https_only);
/// True for an http:// URL whose host is not loopback.
bool clear_text_remote(const std::string& url);
/// url_of, and plain http only for a loopback host (what the gateway
/// fetches or sends secrets to must not travel in clear text).
std::string secure_url_of(const yaml::Value& v);
/// `auth.oauth`; `known_mode` checks the modes named in scope_modes.
OAuth read_oauth(const yaml::Value& v, const std::function<bool(const std::string&)>& known_mode);
/// `limits`.
Limits read_limits(const yaml::Value& v);
/// `admin`.
Admin read_admin(const yaml::Value& v);

}  // namespace mcpgw::config
