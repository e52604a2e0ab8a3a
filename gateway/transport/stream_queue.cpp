#include "transport/stream_queue.hpp"

#include <boost/asio/post.hpp>

#include <functional>
#include <utility>

#include "util/event.hpp"

namespace mcpgw::transport::http {

StreamQueue::StreamQueue(asio::any_io_executor strand, std::size_t max_items, std::size_t max_bytes, WhenFull when_full)
    : max_items_(max_items),
      max_bytes_(max_bytes),
      when_full_(when_full),
      strand_(std::move(strand)) {}

bool StreamQueue::admit_locked(std::string& chunk, bool always) {
  // One chunk always fits, however large: a big final answer is not a
  // slow reader.
  if (!always && (q_.size() >= max_items_ || (!q_.empty() && bytes_ + chunk.size() > max_bytes_))) {
    if (when_full_ == WhenFull::Close) overflow_ = true;
    else ++dropped_;
    return false;
  }
  bytes_ += chunk.size();
  q_.push_back(std::move(chunk));
  return true;
}

void StreamQueue::wake(bool overflow) {
  if (overflow) {
    // The writer may be stuck in a write to a peer that does not read: cut
    // it short rather than wait for the write timeout.
    asio::post(strand_, [self = shared_from_this()] {
      if (self->interrupt_) self->interrupt_();
    });
  }
  ready_.notify();
}

bool StreamQueue::push(std::string chunk) {
  bool queued, overflow;
  {
    util::MutexLock lk(mu_);
    if (closed_ || overflow_) return false;
    queued = admit_locked(chunk, false);
    overflow = overflow_;
  }
  wake(overflow);
  return queued;
}

bool StreamQueue::replace(const void* key, std::string chunk) {
  bool queued, overflow;
  {
    util::MutexLock lk(mu_);
    if (closed_ || overflow_) return false;
    if (auto it = slots_.find(key); it != slots_.end() && congested(q_.size(), bytes_)) {
      std::string& waiting = q_[it->second];
      bytes_ = bytes_ - waiting.size() + chunk.size();
      waiting = std::move(chunk);
      return true;  // the writer was woken for the chunk it replaces
    }
    queued = admit_locked(chunk, false);
    if (queued) slots_[key] = q_.size() - 1;
    overflow = overflow_;
  }
  wake(overflow);
  return queued;
}

void StreamQueue::push_final(std::string chunk) {
  {
    util::MutexLock lk(mu_);
    if (closed_ || overflow_) return;
    admit_locked(chunk, true);
  }
  wake(false);
}

std::size_t StreamQueue::dropped() const {
  util::MutexLock lk(mu_);
  return dropped_;
}

void StreamQueue::close() {
  {
    util::MutexLock lk(mu_);
    closed_ = true;
  }
  ready_.notify();
}

bool StreamQueue::closed() const {
  util::MutexLock lk(mu_);
  return closed_;
}

bool StreamQueue::overflowed() const {
  util::MutexLock lk(mu_);
  return overflow_;
}

bool StreamQueue::take(std::string& out) {
  util::MutexLock lk(mu_);
  for (auto& c : q_) out += c;
  q_.clear();
  slots_.clear();
  bytes_ = 0;
  return closed_;
}

void StreamQueue::set_interrupt(std::function<void()> fn) { interrupt_ = std::move(fn); }

}  // namespace mcpgw::transport::http
