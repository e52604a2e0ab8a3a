#include "transport/stream_queue.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <functional>
#include <utility>

#include "util/deadline.hpp"
#include "util/event.hpp"

namespace mcpgw::transport::http {

// --- Signal -------------------------------------------------------------

struct Signal::Impl {
  explicit Impl(asio::any_io_executor ex) : strand(ex), deadline(ex) {}
  asio::any_io_executor strand;
  std::atomic<bool> pending{false};
  // On the strand only: the suspended waiter and its timeout (a deadline,
  // not a timer of its own: a timer cancelled by every notify completed
  // its wait through another trip around the loop).
  std::function<void(bool)> waiter;
  Deadline deadline;

  /// Resumes the waiter, if one waits; on the strand.
  void wake(bool notified) {
    if (!waiter) return;
    deadline.disarm();
    std::exchange(waiter, nullptr)(notified);
  }
};

Signal::Signal(asio::any_io_executor strand) : impl_(std::make_unique<Impl>(std::move(strand))) {}
Signal::~Signal() = default;

void Signal::notify() {
  impl_->pending.store(true);
  // The wake runs on the waiter's strand: before its check (which then
  // sees `pending`) or after it suspended (which it then resumes).
  // Dispatched: an answer made on the waiter's own worker (the usual case:
  // a connection and its calls share one) wakes it without a trip around
  // the loop.
  asio::dispatch(impl_->strand, [self = shared_from_this()] { self->impl_->wake(true); });
}

Task<bool> Signal::wait(std::chrono::steady_clock::duration timeout) {
  if (impl_->pending.exchange(false)) co_return true;
  // The initiation holds nothing with a destructor (GCC 12 may destroy such
  // temporaries of a co_await expression twice).
  Signal* self = this;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(bool)>(
      [self, timeout](auto handler) {
        Impl& impl = *self->impl_;
        impl.waiter = shared_handler<bool>(std::move(handler));
        impl.deadline.arm(std::chrono::steady_clock::now() + timeout, [w = self->weak_from_this()] {
          if (auto s = w.lock()) s->impl_->wake(false);
        });
      },
      asio::use_awaitable);
  co_return impl_->pending.exchange(false);
}

const asio::any_io_executor& Signal::executor() const { return impl_->strand; }

// --- StreamQueue --------------------------------------------------------

StreamQueue::StreamQueue(asio::any_io_executor strand, std::size_t max_items, std::size_t max_bytes, WhenFull when_full)
    : max_items_(max_items),
      max_bytes_(max_bytes),
      when_full_(when_full),
      signal_(std::make_shared<Signal>(std::move(strand))) {}

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
    asio::post(signal_->executor(), [self = shared_from_this()] {
      if (self->interrupt_) self->interrupt_();
    });
  }
  signal_->notify();
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
  signal_->notify();
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
