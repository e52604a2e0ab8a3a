#pragma once
// The `admin` listener: the operator's endpoints (/healthz, /readyz,
// /metrics) on their own address, so the public MCP listener does not
// serve them.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "transport/http_server.hpp"

namespace mcpgw::transport {

class AdminServer {
 public:
  /// Serves on `host:port` (0 = any free port) on `io`'s threads.
  AdminServer(std::string host, int port, Io& io);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  /// Adds a GET endpoint; `fn` runs on an I/O thread and must not block.
  /// Call before start().
  /// The admin listener has no authentication (keep it on a private
  /// address): `access` is accepted for the same calls as HttpServer's.
  void add_get(const std::string& path, std::function<SimpleResponse()> fn, GetAccess access = GetAccess::Open);
  /// Binds; the bound port or "cannot listen on HOST:PORT: why".
  Result<int> bind();
  /// Starts accepting (after bind()).
  void start();
  /// Stops accepting and waits for the open connections; idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpgw::transport
