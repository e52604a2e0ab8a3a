#pragma once
// Downstream MCP over our own stdin/stdout: one client, newline-delimited
// JSON-RPC. Nothing but protocol messages is ever written to stdout.
#include <string>

#include "transport/downstream.hpp"

namespace mcpgw::transport {

class StdioServer {
 public:
  StdioServer(Handler& handler, ClientContext ctx, int in_fd = 0, int out_fd = 1);
  /// Serves until stdin closes (or stop()), then waits for requests in flight.
  /// Fails when the session cannot be opened (e.g. unknown mode).
  Result<void> run();
  /// Makes run() return as if stdin had closed; safe from another thread.
  void stop();

 private:
  Handler& handler_;
  ClientContext ctx_;
  int in_, out_;
  int wake_[2] = {-1, -1};
};

}  // namespace mcpgw::transport
