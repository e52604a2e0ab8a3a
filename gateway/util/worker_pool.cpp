#include "util/worker_pool.hpp"

#include <algorithm>
#include <chrono>

namespace mcpgw {

WorkerPool::WorkerPool(std::size_t min_threads, std::size_t max_threads, int idle_ms)
    : min_(min_threads), max_(std::max(max_threads, std::size_t{1})), idle_ms_(idle_ms) {}

WorkerPool::~WorkerPool() {
  {
    util::MutexLock lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  // Without the lock, which the threads need to finish: once stopping_ is
  // set, submit() adds no thread and the threads leave threads_ alone.
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

bool WorkerPool::submit(std::function<void()> task) {
  util::MutexLock lk(mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(task));
  if (idle_ >= queue_.size()) {
    cv_.notify_one();
    return true;
  }
  if (live_ < max_) {
    // Reap threads that exited for idleness before adding a new one, so the
    // vector does not grow without bound over a long run.
    for (auto id : exited_) {
      auto it = std::find_if(threads_.begin(), threads_.end(),
                             [&](const std::thread& t) { return t.get_id() == id; });
      if (it != threads_.end()) {
        it->join();
        threads_.erase(it);
      }
    }
    exited_.clear();
    ++live_;
    threads_.emplace_back([this] { run(); });
  }
  return true;
}

void WorkerPool::run() {
  util::UniqueLock lk(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) break;
      ++idle_;
      bool woke = cv_.wait_for(lk.native(), std::chrono::milliseconds(idle_ms_),
                               [&]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      --idle_;
      if (!woke && live_ > min_) break;
      continue;
    }
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    task();
    lk.lock();
  }
  --live_;
  if (!stopping_) exited_.push_back(std::this_thread::get_id());
}

}  // namespace mcpgw
