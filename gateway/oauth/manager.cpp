#include "oauth/manager.hpp"

#include <spdlog/spdlog.h>

#include "jsonrpc/json.hpp"
#include "util/hex.hpp"
#include "util/random.hpp"

namespace mcpgw::oauth {
namespace {

namespace http = transport::http;
using Grant = config::ServerOAuth::Grant;
using namespace std::chrono_literals;

/// How long a page may wait on a provider.
constexpr auto kPageDeadline = 20s;

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

/// A small page for the person in the browser.
http::Response page(int status, std::string_view title, std::string_view text) {
  std::string body = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                     "</title></head>\n<body><h1>" + html_escape(title) + "</h1>\n<p>" + html_escape(text) +
                     "</p></body></html>\n";
  return http::Response{status,
                        {{"Content-Type", "text/html; charset=utf-8"},
                         {"Cache-Control", "no-store"},
                         {"Referrer-Policy", "no-referrer"},
                         {"Content-Security-Policy", "default-src 'none'"}},
                        std::move(body)};
}

/// The cookie that binds a flow to the browser that opened its link.
std::string cookie_name(const Flow& f) { return "mcpgw_oauth_" + sha256_hex(f.id, 8); }

std::string query_of(const http::Request& req) {
  auto q = req.target.find('?');
  return q == std::string::npos ? std::string() : req.target.substr(q + 1);
}

std::string path_of(const std::string& url) {
  auto origin = origin_of(url);
  std::string rest = url.substr(origin.size());
  return rest.substr(0, rest.find_first_of("?#"));
}

}  // namespace

std::string default_redirect_url(const std::string& host, int port, bool tls) {
  std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port) + "/oauth/callback";
}

Result<std::unique_ptr<Manager>> Manager::create(const config::Config& cfg, transport::Io& io,
                                                 std::shared_ptr<TokenStore> store) {
  std::vector<std::string> secrets;
  if (!cfg.upstream_oauth.key.empty()) secrets.push_back(cfg.upstream_oauth.key);
  else secrets = cfg.cluster.secrets;
  // Memory only and no key: a key of this process (its links die with it,
  // as its tokens do).
  if (secrets.empty()) secrets.push_back(random_hex(32));
  auto shared = std::make_shared<Shared>(io, std::move(store), std::make_shared<const Vault>(secrets),
                                         std::make_shared<const Aead>("mcpgw upstream oauth flow key", secrets));
  auto m = std::make_unique<Manager>(io, shared);
  if (auto ok = m->configure(cfg); !ok) return Error{ok.error()};
  Manager* raw = m.get();
  shared->store->on_changed([raw](const std::string& key) { raw->changed_elsewhere(key); });
  return m;
}

Manager::Manager(transport::Io& io, std::shared_ptr<Shared> shared) : io_(io), shared_(std::move(shared)) {}

void Manager::set_hooks(Hooks hooks) {
  util::MutexLock lk(mu_);
  hooks_ = std::move(hooks);
}

void Manager::set_address(const config::Config& cfg, const std::string& host, int port, bool tls) {
  std::string redirect = cfg.upstream_oauth.redirect_url.empty() ? default_redirect_url(host, port, tls)
                                                                 : cfg.upstream_oauth.redirect_url;
  // The start page is the callback's sibling (a proxy in front maps both).
  std::string authorize = redirect.substr(0, redirect.find_first_of("?#"));
  authorize = authorize.substr(0, authorize.rfind('/') + 1) + "authorize";
  shared_->set_links({redirect, authorize});
}

Result<void> Manager::configure(const config::Config& cfg) {
  std::map<std::string, std::shared_ptr<Client>> next;
  std::map<std::string, config::Server> made;
  {
    util::MutexLock lk(mu_);
    for (const auto& s : cfg.servers) {
      if (!s.oauth) continue;
      auto same = configs_.find(s.name);
      if (same != configs_.end() && same->second == s) {
        next[s.name] = clients_.at(s.name);
      } else {
        auto c = Client::create(s, shared_);
        if (!c) return Error{c.error()};
        next[s.name] = *c;
      }
      made.emplace(s.name, s);
    }
    clients_ = std::move(next);
    configs_ = std::move(made);
  }
  return {};
}

std::shared_ptr<Client> Manager::find(const std::string& name) const {
  util::MutexLock lk(mu_);
  auto it = clients_.find(name);
  return it == clients_.end() ? nullptr : it->second;
}

std::map<std::string, std::shared_ptr<Client>> Manager::clients() const {
  util::MutexLock lk(mu_);
  return clients_;
}

bool Manager::consents() const {
  util::MutexLock lk(mu_);
  for (const auto& [name, c] : clients_)
    if (c->config().grant == Grant::AuthorizationCode) return true;
  return false;
}

void Manager::changed_elsewhere(const std::string& key) {
  for (const auto& [name, c] : clients()) c->changed_elsewhere(key);
}

Task<http::Response> Manager::authorize_page(const http::Request& req) {
  auto q = parse_query(query_of(req));
  auto text = param(q, "flow");
  auto flow = text ? open_flow(*shared_->flows, *text, unix_now()) : std::nullopt;
  if (!flow)
    co_return page(400, "Link not valid",
                   "This authorization link is not valid or has expired (links last " +
                       std::to_string(kFlowTtl.count() / 60) + " minutes). Call the tool again for a new one.");
  auto client = find(flow->server);
  if (!client || client->config().grant != Grant::AuthorizationCode)
    co_return page(404, "Unknown server", "The gateway no longer has an upstream \"" + flow->server +
                                              "\" that authorizes per user.");
  const auto deadline = std::chrono::steady_clock::now() + kPageDeadline;
  auto r = co_await client->authorize(*flow, deadline);
  if (!r) {
    spdlog::warn("upstream {}: the consent page could not start the authorization: {}", flow->server, r.error());
    co_return page(502, "Authorization server unavailable", r.error());
  }
  std::string cookie = cookie_name(*flow) + "=" + r->cookie + "; Max-Age=" + std::to_string(kFlowTtl.count()) +
                       "; HttpOnly; SameSite=Lax";
  if (shared_->links().redirect_url.rfind("https://", 0) == 0) cookie += "; Secure";
  http::Response out = page(302, "Redirecting", "Continue at the authorization server.");
  out.headers.push_back({"Location", r->location});
  out.headers.push_back({"Set-Cookie", std::move(cookie)});
  co_return out;
}

Task<http::Response> Manager::callback_page(const http::Request& req) {
  auto q = parse_query(query_of(req));
  auto state = param(q, "state");
  auto flow = state ? open_flow(*shared_->flows, *state, unix_now()) : std::nullopt;
  // Forged, altered or expired: nothing here started it.
  if (!flow || flow->browser.empty())
    co_return page(400, "Authorization not recognized",
                   "The state of this authorization is not valid or has expired. Call the tool again for a new link.");
  if (sha256_hex(cookie(req.get("Cookie"), cookie_name(*flow))) != flow->browser) {
    spdlog::warn("upstream {}: an authorization callback for principal {} came from a browser that did not start it",
                 flow->server, flow->principal.empty() ? "-" : flow->principal);
    co_return page(400, "Authorization not recognized",
                   "This browser did not start this authorization (its cookie is missing). Open the link you were "
                   "given in this browser.");
  }
  auto client = find(flow->server);
  if (!client || client->config().grant != Grant::AuthorizationCode)
    co_return page(404, "Unknown server", "The gateway no longer has an upstream \"" + flow->server + "\".");
  const std::string used = "flow:" + flow->id;
  auto first = co_await shared_->store->use_once(used, flow->created + kFlowTtl.count());
  if (!first) co_return page(503, "Try again", "The token store cannot tell whether this authorization was used: " + first.error());
  if (!*first)
    co_return page(400, "Authorization already used",
                   "This authorization was completed (or tried) already. Call the tool again for a new link.");
  if (auto error = param(q, "error")) {
    std::string why = *error + (param(q, "error_description") ? ": " + *param(q, "error_description") : "");
    if (why.size() > 300) why.resize(300);
    spdlog::info("upstream {}: principal {} did not authorize the gateway: {}", flow->server,
                 flow->principal.empty() ? "-" : flow->principal, why);
    client->refused(*flow, "refused: " + why);
    co_return page(403, "Not authorized", "The authorization server answered: " + why);
  }
  auto code = param(q, "code");
  if (!code || code->empty()) co_return page(400, "Authorization incomplete", "The authorization server sent no code.");
  const auto deadline = std::chrono::steady_clock::now() + kPageDeadline;
  auto done = co_await client->complete(*flow, *code, deadline);
  if (!done) {
    spdlog::warn("upstream {}: completing principal {}'s authorization failed: {}", flow->server,
                 flow->principal.empty() ? "-" : flow->principal, done.error());
    co_return page(502, "Authorization failed", done.error());
  }
  Hooks hooks;
  {
    util::MutexLock lk(mu_);
    hooks = hooks_;
  }
  if (hooks.consented) hooks.consented(*flow);
  co_return page(200, "Authorized",
                 "mcpgw may now use " + flow->server + " for you. You can close this window and return to your client.");
}

std::vector<std::string> Manager::metadata_paths() const {
  std::vector<std::string> out;
  for (const auto& [name, c] : clients())
    if (!c->config().client_id_metadata_url.empty()) out.push_back(path_of(c->config().client_id_metadata_url));
  return out;
}

http::Response Manager::metadata_document(std::string_view path) const {
  for (const auto& [name, c] : clients()) {
    const std::string& url = c->config().client_id_metadata_url;
    if (url.empty() || path_of(url) != path) continue;
    return http::Response{200,
                          {{"Content-Type", "application/json"}, {"Cache-Control", "max-age=300"}},
                          public_client_metadata(shared_->links().redirect_url, url)};
  }
  return http::Response{404, {}, {}};
}

Task<Result<std::vector<std::string>>> Manager::revoke(const std::string& principal, const std::string& server) {
  std::vector<std::string> had;
  auto all = clients();
  if (!server.empty() && !all.count(server)) co_return Error{"no upstream \"" + server + "\" with oauth"};
  for (const auto& [name, c] : all) {
    if (!server.empty() && name != server) continue;
    if (!c->per_principal()) continue;
    const auto deadline = std::chrono::steady_clock::now() + kPageDeadline;
    auto r = co_await c->revoke(principal, deadline);
    if (!r) co_return Error{"upstream " + name + ": " + r.error()};
    if (!*r) continue;
    had.push_back(name);
    spdlog::info("upstream {}: principal {}'s tokens were revoked", name, principal.empty() ? "-" : principal);
    Hooks hooks;
    {
      util::MutexLock lk(mu_);
      hooks = hooks_;
    }
    if (hooks.revoked) hooks.revoked(name, principal);
  }
  co_return had;
}

}  // namespace mcpgw::oauth
