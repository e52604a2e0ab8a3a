#pragma once
// CORS for the origins listed in listen.allowed_origins, so a browser-based
// MCP client on such an origin can connect: the preflight (OPTIONS) is
// answered, and every response names the origin and exposes the headers an
// MCP client must read. Other origins get no CORS headers (and the
// admission refuses them).
#include <memory>
#include <string>

#include "transport/http_listener.hpp"

namespace mcpgw::transport {

/// The answer to a preflight from `origin` (already allowed).
http::Response cors_preflight(const http::Request& req, const std::string& origin);

/// A Responder that adds the CORS headers for `origin` to whatever `inner`
/// sends.
class CorsResponder final : public http::Responder {
 public:
  CorsResponder(http::Responder& inner, std::string origin) : inner_(inner), origin_(std::move(origin)) {}
  Task<bool> send(http::Response r) override;
  Task<http::StreamEnd> stream(http::Response head, std::shared_ptr<http::StreamQueue> queue,
                               http::StreamOptions opts) override;
  boost::asio::any_io_executor executor() override { return inner_.executor(); }
  bool answered() const override { return inner_.answered(); }

 private:
  void decorate(http::Response& r) const;
  http::Responder& inner_;
  std::string origin_;
};

}  // namespace mcpgw::transport
