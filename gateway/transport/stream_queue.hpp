#pragma once
// What a streamed response is fed from: a bounded queue of chunks that any
// thread fills and the connection's coroutine drains, woken through the
// queue's Event. Part of http::Listener (see http_listener.hpp).
#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "util/event.hpp"
#include "util/task.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport::http {

namespace asio = boost::asio;

class Responder;

/// The bounded queue of chunks a streamed response writes, filled from any
/// thread. Full means more than `max_items` chunks, or `max_bytes` with at
/// least one chunk waiting: the reader is not keeping up. A slow client
/// costs at most its bound.
class StreamQueue : public std::enable_shared_from_this<StreamQueue> {
 public:
  /// What a push into a full queue does.
  enum class WhenFull {
    /// The push fails and the stream ends at once (Responder::stream
    /// returns Overflow): a GET stream, which the client opens again.
    Close,
    /// The chunk is dropped and counted; the stream goes on: a POST's
    /// stream, whose answer must still reach the client.
    Drop,
  };
  StreamQueue(asio::any_io_executor strand, std::size_t max_items = 1024, std::size_t max_bytes = 16 << 20,
              WhenFull when_full = WhenFull::Close);
  /// Queues `chunk`; false when closed or full (then it overflowed, or the
  /// chunk was dropped).
  bool push(std::string chunk);
  /// Queues `chunk`; once the reader falls behind (congested()), in place
  /// of the chunk still waiting under `key`, if any, so a request's
  /// progress takes one place (the latest wins) instead of filling the
  /// queue. Otherwise like push().
  bool replace(const void* key, std::string chunk);
  /// Whether a queue holding `items` chunks of `bytes` is backing up: its
  /// reader is slow, and a request's progress is coalesced. Below this, a
  /// reader keeping up sees every progress notification.
  static bool congested(std::size_t items, std::size_t bytes) { return items >= 64 || bytes >= (1 << 20); }
  /// Queues `chunk` whatever the bound: a request's final answer.
  void push_final(std::string chunk);
  /// Ends the stream once what is queued is written.
  void close();
  /// True once close() was called.
  bool closed() const;
  /// True once a push found the queue full (WhenFull::Close): the stream ends.
  bool overflowed() const;
  /// Chunks dropped because the queue was full (WhenFull::Drop).
  std::size_t dropped() const;

 private:
  friend class Responder;
  /// Moves what is queued into `out`; true when the stream is to end after it.
  bool take(std::string& out);
  /// Called on the strand by the writer: how to cut its write short on
  /// overflow (nullptr when it stops writing).
  void set_interrupt(std::function<void()> fn);
  /// Queues; false when full.
  bool admit_locked(std::string& chunk, bool always) REQUIRES(mu_);
  void wake(bool overflow);

  mutable util::Mutex mu_;
  std::deque<std::string> q_ GUARDED_BY(mu_);
  std::unordered_map<const void*, std::size_t> slots_ GUARDED_BY(mu_);  ///< key -> its chunk in q_
  std::size_t bytes_ GUARDED_BY(mu_) = 0;
  const std::size_t max_items_, max_bytes_;
  std::size_t dropped_ GUARDED_BY(mu_) = 0;
  const WhenFull when_full_;
  bool closed_ GUARDED_BY(mu_) = false;
  bool overflow_ GUARDED_BY(mu_) = false;
  const asio::any_io_executor strand_;
  /// Wakes the writer: something was queued, the queue closed, or the
  /// peer the writer watches went. Notified with no lock held.
  Event ready_{Resume::Inline};
  std::function<void()> interrupt_;  // strand only: no lock
};

}  // namespace mcpgw::transport::http
