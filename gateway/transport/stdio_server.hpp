#pragma once
// Downstream MCP over our own stdin/stdout: one client, newline-delimited
// JSON-RPC. Nothing but protocol messages is ever written to stdout.
#include <memory>
#include <string>

#include "transport/batch.hpp"
#include "transport/downstream.hpp"
#include "transport/io.hpp"

namespace mcpgw::transport {

/// Serves one client on two file descriptors, with both on the I/O loop:
/// reading and writing are coroutines, no thread waits on either.
class StdioServer {
 public:
  /// `batches` bounds the JSON-RPC batches the client sends.
  StdioServer(Handler& handler, ClientContext ctx, Io& io, BatchLimits batches = {}, int in_fd = 0, int out_fd = 1);
  ~StdioServer();
  StdioServer(const StdioServer&) = delete;
  StdioServer& operator=(const StdioServer&) = delete;
  /// Serves until stdin closes (or stop()), then waits for the requests in
  /// flight and for their answers to be written; blocks the caller.
  /// Fails when the session cannot be opened (e.g. unknown mode).
  Result<void> run();
  /// Makes run() return as if stdin had closed; safe from any thread.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcpgw::transport
