#include "auth/access.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>

namespace mcpgw::auth {
namespace {

using Outcome = Verdict::Outcome;

Verdict invalid(std::string why) {
  Verdict v;
  v.outcome = Outcome::Invalid;
  v.description = std::move(why);
  v.oauth = true;
  return v;
}

/// A NumericDate claim; nullopt when absent, an error when not a number.
Result<std::optional<std::int64_t>> numeric_date(const json::Value& claims, std::string_view name) {
  const json::Value* v = json::find(claims, name);
  if (!v) return std::optional<std::int64_t>();
  if (!v->IsNumber()) return Error{"claim " + std::string(name) + " is not a number"};
  double d = v->GetDouble();
  if (!(d > -1e15 && d < 1e15)) return Error{"claim " + std::string(name) + " is out of range"};
  return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
}

}  // namespace

std::vector<std::string> scopes_of(const json::Value& claims) {
  std::vector<std::string> out;
  if (auto scope = json::get_string(claims, "scope")) {
    std::string_view rest = *scope;
    while (!rest.empty()) {
      auto sp = rest.find(' ');
      if (sp != 0) out.emplace_back(rest.substr(0, sp));
      if (sp == std::string_view::npos) break;
      rest.remove_prefix(sp + 1);
    }
  } else if (const json::Value* scp = json::find(claims, "scp"); scp && scp->IsArray()) {
    for (const auto& s : scp->GetArray())
      if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

namespace {

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool audience_matches(const json::Value& claims, const std::string& audience) {
  const json::Value* aud = json::find(claims, "aud");
  if (!aud) return false;
  if (aud->IsString()) return std::string_view(aud->GetString(), aud->GetStringLength()) == audience;
  if (!aud->IsArray()) return false;
  for (const auto& a : aud->GetArray())
    if (a.IsString() && std::string_view(a.GetString(), a.GetStringLength()) == audience) return true;
  return false;
}

}  // namespace

std::string Verifier::scopes_for_mode(std::string_view mode) const {
  if (!s_.oauth) return "";
  std::string m(mode.empty() ? std::string_view(s_.default_mode) : mode);
  std::string out;
  for (const auto& [scope, modes] : s_.oauth->scope_modes) {
    if (!contains(modes, m) && !contains(modes, "all")) continue;
    if (!out.empty()) out += ' ';
    out += scope;
  }
  return out;
}

Verdict Verifier::check_jwt(std::string_view token, const KeySet* keys, std::int64_t now_s) const {
  const OAuthSettings& o = *s_.oauth;
  auto jwt = parse_jwt(token);
  if (!jwt) return invalid(jwt.error());
  const Jwk* jwk = keys ? keys->find(jwt->kid) : nullptr;
  if (!jwk) {
    Verdict v = invalid("unknown key id " + json::quote(jwt->kid));
    v.outcome = Outcome::UnknownKey;
    return v;
  }
  if (!jwk->alg.empty() && jwk->alg != alg_name(jwt->alg))
    return invalid("the key " + json::quote(jwt->kid) + " is for " + jwk->alg + ", not " +
                   std::string(alg_name(jwt->alg)));
  if (!verify_signature(*jwt, jwk->key.get())) return invalid("invalid signature");
  const json::Value& c = jwt->claims;
  auto exp = numeric_date(c, "exp");
  auto nbf = numeric_date(c, "nbf");
  if (!exp) return invalid(exp.error());
  if (!nbf) return invalid(nbf.error());
  // A token that never expires is not one a resource server should honour.
  if (!*exp) return invalid("the token has no exp");
  if (now_s > **exp + o.leeway_s) return invalid("the token expired");
  if (*nbf && now_s + o.leeway_s < **nbf) return invalid("the token is not valid yet (nbf)");
  if (json::get_string(c, "iss") != o.issuer) return invalid("wrong issuer (expected " + json::quote(o.issuer) + ")");
  if (!audience_matches(c, o.audience))
    return invalid("wrong audience (expected " + json::quote(o.audience) + ")");
  auto principal = json::get_string(c, o.principal_claim);
  if (!principal || principal->empty())
    return invalid("the token has no " + o.principal_claim + " claim (principal_claim)");
  auto scopes = scopes_of(c);
  Verdict v;
  v.oauth = true;
  v.principal = std::string(*principal);
  std::string missing;
  for (const auto& r : o.required_scopes) {
    if (contains(scopes, r)) continue;
    if (!missing.empty()) missing += ' ';
    missing += r;
  }
  if (!missing.empty()) {
    v.outcome = Outcome::InsufficientScope;
    v.scope = missing;
    v.description = "the token lacks the scope " + missing;
    return v;
  }
  v.outcome = Outcome::Admitted;
  v.valid_until = **exp + o.leeway_s;
  v.claims = std::make_shared<const json::Document>(json::clone(c));
  v.scopes = scopes;
  if (!o.scope_modes.empty()) {
    for (const auto& [scope, modes] : o.scope_modes) {
      if (!contains(scopes, scope)) continue;
      for (const auto& m : modes)
        if (!contains(v.modes, m)) v.modes.push_back(m);
    }
    if (contains(v.modes, "all")) v.modes.clear();
    else if (v.modes.empty()) {
      v.outcome = Outcome::InsufficientScope;
      v.description = "no scope of the token opens a mode";
    }
  }
  return v;
}

Verdict Verifier::check(std::string_view authorization, std::string_view mode, const KeySet* keys,
                        std::int64_t now_s) const {
  Verdict v = identify(authorization, keys, now_s);
  restrict_to_mode(v, mode);
  return v;
}

Verdict Verifier::identify(std::string_view authorization, const KeySet* keys, std::int64_t now_s) const {
  Verdict v;
  if (!s_.enabled) return v;
  v.outcome = Outcome::Missing;
  auto sp = authorization.find(' ');
  std::string scheme(authorization.substr(0, sp));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (sp == std::string_view::npos || scheme != "bearer") return v;
  std::string_view tok = authorization.substr(sp + 1);
  while (!tok.empty() && tok.front() == ' ') tok.remove_prefix(1);
  if (tok.empty()) return v;
  // Compare against every static token in constant time so timing reveals nothing.
  const BearerCredential* found = nullptr;
  for (const auto& c : s_.bearer_tokens)
    if (c.token.size() == tok.size() && CRYPTO_memcmp(c.token.data(), tok.data(), tok.size()) == 0) found = &c;
  if (found) {
    v.outcome = Outcome::Admitted;
    v.principal = found->principal;
    v.modes = found->modes;
  } else if (s_.oauth) {
    v = check_jwt(tok, keys, now_s);
  } else {
    v.outcome = Outcome::Invalid;
    v.description = "unknown bearer token";
  }
  return v;
}

void Verifier::restrict_to_mode(Verdict& v, std::string_view mode) const {
  if (v.outcome != Outcome::Admitted || v.modes.empty()) return;
  std::string m(mode.empty() ? std::string_view(s_.default_mode) : mode);
  if (contains(v.modes, m)) return;
  v.outcome = Outcome::InsufficientScope;
  v.scope = v.oauth ? scopes_for_mode(m) : "";
  v.description = "principal " + json::quote(v.principal) + " may not use mode " + json::quote(m);
}

}  // namespace mcpgw::auth
