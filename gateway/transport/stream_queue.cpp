#include "transport/stream_queue.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>

namespace mcpgw::transport::http {

// --- Signal -------------------------------------------------------------

struct Signal::Impl {
  explicit Impl(asio::any_io_executor ex) : strand(ex), timer(ex) {}
  asio::any_io_executor strand;
  asio::steady_timer timer;
  std::atomic<bool> pending{false};
};

Signal::Signal(asio::any_io_executor strand) : impl_(std::make_unique<Impl>(std::move(strand))) {}
Signal::~Signal() = default;

void Signal::notify() {
  impl_->pending.store(true);
  // The cancel runs on the waiter's strand: before its check (which then
  // sees `pending`) or after it armed the timer (which it then wakes).
  // Dispatched: an answer made on the waiter's own worker (the usual case:
  // a connection and its calls share one) wakes it without a second trip
  // around the loop.
  asio::dispatch(impl_->strand, [self = shared_from_this()] { self->impl_->timer.cancel(); });
}

Task<bool> Signal::wait(std::chrono::steady_clock::duration timeout) {
  if (impl_->pending.exchange(false)) co_return true;
  impl_->timer.expires_after(timeout);
  boost::system::error_code ec;
  co_await impl_->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
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
