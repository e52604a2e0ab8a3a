// Client's discovery: the upstream's 401 and protected resource metadata
// (RFC 9728), the issuer's metadata (RFC 8414, OpenID Connect Discovery),
// and the client id: configured, a Client ID Metadata Document, or
// registered dynamically (RFC 7591).
#include <algorithm>
#include <cctype>

#include "jsonrpc/json.hpp"
#include "oauth/client.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::oauth {
namespace {

using Grant = config::ServerOAuth::Grant;

/// What an MCP request without a token draws from a protected server: 401.
constexpr std::string_view kProbe = R"({"jsonrpc":"2.0","id":"mcpgw-oauth-probe","method":"ping"})";

std::string normalized(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  std::string origin = origin_of(url);
  std::transform(origin.begin(), origin.end(), url.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return url;
}

/// RFC 9728 §3.3 and §7.3: metadata describes the resource it was asked for
/// (the upstream's url, or a prefix of it such as its origin).
bool covers(const std::string& resource, const std::string& url) {
  std::string r = normalized(resource), u = normalized(url);
  return u == r || (u.size() > r.size() && u.compare(0, r.size(), r) == 0 && (u[r.size()] == '/' || u[r.size()] == '?'));
}

std::vector<std::string> split_scopes(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    auto sp = s.find(' ');
    if (sp != 0) out.emplace_back(s.substr(0, sp));
    s = sp == std::string_view::npos ? std::string_view{} : s.substr(sp + 1);
  }
  return out;
}

}  // namespace

std::string_view step_name(Step s) {
  switch (s) {
    case Step::Discovery: return "discovery";
    case Step::Metadata: return "metadata";
    case Step::Registration: return "registration";
    case Step::Token: return "token";
    case Step::Authorization: return "authorization";
  }
  return "?";
}

std::string Client::failed(Step step, const std::string& url, const std::string& why) {
  return "OAuth " + std::string(step_name(step)) + " failed at " + url + ": " + why;
}

Task<Result<HttpAnswer>> Client::get_json(const std::string& url, Clock::time_point deadline, CancelSignal* cancel) {
  std::string method = "GET";
  transport::Headers headers{{"Accept", "application/json"}};
  co_return co_await fetch_.send(std::move(method), url, std::move(headers), std::string(), deadline, cancel);
}

Task<Result<Endpoints>> Client::endpoints(Clock::time_point deadline, CancelSignal* cancel) {
  // One discovery at a time: the others wait for its outcome.
  for (;;) {
    auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      if (endpoints_) co_return *endpoints_;
      if (!discovering_) {
        discovering_ = true;
        break;
      }
    }
    if (!co_await changed_.wait(seen, deadline, cancel))
      co_return Error{failed(Step::Discovery, url_, "no answer in time (discovery still under way)")};
  }
  auto found = co_await discover(deadline, cancel);
  {
    util::MutexLock lk(mu_);
    discovering_ = false;
    if (found) endpoints_ = *found;
  }
  changed_.notify();
  co_return found;
}

namespace {

/// What the provider's metadata adds to `ep`: the endpoints the
/// configuration does not name, and what the provider supports.
void take_metadata(Endpoints& ep, const ServerMetadata& meta, bool code) {
  if (ep.token_endpoint.empty()) ep.token_endpoint = meta.token_endpoint;
  if (code && ep.authorization_endpoint.empty()) ep.authorization_endpoint = meta.authorization_endpoint;
  ep.registration_endpoint = meta.registration_endpoint;
  ep.revocation_endpoint = meta.revocation_endpoint;
  ep.auth_methods = meta.token_endpoint_auth_methods;
  ep.cimd_supported = meta.client_id_metadata_document_supported;
}

}  // namespace

Task<Result<Endpoints>> Client::discover(Clock::time_point deadline, CancelSignal* cancel) {
  Endpoints ep;
  ep.issuer = cfg_.issuer;
  ep.token_endpoint = cfg_.token_endpoint;
  ep.authorization_endpoint = cfg_.authorization_endpoint;
  ep.resource = url_;
  ep.scopes = cfg_.scopes;
  bool code = cfg_.grant == Grant::AuthorizationCode;
  bool registers = code && cfg_.client_id.empty() && cfg_.client_id_metadata_url.empty();
  bool missing = ep.token_endpoint.empty() || (code && ep.authorization_endpoint.empty()) || registers;
  if (!missing) co_return ep;

  if (ep.issuer.empty()) {
    // Which authorization server: ask the upstream (MCP authorization,
    // "Authorization Server Discovery").
    std::string method = "POST", body(kProbe);
    transport::Headers headers{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}};
    auto probe = co_await fetch_.send(std::move(method), url_, std::move(headers), std::move(body), deadline, cancel);
    if (!probe) co_return Error{failed(Step::Discovery, url_, probe.error())};
    Challenge challenge;
    std::vector<std::string> urls;
    if (auto c = probe->status == 401 ? parse_challenge(probe->head.get("WWW-Authenticate")) : std::nullopt) {
      challenge = *c;
      if (!c->resource_metadata.empty()) urls.push_back(c->resource_metadata);
    }
    if (urls.empty()) urls = resource_metadata_urls(url_);
    std::optional<ResourceMetadata> prm;
    for (std::size_t i = 0; i < urls.size() && !prm; ++i) {
      const std::string& at = urls[i];
      // What the address guard says first: it names the rule (the https
      // rule below would refuse http://169.254.169.254 too, saying less).
      if (auto permitted = fetch_.permits(at); !permitted)
        co_return Error{failed(Step::Discovery, at.substr(0, 200), permitted.error())};
      if (origin_of(at).empty() || clear_text_remote(at))
        co_return Error{failed(Step::Discovery, url_, "the resource_metadata URL \"" + at.substr(0, 200) +
                                                         "\" is not an https URL (or http to a loopback host)")};
      auto got = co_await get_json(at, deadline, cancel);
      if (!got) co_return Error{failed(Step::Discovery, at, got.error())};
      if (got->status == 404 && i + 1 < urls.size()) continue;
      if (got->status != 200) {
        std::string why = status_text(*got);
        if (i > 0 || challenge.resource_metadata.empty())
          why = "the upstream answered an unauthenticated request with HTTP " + std::to_string(probe->status) +
                " and no Bearer challenge naming resource_metadata, and " + at + " answered " + why +
                "; set oauth.issuer (or the endpoints)";
        co_return Error{failed(Step::Discovery, at, why)};
      }
      auto parsed = parse_resource_metadata(got->body);
      if (!parsed) co_return Error{failed(Step::Discovery, at, "not protected resource metadata: " + parsed.error())};
      prm = std::move(*parsed);
    }
    if (!prm->resource.empty()) {
      if (!covers(prm->resource, url_))
        co_return Error{failed(Step::Discovery, urls.front(),
                               "the metadata is for resource " + prm->resource.substr(0, 200) + ", not " + url_)};
      ep.resource = prm->resource;
    }
    // RFC 9728 §7.6: the client picks among them; the first is the one meant.
    ep.issuer = prm->authorization_servers.front();
    if (ep.scopes.empty()) ep.scopes = !challenge.scope.empty() ? split_scopes(challenge.scope) : prm->scopes_supported;
  }

  auto meta = co_await server_metadata(ep.issuer, deadline, cancel);
  if (!meta) co_return Error{meta.error()};
  take_metadata(ep, *meta, code);
  if (code) {
    if (ep.authorization_endpoint.empty())
      co_return Error{failed(Step::Metadata, ep.issuer, "the provider's metadata has no authorization_endpoint")};
    // MCP authorization: no authorization code flow without PKCE S256.
    const auto& methods = meta->code_challenge_methods;
    if (std::find(methods.begin(), methods.end(), "S256") == methods.end())
      co_return Error{failed(Step::Metadata, ep.issuer,
                             "the provider does not offer PKCE S256 (code_challenge_methods_supported)")};
  }
  co_return ep;
}

Task<Result<ServerMetadata>> Client::server_metadata(const std::string& issuer, Clock::time_point deadline,
                                                     CancelSignal* cancel) {
  auto urls = server_metadata_urls(issuer);
  for (std::size_t i = 0; i < urls.size(); ++i) {
    auto got = co_await get_json(urls[i], deadline, cancel);
    if (!got) co_return Error{failed(Step::Metadata, urls[i], got.error())};
    // Not at this one of the well-known places: the next one.
    if ((got->status == 404 || got->status == 400 || got->status == 405) && i + 1 < urls.size()) continue;
    if (got->status != 200) co_return Error{failed(Step::Metadata, urls[i], status_text(*got))};
    auto meta = parse_server_metadata(got->body, issuer);
    if (!meta) co_return Error{failed(Step::Metadata, urls[i], "not authorization server metadata: " + meta.error())};
    co_return std::move(*meta);
  }
  co_return Error{failed(Step::Metadata, issuer, "no metadata found")};
}

Task<Result<std::string>> Client::client_id(const Endpoints& ep, Clock::time_point deadline, CancelSignal* cancel) {
  if (!cfg_.client_id.empty()) co_return cfg_.client_id;
  // The document is the preferred registration where the provider reads
  // them; where it does not but registers dynamically, that goes first.
  if (!cfg_.client_id_metadata_url.empty() && (ep.cimd_supported || ep.registration_endpoint.empty()))
    co_return cfg_.client_id_metadata_url;
  {
    util::MutexLock lk(mu_);
    if (!registered_client_.empty()) co_return registered_client_;
  }
  if (ep.registration_endpoint.empty())
    co_return Error{failed(Step::Registration, ep.issuer,
                           "oauth gives no client_id or client_id_metadata_url, and the provider offers no dynamic "
                           "client registration (registration_endpoint)")};
  std::string method = "POST", body = public_client_metadata(shared_->links().redirect_url, {}, join_scopes(ep.scopes));
  transport::Headers headers{{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  auto got = co_await fetch_.send(std::move(method), ep.registration_endpoint, std::move(headers), std::move(body),
                                  deadline, cancel);
  if (!got) co_return Error{failed(Step::Registration, ep.registration_endpoint, got.error())};
  auto doc = json::parse(got->body);
  auto id = doc && doc->IsObject() ? json::get_string(*doc, "client_id") : std::nullopt;
  if (got->status / 100 != 2 || !id || id->empty()) {
    auto err = parse_error_response(got->body);
    co_return Error{failed(Step::Registration, ep.registration_endpoint,
                           err ? "refused: " + err->error + (err->description.empty() ? "" : ": " + err->description)
                               : status_text(*got) + " without a client_id")};
  }
  util::MutexLock lk(mu_);
  registered_client_ = std::string(*id);
  co_return registered_client_;
}

}  // namespace mcpgw::oauth
