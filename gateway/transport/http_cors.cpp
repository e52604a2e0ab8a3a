#include "transport/http_cors.hpp"

namespace mcpgw::transport {
namespace {

/// What an MCP client sends besides the CORS-safelisted headers.
constexpr const char* kAllowHeaders =
    "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, "
    "Mcp-Name";
constexpr const char* kExposeHeaders = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version";

}  // namespace

http::Response cors_preflight(const http::Request& req, const std::string& origin) {
  http::Response r{204, {}, {}};
  r.headers.push_back({"Access-Control-Allow-Origin", origin});
  r.headers.push_back({"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"});
  // Mcp-Param-<name> headers differ by tool: grant what the browser asks
  // for when it asks, the fixed list otherwise.
  std::string asked(req.get("Access-Control-Request-Headers"));
  r.headers.push_back({"Access-Control-Allow-Headers", asked.empty() ? kAllowHeaders : asked});
  r.headers.push_back({"Access-Control-Max-Age", "600"});
  r.headers.push_back({"Vary", "Origin"});
  return r;
}

void CorsResponder::decorate(http::Response& r) const {
  r.headers.push_back({"Access-Control-Allow-Origin", origin_});
  r.headers.push_back({"Access-Control-Expose-Headers", kExposeHeaders});
  r.headers.push_back({"Vary", "Origin"});
}

Task<bool> CorsResponder::send(http::Response r) {
  decorate(r);
  co_return co_await inner_.send(std::move(r));
}

Task<http::StreamEnd> CorsResponder::stream(http::Response head, std::shared_ptr<http::StreamQueue> queue,
                                            http::StreamOptions opts) {
  decorate(head);
  co_return co_await inner_.stream(std::move(head), std::move(queue), std::move(opts));
}

}  // namespace mcpgw::transport
