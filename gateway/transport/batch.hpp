#pragma once
// JSON-RPC batches as the downstream transports take them on: how large
// one may be, and how many of its requests run at once (the rest wait in
// order), so that one body costs the gateway a bounded amount however many
// calls it packs.
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

/// limits.max_batch_size and limits.batch_concurrency.
struct BatchLimits {
  std::size_t max_size = 100;   ///< messages in one batch; 0 = any number
  std::size_t concurrency = 8;  ///< of its requests running at once
};

/// The error reply refusing a whole batch of `size` messages, over `max`.
std::string batch_refusal(std::size_t size, std::size_t max);

/// Runs the requests of one batch at most `concurrency` at a time, in
/// order: each start() runs the next one when a slot is free; done() (from
/// any thread, once per started request, when it has its reply) frees its
/// slot. A request answered within its own start() frees its slot without
/// nesting: the gate starts the next one in a loop, never by recursion.
class BatchGate : public std::enable_shared_from_this<BatchGate> {
 public:
  explicit BatchGate(std::size_t concurrency) : concurrency_(concurrency == 0 ? 1 : concurrency) {}
  /// Queues `start` (which hands one request over); runs it now if a slot is free.
  void start(std::function<void()> start);
  /// A started request has its reply.
  void done();

 private:
  /// Runs what waits while slots are free (without the lock while one runs).
  void drain() EXCLUDES(mu_);

  const std::size_t concurrency_;
  util::Mutex mu_;
  std::deque<std::function<void()>> waiting_ GUARDED_BY(mu_);
  std::size_t running_ GUARDED_BY(mu_) = 0;
  bool draining_ GUARDED_BY(mu_) = false;
};

}  // namespace mcpgw::transport
