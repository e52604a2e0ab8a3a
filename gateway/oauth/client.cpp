// Client's tokens: the token requests of each grant, the client's
// authentication, the cache and the store, renewal before expiry and after
// a refusal.
#include "oauth/client.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "oauth/flow.hpp"
#include "util/base64.hpp"
#include "util/hex.hpp"

namespace mcpgw::oauth {
namespace {

using Grant = config::ServerOAuth::Grant;

constexpr const char* kTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange";
constexpr const char* kAccessTokenType = "urn:ietf:params:oauth:token-type:access_token";
constexpr const char* kJwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

/// What discovery may make the gateway fetch (the SSRF guard): loopback
/// only for an upstream itself on loopback; the origins the operator wrote
/// (the upstream, oauth.issuer, oauth.token_endpoint) are the operator's.
Reach reach_of(const config::Server& server) {
  Reach r;
  auto url = transport::Url::parse(server.url);
  r.guard.allow_loopback = url && transport::is_loopback_host(url->host);
  for (const std::string* u : {&server.url, &server.oauth->issuer, &server.oauth->token_endpoint})
    if (auto key = origin_key(*u); !key.empty()) r.trusted.insert(std::move(key));
  return r;
}

}  // namespace

Result<std::shared_ptr<Client>> Client::create(const config::Server& server, std::shared_ptr<Shared> shared) {
  std::shared_ptr<const SigningKey> key;
  if (!server.oauth->private_key_file.empty()) {
    auto loaded = SigningKey::load(server.oauth->private_key_file);
    if (!loaded) return Error{"servers." + server.name + ".oauth: " + loaded.error()};
    key = *loaded;
  }
  return std::make_shared<Client>(server, std::move(shared), std::move(key));
}

Client::Client(const config::Server& server, std::shared_ptr<Shared> shared,
               std::shared_ptr<const SigningKey> key)
    : name_(server.name),
      url_(server.url),
      cfg_(*server.oauth),
      shared_(std::move(shared)),
      key_(std::move(key)),
      fetch_(shared_->io, {server.tls.ca_file, server.tls.verify}, reach_of(server)) {}

std::string_view Client::grant_name() const {
  switch (cfg_.grant) {
    case Grant::ClientCredentials: return "client_credentials";
    case Grant::AuthorizationCode: return "authorization_code";
    case Grant::TokenExchange: return "token_exchange";
  }
  return "?";
}

std::string Client::identity(const std::string& principal) const {
  if (!per_principal()) return "client " + cfg_.client_id;
  return principal.empty() ? "anonymous" : principal;
}

bool Client::fresh(const Tokens& t) {
  if (t.expires_at == 0) return true;  // renewed when the upstream refuses it
  // Renewed a minute before it expires, or half its life for short ones.
  std::int64_t margin = std::clamp<std::int64_t>((t.expires_at - t.obtained_at) / 2, 0, 60);
  return unix_now() + margin < t.expires_at;
}

void Client::set_subject(const std::string& principal, const std::string& subject_token) {
  util::MutexLock lk(mu_);
  subjects_[principal] = subject_token;
}

Task<Client::Outcome> Client::authorization(const std::string& principal, Clock::time_point deadline,
                                            CancelSignal* cancel, const std::string& rejected) {
  auto got = co_await tokens_for(principal, deadline, cancel, rejected);
  if (auto* p = std::get_if<Problem>(&got)) co_return std::move(*p);
  co_return "Bearer " + std::get<Tokens>(got).access_token;
}

Task<std::variant<Tokens, Problem>> Client::tokens_for(const std::string& principal, Clock::time_point deadline,
                                                       CancelSignal* cancel, const std::string& rejected) {
  for (;;) {
    std::optional<Tokens> held;
    auto seen = changed_.generation();
    if (cfg_.grant == Grant::AuthorizationCode) {
      auto s = co_await stored(principal);
      if (!s) co_return Problem{Fault::Failed, "the token store failed: " + s.error()};
      held = *s;
    } else {
      util::MutexLock lk(mu_);
      if (auto it = cache_.find(principal); it != cache_.end()) held = it->second;
    }
    bool refused = held && !rejected.empty() && "Bearer " + held->access_token == rejected;
    if (held && fresh(*held) && !refused) co_return *held;
    bool mine = false;
    {
      util::MutexLock lk(mu_);
      mine = renewing_.insert(principal).second;
    }
    if (!mine) {
      // Another call renews it: its outcome is this one's too.
      if (!co_await changed_.wait(seen, deadline, cancel))
        co_return Problem{Fault::Failed, "OAuth token step: no token in time (a renewal is under way)"};
      continue;
    }
    auto got = co_await obtain(principal, held, deadline, cancel);
    {
      util::MutexLock lk(mu_);
      renewing_.erase(principal);
    }
    changed_.notify();
    co_return got;
  }
}

Task<std::variant<Tokens, Problem>> Client::obtain(const std::string& principal, const std::optional<Tokens>& held,
                                                   Clock::time_point deadline, CancelSignal* cancel) {
  if (cfg_.grant == Grant::AuthorizationCode) {
    if (held && !held->refresh_token.empty()) co_return co_await refresh(principal, *held, deadline, cancel);
    if (held) co_await forget(principal);
    co_return Problem{Fault::ConsentRequired, "no token for this principal at upstream " + name_};
  }
  auto ep = co_await endpoints(deadline, cancel);
  if (!ep) co_return Problem{Fault::Failed, ep.error()};
  Params params;
  if (cfg_.grant == Grant::ClientCredentials) {
    params = {{"grant_type", "client_credentials"}};
  } else {
    std::string subject;
    {
      util::MutexLock lk(mu_);
      if (auto it = subjects_.find(principal); it != subjects_.end()) subject = it->second;
    }
    if (subject.empty())
      co_return Problem{Fault::NoSubjectToken,
                        "grant token_exchange exchanges the client's own OAuth token, and this client authenticated "
                        "without one (a static bearer token, or no auth)"};
    // RFC 8693 §2.1: the client's token, for one whose audience is the upstream.
    params = {{"grant_type", kTokenExchange},
              {"subject_token", subject},
              {"subject_token_type", kAccessTokenType},
              {"requested_token_type", kAccessTokenType}};
  }
  if (!ep->scopes.empty()) params.emplace_back("scope", join_scopes(ep->scopes));
  auto got = co_await token_request(std::move(params), cfg_.client_id, *ep, deadline, cancel);
  if (auto* f = std::get_if<TokenFailure>(&got)) co_return Problem{Fault::Failed, f->message};
  Tokens t = std::get<Tokens>(got);
  {
    util::MutexLock lk(mu_);
    cache_[principal] = t;
  }
  co_return t;
}

Task<std::variant<Tokens, Problem>> Client::refresh(const std::string& principal, const Tokens& held,
                                                    Clock::time_point deadline, CancelSignal* cancel) {
  auto ep = co_await endpoints(deadline, cancel);
  if (!ep) co_return Problem{Fault::Failed, ep.error()};
  const std::string& client = held.client_id.empty() ? cfg_.client_id : held.client_id;
  Params params{{"grant_type", "refresh_token"}, {"refresh_token", held.refresh_token}};
  auto got = co_await token_request(std::move(params), client, *ep, deadline, cancel);
  if (auto* t = std::get_if<Tokens>(&got)) {
    // RFC 6749 §6: a provider that does not rotate keeps the old one valid.
    if (t->refresh_token.empty()) t->refresh_token = held.refresh_token;
    t->client_id = client;
    if (auto kept = co_await keep(principal, *t); !kept)
      spdlog::warn("upstream {}: keeping refreshed tokens failed: {}", name_, kept.error());
    co_return *t;
  }
  const auto& f = std::get<TokenFailure>(got);
  if (f.oauth_error != "invalid_grant") co_return Problem{Fault::Failed, f.message};
  // Another replica may have used (and rotated) it a moment ago.
  {
    util::MutexLock lk(mu_);
    cache_.erase(principal);
  }
  if (auto again = co_await stored(principal); again && *again && (*again)->refresh_token != held.refresh_token)
    co_return **again;
  spdlog::info("upstream {}: the provider refused principal {}'s refresh token (invalid_grant); it must consent again",
               name_, principal.empty() ? "-" : principal);
  co_await forget(principal);
  co_return Problem{Fault::ConsentRequired, f.message};
}

Task<std::variant<Tokens, Client::TokenFailure>> Client::token_request(Params params, const std::string& client_id,
                                                                       const Endpoints& ep,
                                                                       Clock::time_point deadline,
                                                                       CancelSignal* cancel) {
  transport::Headers headers{{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  bool configured = client_id == cfg_.client_id && !client_id.empty();
  if (configured && key_) {
    // RFC 7523 §2.2; the audience is the token endpoint (RFC 7523 §3).
    auto assertion = key_->assertion(client_id, ep.token_endpoint);
    if (!assertion) co_return TokenFailure{"", failed(Step::Token, ep.token_endpoint, assertion.error())};
    params.emplace_back("client_id", client_id);
    params.emplace_back("client_assertion_type", kJwtBearer);
    params.emplace_back("client_assertion", *assertion);
  } else if (configured && !cfg_.client_secret.empty()) {
    bool post_only = has(ep.auth_methods, "client_secret_post") && !has(ep.auth_methods, "client_secret_basic");
    if (post_only) {
      params.emplace_back("client_id", client_id);
      params.emplace_back("client_secret", cfg_.client_secret);
    } else {
      // RFC 6749 §2.3.1: both form-encoded before base64.
      headers.emplace_back("Authorization",
                           "Basic " + base64(url_encode(client_id) + ":" + url_encode(cfg_.client_secret)));
    }
  } else {
    params.emplace_back("client_id", client_id);
  }
  // MCP authorization (RFC 8707): every token request names the upstream.
  params.emplace_back("resource", ep.resource);
  std::string method = "POST", body = form_encode(params);
  auto got = co_await fetch_.send(std::move(method), ep.token_endpoint, std::move(headers), std::move(body), deadline,
                                  cancel);
  if (!got) co_return TokenFailure{"", failed(Step::Token, ep.token_endpoint, got.error())};
  if (got->status == 200) {
    auto parsed = parse_token_response(got->body);
    if (!parsed) co_return TokenFailure{"", failed(Step::Token, ep.token_endpoint, "not a token response: " + parsed.error())};
    std::int64_t now = unix_now();
    co_return Tokens{parsed->access_token, parsed->refresh_token, parsed->scope, now,
                     parsed->expires_in > 0 ? now + parsed->expires_in : 0, client_id};
  }
  if (auto e = parse_error_response(got->body))
    co_return TokenFailure{e->error, failed(Step::Token, ep.token_endpoint,
                                            "refused (HTTP " + std::to_string(got->status) + "): " + e->error +
                                                (e->description.empty() ? "" : ": " + e->description))};
  co_return TokenFailure{"", failed(Step::Token, ep.token_endpoint, status_text(*got))};
}

// --- the store ------------------------------------------------------------

Task<Result<std::optional<Tokens>>> Client::stored(const std::string& principal) {
  {
    util::MutexLock lk(mu_);
    if (auto it = cache_.find(principal); it != cache_.end()) co_return std::optional<Tokens>(it->second);
  }
  const std::string key = token_key(name_, principal);
  auto blob = co_await shared_->store->load(key);
  if (!blob) co_return Error{blob.error()};
  if (!*blob) co_return std::optional<Tokens>();
  auto t = shared_->vault->open(name_, principal, **blob);
  // Sealed under a key no longer configured: as good as none.
  if (!t) co_return std::optional<Tokens>();
  util::MutexLock lk(mu_);
  cache_[principal] = *t;
  co_return t;
}

Task<Result<void>> Client::keep(const std::string& principal, const Tokens& t) {
  {
    util::MutexLock lk(mu_);
    cache_[principal] = t;
  }
  changed_.notify();
  if (cfg_.grant != Grant::AuthorizationCode) co_return Result<void>{};
  auto blob = shared_->vault->seal(name_, principal, t);
  if (!blob) co_return Error{blob.error()};
  const std::string key = token_key(name_, principal);
  co_return co_await shared_->store->save(key, *blob);
}

Task<Result<void>> Client::forget(const std::string& principal) {
  {
    util::MutexLock lk(mu_);
    cache_.erase(principal);
  }
  changed_.notify();
  if (cfg_.grant != Grant::AuthorizationCode) co_return Result<void>{};
  const std::string key = token_key(name_, principal);
  co_return co_await shared_->store->erase(key);
}

void Client::changed_elsewhere(const std::string& key) {
  {
    util::MutexLock lk(mu_);
    std::erase_if(cache_, [&](const auto& e) { return token_key(name_, e.first) == key; });
  }
  changed_.notify();
}

// --- consent (authorization_code) -------------------------------------------

Task<Result<Consent>> Client::begin_consent(const std::string& principal, const std::string& session,
                                            Clock::time_point deadline, CancelSignal* cancel) {
  auto ep = co_await endpoints(deadline, cancel);
  if (!ep) co_return Error{ep.error()};
  auto id = co_await client_id(*ep, deadline, cancel);
  if (!id) co_return Error{id.error()};
  Flow f{random_token(18), name_, principal, session, "mcpgw-" + random_token(12), pkce_verifier(), *id, unix_now(), ""};
  auto sealed = seal_flow(*shared_->flows, f);
  if (!sealed) co_return Error{sealed.error()};
  co_return Consent{shared_->links().authorize_url + "?flow=" + *sealed, f.elicitation_id};
}

Task<Result<Client::Redirect>> Client::authorize(Flow flow, Clock::time_point deadline) {
  auto ep = co_await endpoints(deadline, nullptr);
  if (!ep) co_return Error{ep.error()};
  Redirect r;
  r.cookie = random_token(18);
  flow.browser = sha256_hex(r.cookie);
  auto state = seal_flow(*shared_->flows, flow);
  if (!state) co_return Error{state.error()};
  Params params{{"response_type", "code"},
                {"client_id", flow.client_id},
                {"redirect_uri", shared_->links().redirect_url},
                {"state", *state},
                {"code_challenge", pkce_challenge(flow.verifier)},
                {"code_challenge_method", "S256"},
                {"resource", ep->resource}};
  if (!ep->scopes.empty()) params.emplace_back("scope", join_scopes(ep->scopes));
  const std::string& at = ep->authorization_endpoint;
  r.location = at + (at.find('?') == std::string::npos ? "?" : "&") + form_encode(params);
  co_return r;
}

Task<Result<void>> Client::complete(const Flow& flow, const std::string& code, Clock::time_point deadline) {
  auto ep = co_await endpoints(deadline, nullptr);
  if (!ep) co_return Error{ep.error()};
  Params params{{"grant_type", "authorization_code"},
                {"code", code},
                {"redirect_uri", shared_->links().redirect_url},
                {"code_verifier", flow.verifier}};
  auto got = co_await token_request(std::move(params), flow.client_id, *ep, deadline, nullptr);
  if (auto* f = std::get_if<TokenFailure>(&got)) co_return Error{f->message};
  auto kept = co_await keep(flow.principal, std::get<Tokens>(got));
  if (!kept) co_return Error{"storing the tokens failed: " + kept.error()};
  spdlog::info("upstream {}: principal {} authorized the gateway (grant authorization_code)", name_,
               flow.principal.empty() ? "-" : flow.principal);
  co_return Result<void>{};
}

Task<Result<bool>> Client::wait_for_tokens(const std::string& principal, const std::string& elicitation_id,
                                           Clock::time_point deadline, CancelSignal* cancel) {
  for (;;) {
    auto seen = changed_.generation();
    auto s = co_await stored(principal);
    if (s && *s) co_return true;
    {
      util::MutexLock lk(mu_);
      if (auto it = refusals_.find(elicitation_id); it != refusals_.end()) {
        std::string why = std::move(it->second);
        refusals_.erase(it);
        co_return Error{std::move(why)};
      }
    }
    if (!co_await changed_.wait(seen, deadline, cancel)) co_return false;
    if (cancel && cancel->cancelled()) co_return false;
  }
}

void Client::refused(const Flow& flow, const std::string& why) {
  {
    util::MutexLock lk(mu_);
    // Read by a waiting call at once, if there is one: a few suffice.
    if (refusals_.size() >= 64) refusals_.erase(refusals_.begin());
    std::string at = endpoints_ ? endpoints_->authorization_endpoint : url_;
    refusals_[flow.elicitation_id] = failed(Step::Authorization, at, why);
  }
  changed_.notify();
}

Task<Result<bool>> Client::revoke(const std::string& principal, Clock::time_point deadline) {
  std::optional<Tokens> held;
  if (cfg_.grant == Grant::AuthorizationCode) {
    auto s = co_await stored(principal);
    if (!s) co_return Error{s.error()};
    held = *s;
  } else {
    util::MutexLock lk(mu_);
    if (auto it = cache_.find(principal); it != cache_.end()) held = it->second;
  }
  auto gone = co_await forget(principal);
  if (!gone) co_return Error{gone.error()};
  if (!held) co_return false;
  // RFC 7009, best effort: the tokens are gone here whatever the provider says.
  auto ep = co_await endpoints(deadline, nullptr);
  if (ep && !ep->revocation_endpoint.empty()) {
    bool refresh = !held->refresh_token.empty();
    Params p{{"token", refresh ? held->refresh_token : held->access_token},
             {"token_type_hint", refresh ? "refresh_token" : "access_token"}};
    Endpoints at = *ep;
    at.token_endpoint = ep->revocation_endpoint;
    const std::string client = held->client_id.empty() ? cfg_.client_id : held->client_id;
    auto r = co_await token_request(std::move(p), client, at, deadline, nullptr);
    if (auto* f = std::get_if<TokenFailure>(&r); f && !f->oauth_error.empty())
      spdlog::warn("upstream {}: revoking principal {}'s token at the provider: {}", name_, principal, f->message);
  }
  co_return true;
}

// --- mcpgw check ---------------------------------------------------------------

Task<CheckReport> Client::check(Clock::time_point deadline) {
  CheckReport r;
  auto ep = co_await endpoints(deadline, nullptr);
  if (!ep) {
    r.ok = false;
    r.discovered = false;
    r.discovery = ep.error();
    r.credentials = "not checked (no token endpoint)";
    co_return r;
  }
  r.discovery = (ep->issuer.empty() ? std::string() : "issuer " + ep->issuer + ", ") + "token endpoint " +
                ep->token_endpoint +
                (ep->authorization_endpoint.empty() ? "" : ", authorization endpoint " + ep->authorization_endpoint) +
                ", resource " + ep->resource;
  bool own = !cfg_.client_id.empty() && (key_ || !cfg_.client_secret.empty());
  if (!own) {
    bool document = !cfg_.client_id_metadata_url.empty() && (ep->cimd_supported || ep->registration_endpoint.empty());
    r.credentials = document ? "public client " + cfg_.client_id_metadata_url +
                                   (ep->cimd_supported ? " (Client ID Metadata Document served by the gateway)"
                                                       : " (Client ID Metadata Document served by the gateway, but the "
                                                         "provider does not advertise client_id_metadata_document_supported)")
                    : cfg_.client_id.empty() ? "public client registered at first use (" +
                                                   (ep->registration_endpoint.empty() ? std::string("no registration_endpoint!")
                                                                                      : ep->registration_endpoint) + ")"
                                             : "public client " + cfg_.client_id + " (PKCE, no secret to check)";
    if (cfg_.client_id.empty() && !document && ep->registration_endpoint.empty()) r.ok = false;
    // Nothing to probe without credentials, but where the metadata points
    // the guard would refuse, a call will fail: say so now.
    for (auto [step, at] : {std::pair{Step::Token, &ep->token_endpoint}, {Step::Registration, &ep->registration_endpoint}})
      if (auto permitted = fetch_.permits(*at); r.ok && !at->empty() && !permitted) {
        r.ok = false;
        r.credentials = failed(step, *at, permitted.error());
      }
    co_return r;
  }
  // A request that authenticates the gateway: a real one for
  // client_credentials, one that must fail on its grant for the others
  // (invalid_client means the credentials themselves were refused).
  Params probe;
  if (cfg_.grant == Grant::ClientCredentials) {
    probe = {{"grant_type", "client_credentials"}};
    if (!ep->scopes.empty()) probe.emplace_back("scope", join_scopes(ep->scopes));
  } else if (cfg_.grant == Grant::TokenExchange) {
    probe = {{"grant_type", kTokenExchange}, {"subject_token", "mcpgw-check-probe"}, {"subject_token_type", kAccessTokenType}};
  } else {
    probe = {{"grant_type", "authorization_code"}, {"code", "mcpgw-check-probe"}, {"redirect_uri", shared_->links().redirect_url},
             {"code_verifier", pkce_verifier()}};
  }
  auto got = co_await token_request(std::move(probe), cfg_.client_id, *ep, deadline, nullptr);
  std::string how = key_ ? "private_key_jwt" : "client secret";
  if (std::holds_alternative<Tokens>(got)) {
    r.credentials = "client " + cfg_.client_id + " (" + how + "): accepted, the token endpoint issued a token";
  } else if (const auto& f = std::get<TokenFailure>(got); f.oauth_error.empty() || f.oauth_error == "invalid_client" ||
                                                          f.oauth_error == "unauthorized_client" ||
                                                          cfg_.grant == Grant::ClientCredentials) {
    r.ok = false;
    r.credentials = "client " + cfg_.client_id + " (" + how + "): " + f.message;
  } else {
    r.credentials = "client " + cfg_.client_id + " (" + how + "): accepted (the probe was refused with " + f.oauth_error +
                    ", not invalid_client)";
  }
  co_return r;
}

}  // namespace mcpgw::oauth
