#pragma once
// The event loops every socket, pipe, timer and child process of the gateway
// lives on: one worker per I/O thread, each an io_context run by that thread
// alone (Envoy's model). A connection, and the calls made for it, stay on
// the worker that accepted it: its HTTP upstream connections come from that
// worker's pool, so a request crosses to another thread only where a
// resource is single (a stdio child's pipes, a plugin handler). Nothing run
// on a worker may block; only plugin handlers (a synchronous C ABI) block,
// on the plugin pool.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "util/buffer_cache.hpp"

namespace mcpgw::transport {

namespace asio = boost::asio;

/// Owns the workers and their threads. Work is kept alive until stop(), so
/// the threads idle instead of returning while nothing is queued.
class Io {
 public:
  /// `threads` = 0: one per core.
  explicit Io(unsigned threads = 0);
  ~Io();
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;

  /// The calling thread's worker; from outside the loop, the next worker in
  /// turn (where long-lived work is spread).
  asio::io_context& context();
  /// context()'s executor.
  asio::any_io_executor executor() { return context().get_executor(); }
  /// The next worker in turn, wherever the caller runs (where an accepted
  /// connection goes).
  asio::io_context& next();
  /// Worker `i` (0 <= i < threads()).
  asio::io_context& worker(unsigned i);
  /// The number of the worker running `ctx`, or -1 when it is none of ours.
  int index_of(const asio::io_context& ctx) const;
  /// Number of workers (one thread each).
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }
  /// Which worker the calling thread runs, or -1 off the loop.
  int current() const;
  /// True on one of this loop's threads (where blocking is forbidden).
  bool in_loop() const { return current() >= 0; }
  /// Stops every worker and joins its thread; idempotent. Handlers still
  /// queued are destroyed without running.
  void stop();
  /// The large buffers (answers' bodies) kept for reuse, for every worker;
  /// the first worker lets go of the stale ones each second.
  BufferCache& buffers() { return buffers_; }

 private:
  /// A burst of large answers (four of 16 MiB at once) reuses its buffers;
  /// an idle gateway gives them back within seconds.
  BufferCache buffers_{64 << 20, std::chrono::seconds(5)};
  struct Worker;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<unsigned> turn_{0};
};

}  // namespace mcpgw::transport
