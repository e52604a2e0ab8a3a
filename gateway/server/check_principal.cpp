#include "server/check_principal.hpp"

#include <algorithm>

#include "auth/access.hpp"

namespace mcpgw::server {

Result<PrincipalView> principal_view(const config::Config& cfg, const CheckPrincipal& p) {
  PrincipalView v;
  v.subject.principal = p.name;
  const auto& tokens = cfg.auth.bearer_tokens;
  auto token = std::find_if(tokens.begin(), tokens.end(), [&](const config::BearerToken& t) { return t.name == p.name; });
  if (token != tokens.end()) {
    if (!p.claims.empty()) return Error{"--claims: " + p.name + " is a static bearer token's principal, which has no claims"};
    v.modes = token->modes;
    return v;
  }
  if (!cfg.auth.oauth) {
    std::string names;
    for (const auto& t : tokens) names += (names.empty() ? "" : ", ") + t.name;
    return Error{"--principal: no bearer token is named " + json::quote(p.name) +
                 (names.empty() ? std::string(" (auth has none)") : " (auth.bearer_tokens: " + names + ")")};
  }
  if (!p.claims.empty()) {
    auto claims = json::parse(p.claims);
    if (!claims || !claims->IsObject()) return Error{"--claims: expected a JSON object of the token's claims"};
    v.subject.scopes = auth::scopes_of(*claims);
    v.subject.claims = std::make_shared<const json::Document>(std::move(*claims));
  }
  return v;
}

std::vector<std::vector<std::string>> modes_seen(const catalog::Snapshot& snap, const PrincipalView& who,
                                                 std::span<const config::Policy> policies) {
  std::vector<std::vector<std::string>> out(snap.tools.size());
  for (std::size_t m = 0; m < snap.modes.size(); ++m) {
    const std::string& mode = snap.modes[m];
    if (!who.modes.empty() && std::find(who.modes.begin(), who.modes.end(), mode) == who.modes.end()) continue;
    catalog::Subject s = who.subject;
    s.mode = mode;
    for (std::size_t i = 0; i < snap.tools.size(); ++i) {
      const catalog::ExposedTool& t = snap.tools[i];
      if (m < t.in_mode.size() && t.in_mode[m] && catalog::may_allow(policies, s, catalog::view_of(t)))
        out[i].push_back(mode);
    }
  }
  return out;
}

}  // namespace mcpgw::server
