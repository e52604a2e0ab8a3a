#include "transport/http_admission.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "util/ascii.hpp"

namespace mcpgw::transport {
namespace {

constexpr std::string_view kWellKnown = "/.well-known/oauth-protected-resource";

/// Host part of a Host header or URL authority, without port or brackets.
std::string host_of(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    return std::string(authority.substr(1, close == std::string_view::npos ? authority.npos : close - 1));
  }
  auto colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(':') == colon) authority = authority.substr(0, colon);
  return std::string(authority);
}

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

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string limit_error(const jsonrpc::Message& m, const std::string& message, std::string_view limit,
                        std::int64_t retry_ms) {
  json::Document data(rapidjson::kObjectType);
  auto& a = data.GetAllocator();
  data.AddMember("limit", json::str(limit, a), a);
  data.AddMember("retryAfterMs", retry_ms, a);
  return jsonrpc::make_error(m.id(), -32000, message, &data);
}

/// The tool a request names (tools/call, tools/callSaga), for the audit
/// line of its refusal; "" for other requests.
std::string called_tool(const jsonrpc::Message& m) {
  auto name = m.params() ? json::get_string(*m.params(), "name") : std::nullopt;
  return name && m.method().rfind("tools/call", 0) == 0 ? std::string(*name) : std::string();
}

}  // namespace

std::string lower(std::string s) { return ascii_lowered(std::move(s)); }

bool is_loopback_host(std::string_view host) {
  std::string h = host_of(host);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

http::Response json_response(int status, std::string body) {
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

std::shared_ptr<const AccessState> Admission::state() const {
  util::MutexLock lk(mu_);
  return state_;
}

void Admission::set_state(std::shared_ptr<const AccessState> s) {
  util::MutexLock lk(mu_);
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

bool Admission::host_allowed(const http::Request& req) const {
  if (!req.has("Host")) return true;
  std::string host = lower(host_of(req.get("Host")));
  if (!opts_.allowed_hosts.empty())
    return std::any_of(opts_.allowed_hosts.begin(), opts_.allowed_hosts.end(),
                       [&](const std::string& a) { return lower(a) == host; });
  // Bound to loopback, only loopback names may reach us: a rebinding attack
  // arrives with the attacker's host name.
  if (is_loopback_host(opts_.host)) return is_loopback_host(host);
  return true;
}

bool Admission::origin_allowed(const http::Request& req) const {
  if (!req.has("Origin")) return true;
  std::string origin = req.get("Origin");
  if (!opts_.allowed_origins.empty())
    return std::find(opts_.allowed_origins.begin(), opts_.allowed_origins.end(), origin) !=
           opts_.allowed_origins.end();
  auto scheme = origin.find("://");
  if (scheme == std::string::npos) return false;
  std::string_view rest(origin);
  rest.remove_prefix(scheme + 3);
  return is_loopback_host(rest.substr(0, rest.find('/')));
}

std::optional<std::string> Admission::cors_origin(const http::Request& req) const {
  if (!req.has("Origin") || opts_.allowed_origins.empty()) return std::nullopt;
  std::string origin = req.get("Origin");
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

Task<auth::Verdict> Admission::identify(const http::Request& req, const AccessState& st) const {
  std::string authorization = req.get("Authorization");
  auto keys = st.jwks ? st.jwks->keys() : nullptr;
  std::int64_t now = unix_now();
  auto cached = st.tokens ? st.tokens->find(authorization, keys, now) : std::nullopt;
  auth::Verdict v = cached ? std::move(*cached) : st.verifier.identify(authorization, keys.get(), now);
  if (v.outcome == auth::Verdict::Outcome::UnknownKey && st.jwks) {
    // The authorization server may have rotated its keys: read them again
    // (at most once a minute) and look once more.
    keys = co_await st.jwks->refresh();
    v = st.verifier.identify(authorization, keys.get(), unix_now());
    if (v.outcome == auth::Verdict::Outcome::UnknownKey) v.outcome = auth::Verdict::Outcome::Invalid;
  }
  if (!cached && st.tokens) st.tokens->put(authorization, keys, v, now);
  co_return v;
}

Task<std::optional<http::Response>> Admission::admit_operator(const http::Request& req) const {
  if (!host_allowed(req)) {
    on_refused({"host", "", "Host " + req.get("Host") + " not allowed", ""});
    co_return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Host not allowed");
  }
  if (!origin_allowed(req)) {
    on_refused({"origin", "", "Origin " + req.get("Origin") + " not allowed", ""});
    co_return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed");
  }
  auto st = state();
  auth::Verdict v = co_await identify(req, *st);
  using O = auth::Verdict::Outcome;
  if (v.outcome != O::Admitted && v.outcome != O::Anonymous) co_return refuse(v, *st, "");
  co_return std::nullopt;
}

Task<std::optional<http::Response>> Admission::admit(const http::Request& req, const std::string& mode,
                                                     ClientContext& ctx) const {
  if (!host_allowed(req)) {
    on_refused({"host", "", "Host " + req.get("Host") + " not allowed", mode});
    co_return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Host not allowed");
  }
  if (!origin_allowed(req)) {
    on_refused({"origin", "", "Origin " + req.get("Origin") + " not allowed", mode});
    co_return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed");
  }
  auto st = state();
  auth::Verdict v = co_await identify(req, *st);
  st->verifier.restrict_to_mode(v, mode);
  using O = auth::Verdict::Outcome;
  // Who first (401), then which mode (404 for one that does not exist),
  // then whether this principal may use it (403).
  if (v.outcome != O::Admitted && v.outcome != O::Anonymous && v.outcome != O::InsufficientScope)
    co_return refuse(v, *st, mode);
  if (!mode.empty()) {
    auto modes = handler_.modes();
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      std::string list;
      for (const auto& m : modes) {
        if (!list.empty()) list += ", ";
        list += m;
      }
      co_return json_error(404, jsonrpc::kInvalidRequest,
                           "Unknown mode \"" + mode + "\"; available modes: " + (list.empty() ? "(none)" : list));
    }
  }
  if (v.outcome == O::InsufficientScope) co_return refuse(v, *st, mode);
  ctx.principal = v.principal;
  ctx.allowed_modes = v.modes;
  ctx.mode = mode;
  // The raw JWT, for upstreams that exchange it (RFC 8693); a static
  // token is the gateway's own secret and never leaves it.
  if (v.oauth) {
    std::string authorization = req.get("Authorization");
    if (authorization.size() > 7) ctx.subject_token = authorization.substr(7);
  }
  if (!st->forward_headers.empty()) {
    for (const auto& h : req.headers) {
      std::string name = lower(h.name);
      if (std::find(st->forward_headers.begin(), st->forward_headers.end(), name) != st->forward_headers.end())
        ctx.forward_headers.emplace_back(name, h.value);
    }
  }
  co_return std::nullopt;
}

std::optional<std::string> Admission::limit_call(const ClientContext& ctx, const jsonrpc::Message& m,
                                                 int in_flight) const {
  auto st = state();
  const auto& l = st->limits;
  if (in_flight >= 0 && l.max_in_flight_per_session > 0 && in_flight >= l.max_in_flight_per_session) {
    std::string why = "Too many requests in flight: limits.max_in_flight_per_session (" +
                      std::to_string(l.max_in_flight_per_session) + ") reached for this session";
    on_refused({"in_flight", ctx.principal, why, ctx.mode, called_tool(m)});
    // When one of them ends is not known: a short pause is the honest hint.
    return limit_error(m, why, "max_in_flight_per_session", 100);
  }
  std::string_view method = m.method();
  if (!st->limiter || (method != "tools/call" && method != "tools/callSaga" && method != "tools/resumeSaga"))
    return std::nullopt;
  auto wait = st->limiter->take(ctx.principal, auth::RateLimiter::Clock::now());
  if (!wait) return std::nullopt;
  std::string who = ctx.principal.empty() ? "anonymous clients" : "principal " + json::quote(ctx.principal);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", l.calls_per_s);
  std::string why = "Rate limit exceeded: limits.calls_per_s (" + std::string(rate) + "/s, burst " +
                    std::to_string(static_cast<int>(st->limiter->capacity())) + ") for " + who;
  on_refused({"rate", ctx.principal, why, ctx.mode, called_tool(m)});
  return limit_error(m, why, "calls_per_s", *wait);
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
