#pragma once
// One POST to the MCP endpoint as its answer is made: the replies and
// related messages its requests produce (from any thread), and the choice
// between one JSON body and an SSE stream. Internal to HttpServer.
#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transport/downstream.hpp"
#include "transport/http_listener.hpp"
#include "transport/http_server.hpp"
#include "transport/http_sessions.hpp"
#include "transport/sse.hpp"

namespace mcpgw::transport {

/// The events of one POST: replies and related messages, in order, pushed
/// from any thread. The request's coroutine waits on `signal` until it can
/// choose between one JSON body and a stream; once streaming, events go to
/// `queue` as they come. What a slow client costs is bounded
/// (stream_max_messages, stream_max_bytes) without ever costing it an
/// answer: once the stream backs up, a request's progress takes one place
/// whatever its rate (the latest wins), other related messages over the
/// bound are dropped (and counted), final replies always go out.
struct PostStream {
  PostStream(const asio::any_io_executor& strand, const HttpServerOptions& o)
      : signal(std::make_shared<http::Signal>(strand)),
        queue(std::make_shared<http::StreamQueue>(strand, o.stream_max_messages, o.stream_max_bytes,
                                                  http::StreamQueue::WhenFull::Drop)),
        max_waiting_(o.stream_max_messages) {}

  /// One message of the answer, kept until the answer streams.
  struct Event {
    bool final;
    const void* key;  ///< progress of one request: a newer one replaces it
    std::string msg;
  };

  std::mutex mu;
  std::deque<Event> events;  // until streaming
  std::size_t finals_expected = 0;
  std::size_t finals_seen = 0;
  bool seen_related = false;
  bool streaming = false;
  // Weak: each exchange owns the stream, not the other way round.
  std::vector<std::weak_ptr<Exchange>> exchanges;
  std::shared_ptr<http::Signal> signal;
  std::shared_ptr<http::StreamQueue> queue;

  /// A request's final reply.
  void push_final(std::string msg) {
    {
      std::lock_guard lk(mu);
      ++finals_seen;
      if (streaming) {
        queue->push_final(sse::format_event(msg));
        if (finals_seen == finals_expected) queue->close();
      } else {
        events.push_back({true, nullptr, std::move(msg)});
      }
    }
    signal->notify();
  }
  /// A message related to a request (`key`: the request's progress, which
  /// replaces the one still waiting); false when it was dropped.
  bool push_related(std::string msg, const void* key) {
    bool queued = true;
    {
      std::lock_guard lk(mu);
      seen_related = true;
      if (streaming) queued = key ? queue->replace(key, sse::format_event(msg)) : queue->push(sse::format_event(msg));
      else queued = keep(std::move(msg), key);
    }
    signal->notify();
    return queued;
  }
  /// From now on the answer is a stream: what came so far goes first.
  void start_streaming() {
    std::lock_guard lk(mu);
    streaming = true;
    for (auto& e : events) {
      std::string chunk = sse::format_event(e.msg);
      if (e.final) queue->push_final(std::move(chunk));
      else if (e.key) queue->replace(e.key, std::move(chunk));
      else queue->push(std::move(chunk));
    }
    events.clear();
    if (finals_seen == finals_expected) queue->close();
  }
  /// Both kinds of answer end after the last reply.
  bool complete() {
    std::lock_guard lk(mu);
    return finals_seen == finals_expected;
  }
  /// Related messages dropped because the client read too slowly.
  std::size_t dropped() {
    std::lock_guard lk(mu);
    return dropped_early_ + queue->dropped();
  }
  void cancel_all() {
    std::vector<std::shared_ptr<Exchange>> live;
    {
      std::lock_guard lk(mu);
      for (auto& e : exchanges)
        if (auto x = e.lock()) live.push_back(std::move(x));
    }
    // Cancel callbacks take other locks: run them outside ours.
    for (auto& x : live) x->cancel();
  }

 private:
  /// Keeps a related message until streaming starts, under the same bound
  /// and coalescing.
  bool keep(std::string msg, const void* key) {
    if (key && http::StreamQueue::congested(waiting_, waiting_bytes_)) {
      auto same = std::find_if(events.rbegin(), events.rend(), [&](const Event& e) { return e.key == key; });
      if (same != events.rend()) {
        waiting_bytes_ = waiting_bytes_ - same->msg.size() + msg.size();
        same->msg = std::move(msg);
        return true;
      }
    }
    if (waiting_ >= max_waiting_) {
      ++dropped_early_;
      return false;
    }
    ++waiting_;
    waiting_bytes_ += msg.size();
    events.push_back({false, key, std::move(msg)});
    return true;
  }

  std::size_t max_waiting_;
  std::size_t waiting_ = 0;        ///< related messages in `events`
  std::size_t waiting_bytes_ = 0;  ///< their size
  std::size_t dropped_early_ = 0;  ///< dropped before streaming
};

class PostExchange final : public Exchange {
 public:
  PostExchange(std::shared_ptr<PostStream> stream, bool can_stream, std::shared_ptr<HttpSession> counted = nullptr)
      : stream_(std::move(stream)), can_stream_(can_stream), counted_(std::move(counted)) {
    if (counted_) ++counted_->in_flight;
  }
  bool can_send() const override { return can_stream_; }
  asio::any_io_executor executor() const override { return stream_->signal->executor(); }
  bool send(std::string msg) override {
    // A client that accepts only JSON cannot receive messages mid-request;
    // dropping them is what the spec leaves us.
    return can_stream_ && !cancelled() && stream_->push_related(std::move(msg), nullptr);
  }
  void progress(std::string msg) override {
    if (can_stream_ && !cancelled()) stream_->push_related(std::move(msg), this);
  }
  void reply(std::string response) override {
    // Exactly once: the session has one request fewer running.
    if (counted_) --counted_->in_flight;
    stream_->push_final(std::move(response));
    if (on_reply_) on_reply_();
  }
  /// Runs after the reply (a batch's next request may start).
  void on_reply(std::function<void()> fn) { on_reply_ = std::move(fn); }

 private:
  std::function<void()> on_reply_;
  std::shared_ptr<PostStream> stream_;
  bool can_stream_;
  std::shared_ptr<HttpSession> counted_;  ///< whose in_flight counts this request
};

enum class Answer { Json, Stream };

/// Waits until the answer can start: every reply is in, or (for a client
/// that takes SSE) something must stream first, or `stream_after` passed.
http::awaitable<Answer> wait_first(PostStream& s, bool accept_json, bool accept_sse,
                                   std::optional<std::chrono::milliseconds> stream_after = std::nullopt);

}  // namespace mcpgw::transport
