#include "transport/http_admission.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "transport/http_request_filters.hpp"
#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

constexpr std::string_view kWellKnown = "/.well-known/oauth-protected-resource";

/// `s` as an RFC 7235 quoted-string.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    // Header values cannot carry control characters.
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + '"';
}

/// (scheme://authority, path) of an absolute URL; path "" for none or "/".
std::pair<std::string, std::string> split_url(const std::string& url) {
  auto scheme = url.find("://");
  auto slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  if (slash == std::string::npos) return {url, ""};
  std::string path = url.substr(slash);
  if (path == "/") path.clear();
  return {url.substr(0, slash), path};
}

}  // namespace

std::string lower(std::string s) { return ascii_lowered(std::move(s)); }

http::Response json_response(int status, SplicedText body) {
  return {status, {{"Content-Type", "application/json"}}, std::move(body)};
}

http::Response json_error(int status, int code, const std::string& message) {
  return json_response(status, jsonrpc::make_error(json::Value(), code, message));
}

Result<std::shared_ptr<const AccessState>> make_access_state(Io& io, const auth::AccessSettings& access,
                                                             const auth::LimitSettings& limits,
                                                             std::vector<std::string> forward_headers,
                                                             const AccessState* keep) {
  for (auto& h : forward_headers) h = lower(std::move(h));
  std::shared_ptr<JwksSource> jwks;
  if (access.oauth) {
    const auto* old = keep ? &keep->verifier.settings() : nullptr;
    bool same_url = old && old->oauth && access.oauth->jwks_file.empty() &&
                    old->oauth->jwks_url == access.oauth->jwks_url && keep->jwks;
    if (same_url) {
      jwks = keep->jwks;
    } else {
      auto made = JwksSource::create(io, *access.oauth);
      if (!made) return Error{"auth.oauth: " + made.error()};
      jwks = std::move(*made);
      jwks->start();
    }
  }
  std::shared_ptr<auth::RateLimiter> limiter;
  if (keep && keep->limits.calls_per_s == limits.calls_per_s && keep->limits.burst == limits.burst)
    limiter = keep->limiter;
  else if (limits.calls_per_s > 0)
    limiter = std::make_shared<auth::RateLimiter>(limits.calls_per_s, limits.burst);
  return std::shared_ptr<const AccessState>(
      std::make_shared<const AccessState>(AccessState{auth::Verifier(access), std::move(jwks),
                  access.oauth ? std::make_shared<auth::TokenCache>() : nullptr, limits, std::move(limiter),
                  std::move(forward_headers)}));
}

Admission::Admission(const HttpServerOptions& opts, Handler& handler, std::shared_ptr<const AccessState> state)
    : opts_(opts),
      handler_(handler),
      endpoint_chain_(endpoint_filters(*this)),
      operator_chain_(operator_filters(*this)),
      limit_chain_(limit_filters(*this)),
      state_(std::move(state)) {}

std::vector<std::string> Admission::modes() const { return handler_.modes(); }

Task<std::optional<http::Response>> Admission::admit(const http::Request& req, const std::string& mode,
                                                     ClientContext& ctx) const {
  // Held for the whole check: a reload may replace it meanwhile.
  auto st = state();
  Arrival a{req, *st, &mode, ctx};
  co_return co_await RequestNext(endpoint_chain_.order)(a);
}

Task<std::optional<http::Response>> Admission::admit_operator(const http::Request& req) const {
  auto st = state();
  ClientContext ctx;
  Arrival a{req, *st, nullptr, ctx};
  co_return co_await RequestNext(operator_chain_.order)(a);
}

std::optional<std::string> Admission::limit_call(const ClientContext& ctx, const jsonrpc::Message& m,
                                                 int in_flight) const {
  auto st = state();
  Demand d{ctx, m, in_flight, *st};
  return LimitNext(limit_chain_.order)(d);
}

std::shared_ptr<const AccessState> Admission::state() const {
  util::ReaderLock lk(mu_);
  return state_;
}

void Admission::set_state(std::shared_ptr<const AccessState> s) {
  util::WriterLock lk(mu_);
  state_ = std::move(s);
}

void Admission::on_refused(const Refused& r) const {
  spdlog::info("refused ({}) principal={}: {}", r.what, r.principal.empty() ? "-" : r.principal, r.reason);
  // The audit log and the refusal metrics.
  ClientContext who;
  who.principal = r.principal;
  who.mode = r.mode;
  handler_.refused(who, r.what, r.reason, r.tool);
}

std::optional<std::string> Admission::cors_origin(const http::Request& req) const {
  if (!req.has("Origin") || opts_.allowed_origins.empty()) return std::nullopt;
  std::string origin(req.get("Origin"));
  if (std::find(opts_.allowed_origins.begin(), opts_.allowed_origins.end(), origin) == opts_.allowed_origins.end())
    return std::nullopt;
  return origin;
}

std::string Admission::metadata_url(const AccessState& st) const {
  auto [origin, path] = split_url(st.verifier.settings().oauth->audience);
  return origin + std::string(kWellKnown) + path;
}

std::optional<http::Response> Admission::metadata(std::string_view path) const {
  auto st = state();
  const auto& oauth = st->verifier.settings().oauth;
  if (!oauth || path.substr(0, kWellKnown.size()) != kWellKnown) return std::nullopt;
  std::string_view rest = path.substr(kWellKnown.size());
  std::string_view base = opts_.path;
  bool under_mcp = rest == base || (rest.size() > base.size() && rest.substr(0, base.size()) == base &&
                                    rest[base.size()] == '/' && rest.find('/', base.size() + 1) == std::string_view::npos);
  if (!rest.empty() && !under_mcp && rest != split_url(oauth->audience).second) return std::nullopt;
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("resource", json::str(oauth->audience, a), a);
  json::Value servers(rapidjson::kArrayType), scopes(rapidjson::kArrayType), methods(rapidjson::kArrayType);
  for (const auto& s : oauth->authorization_servers) servers.PushBack(json::str(s, a), a);
  std::vector<std::string> all = oauth->required_scopes;
  for (const auto& [scope, modes] : oauth->scope_modes)
    if (std::find(all.begin(), all.end(), scope) == all.end()) all.push_back(scope);
  for (const auto& s : all) scopes.PushBack(json::str(s, a), a);
  methods.PushBack(json::str("header", a), a);
  d.AddMember("authorization_servers", servers, a);
  d.AddMember("scopes_supported", scopes, a);
  d.AddMember("bearer_methods_supported", methods, a);
  return json_response(200, json::write(d));
}

http::Response Admission::refuse(const auth::Verdict& v, const AccessState& st, const std::string& mode) const {
  using O = auth::Verdict::Outcome;
  bool oauth = st.verifier.settings().oauth.has_value();
  std::string meta = oauth ? "resource_metadata=" + quoted(metadata_url(st)) : "realm=\"mcpgw\"";
  http::Response r;
  if (v.outcome == O::InsufficientScope) {
    on_refused({v.oauth ? "scope" : "auth", v.principal, v.description, mode});
    r = json_error(403, jsonrpc::kInvalidRequest, "Forbidden: " + v.description);
    if (v.oauth) {
      std::string www = "Bearer error=\"insufficient_scope\"";
      if (!v.scope.empty()) www += ", scope=" + quoted(v.scope);
      www += ", error_description=" + quoted(v.description) + ", " + meta;
      r.headers.push_back({"WWW-Authenticate", std::move(www)});
    }
    return r;
  }
  if (v.outcome == O::Missing) {
    on_refused({"auth", "", "no bearer token", mode});
    r = json_error(401, jsonrpc::kInvalidRequest, "Unauthorized: missing or invalid bearer token");
    r.headers.push_back({"WWW-Authenticate", "Bearer " + meta});
    return r;
  }
  on_refused({"auth", "", v.description, mode});
  r = json_error(401, jsonrpc::kInvalidRequest,
                 oauth ? "Unauthorized: invalid token: " + v.description : "Unauthorized: missing or invalid bearer token");
  r.headers.push_back({"WWW-Authenticate", oauth ? "Bearer error=\"invalid_token\", error_description=" +
                                                       quoted(v.description) + ", " + meta
                                                 : "Bearer " + meta});
  return r;
}

int Admission::max_sessions() const { return state()->limits.max_sessions; }

BatchLimits Admission::batch_limits() const {
  // The state is held while it is read: a reload may drop the last other reference.
  auto st = state();
  const auto& l = st->limits;
  return {static_cast<std::size_t>(l.max_batch_size), static_cast<std::size_t>(l.batch_concurrency)};
}

http::Response Admission::sessions_full(const ClientContext& ctx) const {
  std::string why = "Service Unavailable: limits.max_sessions (" + std::to_string(max_sessions()) +
                    ") reached and no session is idle";
  on_refused({"sessions", ctx.principal, why, ctx.mode});
  auto r = json_error(503, jsonrpc::kInvalidRequest, why);
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

}  // namespace mcpgw::transport
