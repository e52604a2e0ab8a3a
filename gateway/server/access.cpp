#include "server/access.hpp"

#include <algorithm>

namespace mcpgw::server {

auth::AccessSettings access_settings(const config::Config& cfg) {
  auth::AccessSettings a;
  a.enabled = cfg.auth.enabled;
  a.default_mode = cfg.default_mode;
  for (const auto& t : cfg.auth.bearer_tokens) a.bearer_tokens.push_back({t.token, t.name, t.modes});
  if (const auto& o = cfg.auth.oauth) {
    a.oauth = auth::OAuthSettings{o->issuer,          o->audience,        o->jwks_url,        o->jwks_file,
                                  o->authorization_servers, o->required_scopes, o->scope_modes, o->principal_claim,
                                  o->leeway_s};
  }
  return a;
}

auth::LimitSettings limit_settings(const config::Config& cfg) {
  const auto& l = cfg.limits;
  return {static_cast<double>(l.calls_per_s), l.burst, l.max_in_flight_per_session, l.max_sessions,
          l.max_batch_size, l.batch_concurrency};
}

std::vector<std::string> forwarded_header_names(const config::Config& cfg) {
  std::vector<std::string> out;
  for (const auto& s : cfg.servers)
    for (const auto& h : s.forward_headers)
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

}  // namespace mcpgw::server
