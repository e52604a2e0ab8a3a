#include "config/oauth.hpp"

#include <algorithm>
#include <cctype>

#include "config/access.hpp"
#include "config/keys.hpp"

namespace mcpgw::config {

using namespace yaml;

namespace {

using Grant = ServerOAuth::Grant;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const char* grant_name(Grant g) {
  switch (g) {
    case Grant::ClientCredentials: return "client_credentials";
    case Grant::AuthorizationCode: return "authorization_code";
    case Grant::TokenExchange: return "token_exchange";
  }
  return "?";
}

/// The client authentication: a secret or a private key, not both; `needed`
/// for a confidential-only grant.
void read_client_auth(const Fields& f, ServerOAuth& o, const Value& v, bool needed) {
  auto secret = f.get("client_secret");
  auto key = f.get("private_key_file");
  if (secret && key) key->fail("give client_secret or private_key_file (private_key_jwt), not both");
  if (secret) o.client_secret = secret->non_empty_text();
  if (key) {
    key->non_empty_text();
    o.private_key_file = key->path();
  }
  if (needed && !secret && !key)
    v.fail(std::string("grant ") + grant_name(o.grant) +
           " needs the gateway's own credentials: client_secret or private_key_file");
  if ((secret || key) && o.client_id.empty())
    (secret ? *secret : *key).fail("a client secret or key needs the client_id it belongs to");
}

}  // namespace

ServerOAuth read_server_oauth(const Value& v, const Server& s, const Auth& auth) {
  ServerOAuth o;
  Fields f = v.fields(keys::kServerOAuth);
  if (s.transport != Server::Transport::Http) v.fail("oauth applies to transport: http servers");
  for (const auto& [name, value] : s.headers)
    if (lower(name) == "authorization")
      v.fail("oauth and a static Authorization header exclude each other (the gateway sets Authorization)");
  if (clear_text_remote(s.url))
    v.fail("an upstream with oauth needs an https:// url (a token must not travel in clear text); plain http only "
           "for a loopback host, got " + quote(s.url));
  o.grant = f.required("grant").one_of<Grant>({{"client_credentials", Grant::ClientCredentials},
                                               {"authorization_code", Grant::AuthorizationCode},
                                               {"token_exchange", Grant::TokenExchange}});
  if (auto id = f.get("client_id")) o.client_id = id->non_empty_text();
  if (auto cimd = f.get("client_id_metadata_url")) {
    if (o.grant != Grant::AuthorizationCode) cimd->fail("client_id_metadata_url applies to grant authorization_code");
    if (!o.client_id.empty()) cimd->fail("give client_id or client_id_metadata_url (which is the client_id), not both");
    o.client_id_metadata_url = url_of(*cimd, true);
    // The document's URL names it: it needs a path (draft-ietf-oauth-client-id-metadata-document).
    auto path = o.client_id_metadata_url.find('/', 8);
    if (path == std::string::npos || path + 1 == o.client_id_metadata_url.size())
      cimd->fail("expected an https:// URL with a path (where the gateway serves the document), got " +
                 quote(o.client_id_metadata_url));
  }
  if (o.grant != Grant::AuthorizationCode && o.client_id.empty()) f.required("client_id");
  read_client_auth(f, o, v, o.grant != Grant::AuthorizationCode);
  if (auto scopes = f.get("scopes")) {
    for (const Value& item : scopes->items()) {
      std::string scope = item.non_empty_text();
      if (scope.find_first_of(" \t\"\\") != std::string::npos) item.fail("expected one scope (no spaces), got " + quote(scope));
      o.scopes.push_back(std::move(scope));
    }
  }
  if (auto issuer = f.get("issuer")) o.issuer = secure_url_of(*issuer);
  if (auto token = f.get("token_endpoint")) o.token_endpoint = secure_url_of(*token);
  if (auto authz = f.get("authorization_endpoint")) {
    if (o.grant != Grant::AuthorizationCode) authz->fail("authorization_endpoint applies to grant authorization_code");
    o.authorization_endpoint = secure_url_of(*authz);
  }
  if (o.grant == Grant::TokenExchange && !auth.oauth)
    f.get("grant")->fail("token_exchange exchanges the client's own OAuth token: auth.oauth must be set");
  return o;
}

UpstreamOAuth read_upstream_oauth(const Value& v) {
  UpstreamOAuth u;
  Fields f = v.fields(keys::kUpstreamOAuth);
  if (auto redirect = f.get("redirect_url"); redirect && !redirect->text().empty()) u.redirect_url = secure_url_of(*redirect);
  if (auto store = f.get("store"); store && !store->text().empty()) u.store = store->path();
  f.read("key", u.key);
  return u;
}

void check_upstream_oauth(const Config& c, const std::optional<Value>& section,
                          const std::optional<Value>& first_code_grant) {
  if (!c.upstream_oauth.store.empty() && !c.cluster.redis.empty())
    section->fail("store: tokens are kept in Redis when cluster.redis is set; remove upstream_oauth.store");
  if (!first_code_grant) return;
  bool at_rest = !c.upstream_oauth.store.empty() || !c.cluster.redis.empty();
  if (at_rest && c.upstream_oauth.key.empty() && c.cluster.secrets.empty()) {
    const Value& at = section ? *section : *first_code_grant;
    at.fail(std::string("the tokens of grant authorization_code are kept encrypted in ") +
            (c.cluster.redis.empty() ? "upstream_oauth.store" : "Redis (cluster.redis)") +
            ": set upstream_oauth.key or cluster.secret");
  }
}

}  // namespace mcpgw::config
