#include "server/revoke.hpp"

#include <boost/asio/strand.hpp>

#include "jsonrpc/json.hpp"
#include "oauth/fetch.hpp"
#include "oauth/wire.hpp"
#include "util/offload.hpp"

namespace mcpgw::server {
namespace {

/// Where the gateway of `cfg` answers revocations; "" when it cannot be
/// told (a port picked at start).
std::string endpoint_of(const config::Config& cfg) {
  bool tls = !cfg.admin && cfg.listen.tls.enabled();
  const std::string& host = cfg.admin ? cfg.admin->host : cfg.listen.host;
  int port = cfg.admin ? cfg.admin->port : cfg.listen.port;
  if (port == 0) return {};
  std::string shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "[::1]" : host;
  if (shown.find(':') != std::string::npos && shown.front() != '[') shown = "[" + shown + "]";
  return std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port) + "/oauth/revoke";
}

}  // namespace

int run_revoke(const config::Config& cfg, const std::string& server, const std::string& url, const std::string& token,
               std::ostream& out, std::ostream& err) {
  std::string at = url.empty() ? endpoint_of(cfg) : url;
  if (at.empty()) {
    err << "mcpgw: " << cfg.source << " gives port 0 (picked at start): pass --url http://HOST:PORT/oauth/revoke\n";
    return 2;
  }
  if (!server.empty()) at += (at.find('?') == std::string::npos ? "?server=" : "&server=") + oauth::url_encode(server);
  transport::Io io(1);
  oauth::Fetcher fetch(io, {});
  transport::Headers headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto answer = block_on(asio::make_strand(io.executor()),
                         fetch.send("POST", at, std::move(headers), std::string(), deadline),
                         []() -> Result<oauth::HttpAnswer> { return Error{"the I/O loop stopped"}; });
  io.stop();
  if (!answer) {
    err << "mcpgw: " << at << ": " << answer.error() << "\n";
    return 1;
  }
  auto doc = json::parse(answer->body);
  if (answer->status != 200 || !doc || !doc->IsObject()) {
    auto why = doc && doc->IsObject() ? json::get_string(*doc, "error") : std::nullopt;
    err << "mcpgw: " << at << " answered HTTP " << answer->status << ": "
        << (why ? std::string(*why) : answer->body.substr(0, 300)) << "\n";
    return 1;
  }
  const json::Value* revoked = json::find(*doc, "revoked");
  std::string who(json::get_string(*doc, "principal").value_or(""));
  std::string list;
  if (revoked && revoked->IsArray())
    for (const auto& s : revoked->GetArray())
      if (s.IsString()) list += (list.empty() ? "" : ", ") + std::string(s.GetString());
  out << (list.empty() ? "no stored tokens of " + (who.empty() ? std::string("anonymous clients") : who) + " to revoke"
                       : "revoked the tokens of " + (who.empty() ? std::string("anonymous clients") : who) + " at " + list)
      << "\n";
  return 0;
}

}  // namespace mcpgw::server
