#pragma once
// Downstream MCP Streamable HTTP server: POST (JSON or SSE answers), GET
// (server-to-client SSE stream with heartbeats), DELETE (end session), with
// Host/Origin checks, bearer auth and body limits.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/downstream.hpp"

namespace mcpgw::transport {

/// A bearer token and the principal it authenticates.
struct BearerCredential {
  std::string token;
  std::string principal;
  std::vector<std::string> modes;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 ///< 0 = any free port
  std::string path = "/mcp";
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_hosts;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  int heartbeat_ms = 15000;
  int session_idle_s = 3600;
  bool auth_enabled = false;
  std::vector<BearerCredential> credentials;
  /// Worker threads; each open SSE stream holds one for its lifetime.
  int threads = 128;
};

/// A plain response for the small non-MCP endpoints.
struct SimpleResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, Handler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Adds a GET endpoint outside the MCP path (health, metrics).
  void add_get(const std::string& path, std::function<SimpleResponse()> fn);
  /// Binds the socket; returns the bound port or an error.
  Result<int> bind();
  /// Serves until stop(); call after bind().
  void serve();
  /// Stops accepting, ends open streams, waits for in-flight requests.
  void stop();
  /// Number of live sessions.
  std::size_t session_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(std::string_view host);

}  // namespace mcpgw::transport
