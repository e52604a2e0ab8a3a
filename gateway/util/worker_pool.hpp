#pragma once
// An elastic pool of threads for work that blocks on upstreams.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "util/thread_annotations.hpp"

namespace mcpgw {

/// Runs submitted tasks on worker threads. Grows a thread whenever no worker
/// is idle (up to `max_threads`), so a task blocked on a slow upstream never
/// delays an unrelated one; idle threads beyond `min_threads` exit after
/// `idle_ms`. The destructor finishes queued tasks and joins every thread.
class WorkerPool {
 public:
  WorkerPool(std::size_t min_threads, std::size_t max_threads, int idle_ms = 30000);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Queues `task`; returns false once the pool is shutting down.
  bool submit(std::function<void()> task);

 private:
  void run();

  util::Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  std::vector<std::thread::id> exited_ GUARDED_BY(mu_);
  const std::size_t min_, max_;
  std::size_t idle_ GUARDED_BY(mu_) = 0;
  std::size_t live_ GUARDED_BY(mu_) = 0;
  const int idle_ms_;
  bool stopping_ GUARDED_BY(mu_) = false;
};

}  // namespace mcpgw
