#pragma once
// Reading the OAuth client sections of gateway.yaml: servers[].oauth and
// upstream_oauth (a part of config.cpp's schema, kept apart by subject).
#include <optional>

#include "config/config.hpp"
#include "config/yaml_value.hpp"

namespace mcpgw::config {

/// `servers[].oauth` of server `s` (its transport, url and headers read
/// already); `auth` is the file's `auth` section (token_exchange needs
/// auth.oauth).
ServerOAuth read_server_oauth(const yaml::Value& v, const Server& s, const Auth& auth);
/// `upstream_oauth`.
UpstreamOAuth read_upstream_oauth(const yaml::Value& v);
/// The checks across sections, once everything is read: tokens kept at rest
/// (a store file, or Redis) need a key. `section` is `upstream_oauth` when
/// the file has it; `first_code_grant` the oauth section of the first
/// authorization_code server (where a missing key is reported otherwise).
void check_upstream_oauth(const Config& c, const std::optional<yaml::Value>& section,
                          const std::optional<yaml::Value>& first_code_grant);

}  // namespace mcpgw::config
