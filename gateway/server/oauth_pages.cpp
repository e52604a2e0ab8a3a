// The gateway's OAuth endpoints: a consent link's start page and the
// callback (on the MCP listener, where browsers are sent, with no gateway
// credentials: the sealed flow and the browser's cookie bind them), the
// Client ID Metadata Documents, and revocation (on the admin listener, or
// the MCP one without it; authenticated like an MCP request).
#include <spdlog/spdlog.h>

#include "oauth/wire.hpp"
#include "server/gateway.hpp"

namespace mcpgw::server {
namespace {

namespace http = transport::http;

http::Response json_answer(int status, const json::Value& body) {
  return http::Response{status, {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}}, json::write(body)};
}

http::Response json_message(int status, const std::string& message) {
  json::Document d(rapidjson::kObjectType);
  d.AddMember("error", json::str(message, d.GetAllocator()), d.GetAllocator());
  return json_answer(status, d);
}

bool method_is(const http::Request& req, std::initializer_list<std::string_view> allowed) {
  return std::find(allowed.begin(), allowed.end(), req.method) != allowed.end();
}

/// The pages a browser and a provider reach: a consent link's start page,
/// the callback, the Client ID Metadata Documents.
template <typename Server>
void add_consent_pages(Server& server, oauth::Manager* m) {
  server.add_route("/oauth/authorize", [m](const http::Request& req) -> Task<http::Response> {
    if (!method_is(req, {"GET", "HEAD"})) co_return http::Response{405, {{"Allow", "GET"}}, {}};
    co_return co_await m->authorize_page(req);
  });
  server.add_route("/oauth/callback", [m](const http::Request& req) -> Task<http::Response> {
    if (!method_is(req, {"GET", "HEAD"})) co_return http::Response{405, {{"Allow", "GET"}}, {}};
    co_return co_await m->callback_page(req);
  });
  for (const auto& path : m->metadata_paths())
    server.add_route(path, [m, path](const http::Request& req) -> Task<http::Response> {
      if (!method_is(req, {"GET", "HEAD"})) co_return http::Response{405, {{"Allow", "GET"}}, {}};
      co_return m->metadata_document(path);
    });
}

}  // namespace

std::unique_ptr<transport::AdminServer> Gateway::serve_consent_pages() {
  auto cfg = config();
  if (!oauth_ || !oauth_->consents()) return nullptr;
  auto pages = std::make_unique<transport::AdminServer>(cfg->listen.host, cfg->listen.port, io_);
  add_consent_pages(*pages, oauth_.get());
  auto bound = pages->bind();
  if (!bound) {
    spdlog::error("upstream OAuth: cannot serve the consent pages: {}", bound.error());
    return nullptr;
  }
  oauth_->set_address(*cfg, cfg->listen.host, *bound, false);
  pages->start();
  spdlog::info("upstream OAuth consent pages on {}:{}", cfg->listen.host, *bound);
  return pages;
}

void Gateway::add_oauth_endpoints(transport::HttpServer& mcp, transport::AdminServer* admin) {
  oauth::Manager* m = oauth_.get();
  add_consent_pages(mcp, m);
  auto revoke = [m, authority = &mcp](const http::Request& req) -> Task<http::Response> {
    if (!method_is(req, {"POST", "DELETE"})) co_return http::Response{405, {{"Allow", "POST, DELETE"}}, {}};
    auto who = co_await authority->authenticate(req);
    if (auto* refused = std::get_if<http::Response>(&who)) co_return std::move(*refused);
    const std::string& principal = std::get<std::string>(who);
    auto q = req.target.find('?');
    std::string server =
        oauth::param(oauth::parse_query(q == std::string::npos ? "" : req.target.substr(q + 1)), "server").value_or("");
    if (!server.empty() && !m->find(server)) co_return json_message(404, "no upstream \"" + server + "\" with oauth");
    auto revoked = co_await m->revoke(principal, server);
    if (!revoked) co_return json_message(503, revoked.error());
    json::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("principal", json::str(principal, a), a);
    json::Value list(rapidjson::kArrayType);
    for (const auto& s : *revoked) list.PushBack(json::str(s, a), a);
    d.AddMember("revoked", list, a);
    co_return json_answer(200, d);
  };
  if (admin) admin->add_route("/oauth/revoke", revoke);
  else mcp.add_route("/oauth/revoke", revoke);
}

}  // namespace mcpgw::server
