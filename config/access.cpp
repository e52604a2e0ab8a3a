#include "config/access.hpp"

#include <algorithm>
#include <cctype>

#include "config/keys.hpp"

namespace mcpgw::config {
namespace {

using namespace yaml;

std::string scheme_of(const std::string& url) {
  auto end = url.find("://");
  std::string s = end == std::string::npos ? "" : url.substr(0, end);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_host(const std::string& url) {
  auto end = url.find("://");
  return end != std::string::npos && url.size() > end + 3 && url[end + 3] != '/';
}

std::string url_of(const Value& v, bool https_only) {
  std::string url = v.non_empty_text();
  std::string scheme = scheme_of(url);
  if ((scheme != "https" && (https_only || scheme != "http")) || !has_host(url))
    v.fail(std::string("expected an ") + (https_only ? "https://" : "http:// or https://") + " URL, got " + quote(url));
  return url;
}

}  // namespace

OAuth read_oauth(const Value& v, const std::function<bool(const std::string&)>& known_mode) {
  OAuth o;
  Fields f = v.fields(keys::kOAuth);
  o.issuer = f.required("issuer").non_empty_text();
  Value audience = f.required("audience");
  o.audience = url_of(audience, false);
  auto url = f.get("jwks_url");
  auto file = f.get("jwks_file");
  if (url && file) file->fail("give jwks_url or jwks_file, not both");
  if (!url && !file) v.fail("jwks_url or jwks_file is required");
  if (url) {
    o.jwks_url = url_of(*url, false);
    // Keys fetched in clear text could be swapped on the way: only a
    // loopback authorization server may be reached over http.
    if (scheme_of(o.jwks_url) == "http") {
      std::string rest = o.jwks_url.substr(7);
      std::string host = rest.substr(0, rest.find('/'));
      if (!host.empty() && host.front() == '[') host = host.substr(1, host.find(']') - 1);
      else host = host.substr(0, host.rfind(':') == std::string::npos ? host.size() : host.rfind(':'));
      if (host != "localhost" && host != "::1" && host.rfind("127.", 0) != 0)
        url->fail("plain http is allowed only for a loopback host; use https, got " + quote(o.jwks_url));
    }
  }
  if (file) {
    file->non_empty_text();
    o.jwks_file = file->path();
  }
  if (auto servers = f.get("authorization_servers")) {
    for (const Value& s : servers->items()) o.authorization_servers.push_back(url_of(s, false));
  }
  if (o.authorization_servers.empty()) o.authorization_servers.push_back(o.issuer);
  f.read("required_scopes", o.required_scopes);
  if (auto modes = f.get("scope_modes")) {
    for (const Entry& e : modes->entries()) {
      if (e.name.empty() || e.name.find(' ') != std::string::npos)
        e.key.fail("expected a scope (no spaces), got " + quote(e.name));
      std::vector<std::string> list;
      for (const Value& m : e.value.items()) {
        list.push_back(m.text());
        if (!known_mode(list.back())) m.fail("unknown mode " + quote(list.back()));
      }
      o.scope_modes.emplace_back(e.name, std::move(list));
    }
  }
  if (auto claim = f.get("principal_claim")) o.principal_claim = claim->non_empty_text();
  f.read("leeway_s", o.leeway_s, 0, 3600);
  return o;
}

Limits read_limits(const Value& v) {
  Limits l;
  Fields f = v.fields(keys::kLimits);
  f.read("calls_per_s", l.calls_per_s, 0);
  f.read("burst", l.burst, 0);
  f.read("max_in_flight_per_session", l.max_in_flight_per_session, 0);
  f.read("max_sessions", l.max_sessions, 0);
  f.read("max_batch_size", l.max_batch_size, 0);
  f.read("batch_concurrency", l.batch_concurrency, 1, 1024);
  f.read("max_client_requests_per_call", l.max_client_requests_per_call, 1, 65536);
  f.read("max_client_requests_per_session", l.max_client_requests_per_session, 1, 1 << 20);
  if (l.burst > 0 && l.calls_per_s == 0) f.get("burst")->fail("burst needs calls_per_s");
  return l;
}

Admin read_admin(const Value& v) {
  Admin a;
  Fields f = v.fields(keys::kAdmin);
  if (auto host = f.get("host")) a.host = host->non_empty_text();
  f.read("port", a.port, 0, 65535);
  return a;
}

}  // namespace mcpgw::config
