#include "transport/http_admission.hpp"

#include <openssl/crypto.h>

#include <algorithm>

namespace mcpgw::transport {
namespace {

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

}  // namespace

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

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

const BearerCredential* Admission::authenticate(const http::Request& req, bool& ok) const {
  ok = true;
  if (!opts_.auth_enabled) return nullptr;
  ok = false;
  std::string h = req.get("Authorization");
  if (h.size() < 7 || lower(h.substr(0, 7)) != "bearer ") return nullptr;
  std::string_view tok = std::string_view(h).substr(7);
  const BearerCredential* found = nullptr;
  // Compare against every token in constant time so timing reveals nothing.
  for (const auto& c : opts_.credentials)
    if (c.token.size() == tok.size() && CRYPTO_memcmp(c.token.data(), tok.data(), tok.size()) == 0) found = &c;
  ok = found != nullptr;
  return found;
}

std::optional<http::Response> Admission::admit(const http::Request& req, const std::string& mode,
                                               ClientContext& ctx) const {
  if (!host_allowed(req)) return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Host not allowed");
  if (!origin_allowed(req)) return json_error(403, jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed");
  bool ok = true;
  const BearerCredential* cred = authenticate(req, ok);
  if (!ok) {
    ClientContext who;
    who.mode = mode;
    handler_.refused(who, "auth", req.has("Authorization") ? "invalid bearer token" : "missing bearer token");
    auto r = json_error(401, jsonrpc::kInvalidRequest, "Unauthorized: missing or invalid bearer token");
    r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"mcpgw\""});
    return r;
  }
  if (!mode.empty()) {
    auto modes = handler_.modes();
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      std::string list;
      for (const auto& m : modes) {
        if (!list.empty()) list += ", ";
        list += m;
      }
      return json_error(404, jsonrpc::kInvalidRequest,
                        "Unknown mode \"" + mode + "\"; available modes: " + (list.empty() ? "(none)" : list));
    }
  }
  if (cred) {
    ctx.principal = cred->principal;
    ctx.allowed_modes = cred->modes;
  }
  ctx.mode = mode;
  return std::nullopt;
}

}  // namespace mcpgw::transport
