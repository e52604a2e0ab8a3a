#include "transport/http_request_filters.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace mcpgw::transport {
namespace {

using Refusal = std::optional<http::Response>;

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

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// The mode a refusal is logged under: "" for an operator endpoint.
const std::string& mode_of(const Arrival& a) {
  static const std::string none;
  return a.mode ? *a.mode : none;
}

/// `r` as the chain's answer; a coroutine frame only for a refusal.
Task<Refusal> answer(http::Response r) { co_return r; }

/// DNS rebinding: only the configured host names, or, bound to loopback,
/// only loopback names (a rebinding attack arrives with the attacker's).
class HostFilter final : public RequestFilter {
 public:
  explicit HostFilter(const Admission& ad) : ad_(ad) {}
  Task<Refusal> on_call(Arrival& a, RequestNext next) override {
    if (allowed(a.req)) return next(a);
    ad_.on_refused({"host", "", "Host " + std::string(a.req.get("Host")) + " not allowed", mode_of(a)});
    return answer(json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Host not allowed"));
  }

 private:
  bool allowed(const http::Request& req) const {
    if (!req.has("Host")) return true;
    const auto& opts = ad_.options();
    std::string host = lower(host_of(req.get("Host")));
    if (!opts.allowed_hosts.empty())
      return std::any_of(opts.allowed_hosts.begin(), opts.allowed_hosts.end(),
                         [&](const std::string& h) { return lower(h) == host; });
    if (is_loopback_host(opts.host)) return is_loopback_host(host);
    return true;
  }
  const Admission& ad_;
};

/// A browser's cross-origin request: only the configured origins, or
/// loopback ones when none are configured.
class OriginFilter final : public RequestFilter {
 public:
  explicit OriginFilter(const Admission& ad) : ad_(ad) {}
  Task<Refusal> on_call(Arrival& a, RequestNext next) override {
    if (allowed(a.req)) return next(a);
    ad_.on_refused({"origin", "", "Origin " + std::string(a.req.get("Origin")) + " not allowed", mode_of(a)});
    return answer(json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed"));
  }

 private:
  bool allowed(const http::Request& req) const {
    if (!req.has("Origin")) return true;
    const auto& allowed = ad_.options().allowed_origins;
    std::string_view origin = req.get("Origin");
    if (!allowed.empty()) return std::find(allowed.begin(), allowed.end(), origin) != allowed.end();
    auto scheme = origin.find("://");
    if (scheme == std::string_view::npos) return false;
    std::string_view rest = origin.substr(scheme + 3);
    return is_loopback_host(rest.substr(0, rest.find('/')));
  }
  const Admission& ad_;
};

/// Who the client is: the bearer token's verdict (cached for JWTs), in
/// the requested mode; no or a bad token is refused (401) here, a token
/// without the mode's scope only after the mode is known to exist.
class TokenFilter final : public RequestFilter {
 public:
  explicit TokenFilter(const Admission& ad) : ad_(ad) {}
  Task<Refusal> on_call(Arrival& a, RequestNext next) override {
    const AccessState& st = a.st;
    std::string authorization(a.req.get("Authorization"));
    auto keys = st.jwks ? st.jwks->keys() : nullptr;
    std::int64_t now = unix_now();
    auto cached = st.tokens ? st.tokens->find(authorization, keys, now) : std::nullopt;
    if (cached) {
      a.verdict = std::move(*cached);
      return judge(a, next);
    }
    a.verdict = st.verifier.identify(authorization, keys.get(), now);
    // The authorization server may have rotated its keys: that waits.
    if (a.verdict.outcome == auth::Verdict::Outcome::UnknownKey && st.jwks)
      return refetch(a, next, std::move(authorization), now);
    if (st.tokens) st.tokens->put(authorization, keys, a.verdict, now);
    return judge(a, next);
  }

 private:
  /// Reads the keys again (at most once a minute) and looks once more.
  Task<Refusal> refetch(Arrival& a, RequestNext next, std::string authorization, std::int64_t now) {
    const AccessState& st = a.st;
    auto keys = co_await st.jwks->refresh();
    a.verdict = st.verifier.identify(authorization, keys.get(), unix_now());
    if (a.verdict.outcome == auth::Verdict::Outcome::UnknownKey) a.verdict.outcome = auth::Verdict::Outcome::Invalid;
    if (st.tokens) st.tokens->put(authorization, keys, a.verdict, now);
    co_return co_await judge(a, next);
  }

  Task<Refusal> judge(Arrival& a, RequestNext next) {
    using O = auth::Verdict::Outcome;
    if (a.mode) a.st.verifier.restrict_to_mode(a.verdict, *a.mode);
    auto o = a.verdict.outcome;
    if (o != O::Admitted && o != O::Anonymous && o != O::InsufficientScope)
      return answer(ad_.refuse(a.verdict, a.st, mode_of(a)));
    return next(a);
  }
  const Admission& ad_;
};

/// A mode the gateway does not serve: 404, naming the ones it does (after
/// the token, so the list is only shown to a client that may see it).
class ModeFilter final : public RequestFilter {
 public:
  explicit ModeFilter(const Admission& ad) : ad_(ad) {}
  Task<Refusal> on_call(Arrival& a, RequestNext next) override {
    if (!a.mode || a.mode->empty()) return next(a);
    auto modes = ad_.modes();
    if (std::find(modes.begin(), modes.end(), *a.mode) != modes.end()) return next(a);
    std::string list;
    for (const auto& m : modes) {
      if (!list.empty()) list += ", ";
      list += m;
    }
    return answer(json_error(404, jsonrpc::kInvalidRequest,
                             "Unknown mode \"" + *a.mode + "\"; available modes: " + (list.empty() ? "(none)" : list)));
  }

 private:
  const Admission& ad_;
};

/// A principal whose token lacks the mode's scope: 403.
class ScopeFilter final : public RequestFilter {
 public:
  explicit ScopeFilter(const Admission& ad) : ad_(ad) {}
  Task<Refusal> on_call(Arrival& a, RequestNext next) override {
    if (a.verdict.outcome == auth::Verdict::Outcome::InsufficientScope)
      return answer(ad_.refuse(a.verdict, a.st, mode_of(a)));
    return next(a);
  }

 private:
  const Admission& ad_;
};

/// The last filter of the MCP endpoint: the request is admitted, and the
/// client's context holds what the filters learned.
class ClientFilter final : public RequestFilter {
 public:
  Task<Refusal> on_call(Arrival& a, RequestNext) override {
    ClientContext& ctx = a.ctx;
    ctx.principal = a.verdict.principal;
    ctx.allowed_modes = a.verdict.modes;
    ctx.claims = a.verdict.claims;
    ctx.scopes = a.verdict.scopes;
    ctx.mode = mode_of(a);
    // The raw JWT, for upstreams that exchange it (RFC 8693); a static
    // token is the gateway's own secret and never leaves it.
    if (a.verdict.oauth) {
      std::string_view authorization = a.req.get("Authorization");
      if (authorization.size() > 7) ctx.subject_token = authorization.substr(7);
    }
    const auto& names = a.st.forward_headers;
    if (!names.empty()) {
      for (const auto& h : a.req.headers) {
        std::string name = lower(h.name);
        if (std::find(names.begin(), names.end(), name) != names.end()) ctx.forward_headers.emplace_back(name, h.value);
      }
    }
    co_return std::nullopt;
  }
};

/// The last filter of an operator endpoint: admitted.
class PassFilter final : public RequestFilter {
 public:
  Task<Refusal> on_call(Arrival&, RequestNext) override { co_return std::nullopt; }
};

std::string limit_error(const jsonrpc::Message& m, const std::string& message, std::string_view limit,
                        std::int64_t retry_ms) {
  json::Document data(rapidjson::kObjectType);
  auto& a = data.GetAllocator();
  data.AddMember("limit", json::str(limit, a), a);
  data.AddMember("retryAfterMs", retry_ms, a);
  return jsonrpc::make_error(m.id(), kLimitRefused, message, &data);
}

/// The tool a request names (tools/call, tools/callSaga), for the audit
/// line of its refusal; "" for other requests.
std::string called_tool(const jsonrpc::Message& m) {
  auto name = m.params() ? json::get_string(*m.params(), "name") : std::nullopt;
  return name && m.method().rfind("tools/call", 0) == 0 ? std::string(*name) : std::string();
}

/// limits.max_in_flight_per_session.
class InFlightFilter final : public LimitFilter {
 public:
  explicit InFlightFilter(const Admission& ad) : ad_(ad) {}
  std::optional<std::string> on_call(Demand& d, LimitNext next) override {
    int max = d.st.limits.max_in_flight_per_session;
    if (d.in_flight < 0 || max <= 0 || d.in_flight < max) return next(d);
    std::string why = "Too many requests in flight: limits.max_in_flight_per_session (" + std::to_string(max) +
                      ") reached for this session";
    ad_.on_refused({"in_flight", d.ctx.principal, why, d.ctx.mode, called_tool(d.m)});
    // When one of them ends is not known: a short pause is the honest hint.
    return limit_error(d.m, why, "max_in_flight_per_session", 100);
  }

 private:
  const Admission& ad_;
};

/// limits.calls_per_s, per principal, on the methods that call tools.
class RateFilter final : public LimitFilter {
 public:
  explicit RateFilter(const Admission& ad) : ad_(ad) {}
  std::optional<std::string> on_call(Demand& d, LimitNext next) override {
    std::string_view method = d.m.method();
    const auto& limiter = d.st.limiter;
    if (!limiter || (method != "tools/call" && method != "tools/callSaga" && method != "tools/resumeSaga"))
      return next(d);
    auto wait = limiter->take(d.ctx.principal, auth::RateLimiter::Clock::now());
    if (!wait) return next(d);
    std::string who = d.ctx.principal.empty() ? "anonymous clients" : "principal " + json::quote(d.ctx.principal);
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", d.st.limits.calls_per_s);
    std::string why = "Rate limit exceeded: limits.calls_per_s (" + std::string(rate) + "/s, burst " +
                      std::to_string(static_cast<int>(limiter->capacity())) + ") for " + who;
    ad_.on_refused({"rate", d.ctx.principal, why, d.ctx.mode, called_tool(d.m)});
    return limit_error(d.m, why, "calls_per_s", *wait);
  }

 private:
  const Admission& ad_;
};

/// The last limit filter: the request runs.
class RunFilter final : public LimitFilter {
 public:
  std::optional<std::string> on_call(Demand&, LimitNext) override { return std::nullopt; }
};

}  // namespace

Chain<RequestFilter> endpoint_filters(const Admission& a) {
  Chain<RequestFilter> c;
  c.add(std::make_unique<HostFilter>(a));
  c.add(std::make_unique<OriginFilter>(a));
  c.add(std::make_unique<TokenFilter>(a));
  c.add(std::make_unique<ModeFilter>(a));
  c.add(std::make_unique<ScopeFilter>(a));
  c.add(std::make_unique<ClientFilter>());
  return c;
}

Chain<RequestFilter> operator_filters(const Admission& a) {
  Chain<RequestFilter> c;
  c.add(std::make_unique<HostFilter>(a));
  c.add(std::make_unique<OriginFilter>(a));
  c.add(std::make_unique<TokenFilter>(a));
  c.add(std::make_unique<ScopeFilter>(a));
  c.add(std::make_unique<PassFilter>());
  return c;
}

Chain<LimitFilter> limit_filters(const Admission& a) {
  Chain<LimitFilter> c;
  c.add(std::make_unique<InFlightFilter>(a));
  c.add(std::make_unique<RateFilter>(a));
  c.add(std::make_unique<RunFilter>());
  return c;
}

}  // namespace mcpgw::transport
