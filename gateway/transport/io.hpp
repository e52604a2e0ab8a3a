#pragma once
// The event loop every socket, pipe, timer and child process of the gateway
// lives on: one io_context run by a small fixed set of I/O threads. Nothing
// run on it may block; blocking work goes to a WorkerPool.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>
#include <vector>

namespace mcpgw::transport {

namespace asio = boost::asio;

/// Owns the io_context and its threads. Work is kept alive until stop(), so
/// the threads idle instead of returning while nothing is queued.
class Io {
 public:
  /// `threads` = 0: one per core.
  explicit Io(unsigned threads = 0);
  ~Io();
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;

  asio::io_context& context() { return ctx_; }
  asio::any_io_executor executor() { return ctx_.get_executor(); }
  /// Number of I/O threads running the loop.
  unsigned threads() const { return static_cast<unsigned>(threads_.size()); }
  /// True on one of this loop's threads (where blocking is forbidden).
  bool in_loop() { return ctx_.get_executor().running_in_this_thread(); }
  /// Stops the loop and joins its threads; idempotent. Handlers still queued
  /// are destroyed without running.
  void stop();

 private:
  asio::io_context ctx_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

}  // namespace mcpgw::transport
