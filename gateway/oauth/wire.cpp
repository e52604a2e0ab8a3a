#include "oauth/wire.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <tuple>

#include "jsonrpc/json.hpp"
#include "transport/address_policy.hpp"
#include "util/ascii.hpp"
#include "util/base64.hpp"
#include "util/hex.hpp"
#include "util/random.hpp"

namespace mcpgw::oauth {
namespace {

bool unreserved(unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

std::optional<std::string> url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = hex_digit_value(s[i + 1]), lo = hex_digit_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string lower(std::string_view s) { return ascii_lowered(std::string(s)); }

/// (scheme://authority, path without a trailing "/") of an absolute URL.
std::pair<std::string, std::string> split(const std::string& url) {
  auto scheme = url.find("://");
  auto slash = scheme == std::string::npos ? std::string::npos : url.find_first_of("/?#", scheme + 3);
  if (slash == std::string::npos) return {url, ""};
  std::string path = url.substr(slash, url.find_first_of("?#", slash) - slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return {url.substr(0, slash), path};
}

std::vector<std::string> strings_of(const json::Value& doc, std::string_view key) {
  std::vector<std::string> out;
  const json::Value* v = json::find(doc, key);
  if (v && v->IsArray())
    for (const auto& item : v->GetArray())
      if (item.IsString()) out.emplace_back(item.GetString(), item.GetStringLength());
  return out;
}

std::string string_of(const json::Value& doc, std::string_view key) {
  auto v = json::get_string(doc, key);
  return v ? std::string(*v) : std::string();
}

/// An endpoint a document names: absolute, and no clear text to a remote host.
Result<std::string> endpoint_of(const json::Value& doc, std::string_view key, bool required) {
  std::string url = string_of(doc, key);
  if (url.empty()) {
    if (required) return Error{"it has no " + std::string(key)};
    return url;
  }
  if (origin_of(url).empty()) return Error{std::string(key) + " is not an absolute http(s) URL"};
  if (clear_text_remote(url)) return Error{std::string(key) + " " + url + " is plain http to a host that is not loopback"};
  return url;
}

Result<json::Document> object_of(std::string_view body) {
  auto doc = json::parse(body);
  if (!doc) return Error{"the answer is not JSON"};
  if (!doc->IsObject()) return Error{"the answer is not a JSON object"};
  return std::move(*doc);
}

}  // namespace

std::string join_scopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string public_client_metadata(const std::string& redirect_url, const std::string& client_id,
                                   const std::string& scope) {
  json::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  if (!client_id.empty()) {
    d.AddMember("client_id", json::str(client_id, a), a);
    d.AddMember("client_uri", json::str(origin_of(client_id), a), a);
  }
  d.AddMember("client_name", "mcpgw", a);
  json::Value redirects(rapidjson::kArrayType), grants(rapidjson::kArrayType), types(rapidjson::kArrayType);
  redirects.PushBack(json::str(redirect_url, a), a);
  grants.PushBack("authorization_code", a).PushBack("refresh_token", a);
  types.PushBack("code", a);
  d.AddMember("redirect_uris", redirects, a);
  d.AddMember("grant_types", grants, a);
  d.AddMember("response_types", types, a);
  // PKCE protects the code, and no secret has to be shared among replicas.
  d.AddMember("token_endpoint_auth_method", "none", a);
  if (!scope.empty()) d.AddMember("scope", json::str(scope, a), a);
  return json::write(d);
}

std::string random_token(std::size_t bytes) { return base64url(random_bytes(bytes)); }

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if (unreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string form_encode(const Params& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out.push_back('&');
    out += url_encode(k) + "=" + url_encode(v);
  }
  return out;
}

Params parse_query(std::string_view query) {
  Params out;
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto key = url_decode(pair.substr(0, eq));
    auto value = url_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (key && value) out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

std::optional<std::string> param(const Params& params, std::string_view name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return std::nullopt;
}

std::string cookie(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    auto semi = header.find(';');
    std::string_view part = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    auto eq = part.find('=');
    if (eq != std::string_view::npos && part.substr(0, eq) == name) return std::string(part.substr(eq + 1));
  }
  return {};
}

std::optional<Challenge> parse_challenge(std::string_view header) {
  // Challenges are "scheme param=value, param="value", scheme2 ...": find
  // the Bearer one and read its parameters up to the next scheme.
  std::string lowered = lower(header);
  std::size_t at = 0;
  for (;;) {
    at = lowered.find("bearer", at);
    if (at == std::string::npos) return std::nullopt;
    bool starts = at == 0 || lowered[at - 1] == ' ' || lowered[at - 1] == ',';
    bool ends = at + 6 == lowered.size() || lowered[at + 6] == ' ';
    if (starts && ends) break;
    at += 6;
  }
  Challenge c;
  std::size_t i = at + 6;
  auto skip = [&] {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
  };
  for (;;) {
    skip();
    std::size_t name_start = i;
    while (i < header.size() && header[i] != '=' && header[i] != ' ' && header[i] != ',') ++i;
    std::string name = lower(header.substr(name_start, i - name_start));
    if (name.empty() || i >= header.size() || header[i] != '=') return c;  // the next scheme (or the end)
    ++i;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      for (++i; i < header.size() && header[i] != '"'; ++i) {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value.push_back(header[i]);
      }
      ++i;
    } else {
      while (i < header.size() && header[i] != ',' && header[i] != ' ') value.push_back(header[i++]);
    }
    if (name == "resource_metadata") c.resource_metadata = value;
    else if (name == "scope") c.scope = value;
    else if (name == "error") c.error = value;
  }
}

std::vector<std::string> resource_metadata_urls(const std::string& resource) {
  auto [origin, path] = split(resource);
  std::vector<std::string> out;
  if (!path.empty()) out.push_back(origin + "/.well-known/oauth-protected-resource" + path);
  out.push_back(origin + "/.well-known/oauth-protected-resource");
  return out;
}

std::vector<std::string> server_metadata_urls(const std::string& issuer) {
  auto [origin, path] = split(issuer);
  if (path.empty())
    return {origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"};
  return {origin + "/.well-known/oauth-authorization-server" + path,
          origin + "/.well-known/openid-configuration" + path, origin + path + "/.well-known/openid-configuration"};
}

Result<ResourceMetadata> parse_resource_metadata(std::string_view body) {
  auto doc = object_of(body);
  if (!doc) return Error{doc.error()};
  ResourceMetadata m;
  m.resource = string_of(*doc, "resource");
  m.authorization_servers = strings_of(*doc, "authorization_servers");
  m.scopes_supported = strings_of(*doc, "scopes_supported");
  if (m.authorization_servers.empty()) return Error{"it names no authorization_servers"};
  for (const auto& s : m.authorization_servers) {
    if (origin_of(s).empty()) return Error{"authorization server \"" + s.substr(0, 200) + "\" is not an absolute URL"};
    if (clear_text_remote(s)) return Error{"authorization server " + s + " is plain http to a host that is not loopback"};
  }
  return m;
}

Result<ServerMetadata> parse_server_metadata(std::string_view body, std::string_view issuer) {
  auto doc = object_of(body);
  if (!doc) return Error{doc.error()};
  ServerMetadata m;
  m.issuer = string_of(*doc, "issuer");
  auto trimmed = [](std::string_view s) {
    while (!s.empty() && s.back() == '/') s.remove_suffix(1);
    return s;
  };
  if (trimmed(m.issuer) != trimmed(issuer))
    return Error{"it names issuer \"" + m.issuer.substr(0, 200) + "\", not " + std::string(issuer)};
  for (auto [key, out, required] : {std::tuple{"token_endpoint", &m.token_endpoint, true},
                                    std::tuple{"authorization_endpoint", &m.authorization_endpoint, false},
                                    std::tuple{"registration_endpoint", &m.registration_endpoint, false},
                                    std::tuple{"revocation_endpoint", &m.revocation_endpoint, false}}) {
    auto url = endpoint_of(*doc, key, required);
    if (!url) return Error{url.error()};
    *out = std::move(*url);
  }
  m.code_challenge_methods = strings_of(*doc, "code_challenge_methods_supported");
  m.token_endpoint_auth_methods = strings_of(*doc, "token_endpoint_auth_methods_supported");
  const json::Value* cimd = json::find(*doc, "client_id_metadata_document_supported");
  m.client_id_metadata_document_supported = cimd && cimd->IsTrue();
  return m;
}

Result<TokenResponse> parse_token_response(std::string_view body) {
  auto doc = object_of(body);
  if (!doc) return Error{doc.error()};
  TokenResponse t;
  t.access_token = string_of(*doc, "access_token");
  if (t.access_token.empty()) return Error{"it has no access_token"};
  std::string type = lower(string_of(*doc, "token_type"));
  // A DPoP or MAC token would need proof the gateway does not send.
  if (type != "bearer") return Error{"its token_type is \"" + type.substr(0, 40) + "\", not Bearer"};
  t.refresh_token = string_of(*doc, "refresh_token");
  t.scope = string_of(*doc, "scope");
  if (const json::Value* e = json::find(*doc, "expires_in")) {
    if (e->IsInt64() && e->GetInt64() > 0) t.expires_in = e->GetInt64();
    else if (e->IsNumber() && e->GetDouble() > 0) t.expires_in = static_cast<std::int64_t>(e->GetDouble());
    else if (e->IsString()) t.expires_in = std::max<std::int64_t>(0, std::atoll(e->GetString()));
  }
  return t;
}

std::optional<ErrorResponse> parse_error_response(std::string_view body) {
  auto doc = json::parse(body);
  if (!doc || !doc->IsObject()) return std::nullopt;
  ErrorResponse e{string_of(*doc, "error"), string_of(*doc, "error_description")};
  if (e.error.empty()) return std::nullopt;
  // What a provider says goes into messages: bounded, one line.
  for (auto* s : {&e.error, &e.description}) {
    if (s->size() > 300) s->resize(300);
    std::replace_if(s->begin(), s->end(), [](unsigned char c) { return c < 0x20; }, ' ');
  }
  return e;
}

std::string pkce_verifier() { return random_token(32); }

std::string pkce_challenge(std::string_view verifier) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), md);
  return base64url(std::string_view(reinterpret_cast<const char*>(md), sizeof md));
}

std::string origin_of(std::string_view url) {
  std::string l = lower(url.substr(0, 8));
  std::size_t start = l.rfind("https://", 0) == 0 ? 8 : l.rfind("http://", 0) == 0 ? 7 : 0;
  if (start == 0) return {};
  auto end = url.find_first_of("/?#", start);
  if (end == start) return {};
  return std::string(url.substr(0, end));
}

bool clear_text_remote(std::string_view url) {
  if (lower(url.substr(0, 7)) != "http://") return false;
  std::string host(url.substr(7, url.find_first_of("/?#", 7) - 7));
  if (auto at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.find(']') - 1);
  else if (auto colon = host.rfind(':'); colon != std::string::npos) host = host.substr(0, colon);
  // Loopback in any spelling ("127.1", "[::ffff:127.0.0.1]") stays on the host.
  return !transport::is_loopback_host(host);
}

}  // namespace mcpgw::oauth
