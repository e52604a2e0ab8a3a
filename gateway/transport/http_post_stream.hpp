#pragma once
// One POST to the MCP endpoint as its answer is made: the replies and
// related messages its requests produce (from any thread), and the choice
// between one JSON body and an SSE stream. Internal to HttpServer.
#include <chrono>
#include <deque>
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
/// `queue` as they come.
struct PostStream {
  PostStream(const asio::any_io_executor& strand, const HttpServerOptions& o)
      : signal(std::make_shared<http::Signal>(strand)),
        queue(std::make_shared<http::StreamQueue>(strand, o.stream_max_messages, o.stream_max_bytes)) {}

  std::mutex mu;
  std::deque<std::pair<bool, std::string>> events;  // (is_final, message) until streaming
  std::size_t finals_expected = 0;
  std::size_t finals_seen = 0;
  bool seen_related = false;
  bool streaming = false;
  // Weak: each exchange owns the stream, not the other way round.
  std::vector<std::weak_ptr<Exchange>> exchanges;
  std::shared_ptr<http::Signal> signal;
  std::shared_ptr<http::StreamQueue> queue;

  void push(bool final, std::string msg) {
    {
      std::lock_guard lk(mu);
      if (final) ++finals_seen;
      else seen_related = true;
      if (streaming) forward(msg);
      else events.emplace_back(final, std::move(msg));
    }
    signal->notify();
  }
  /// From now on the answer is a stream: what came so far goes first.
  void start_streaming() {
    std::lock_guard lk(mu);
    streaming = true;
    for (auto& [final, msg] : events) queue->push(sse::format_event(msg));
    events.clear();
    if (finals_seen == finals_expected) queue->close();
  }
  /// Both kinds of answer end after the last reply.
  bool complete() {
    std::lock_guard lk(mu);
    return finals_seen == finals_expected;
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
  void forward(const std::string& msg) {
    queue->push(sse::format_event(msg));
    if (finals_seen == finals_expected) queue->close();
  }
};

class PostExchange final : public Exchange {
 public:
  PostExchange(std::shared_ptr<PostStream> stream, bool can_stream, std::shared_ptr<HttpSession> counted = nullptr)
      : stream_(std::move(stream)), can_stream_(can_stream), counted_(std::move(counted)) {
    if (counted_) ++counted_->in_flight;
  }
  bool can_send() const override { return can_stream_; }
  asio::any_io_executor executor() const override { return stream_->signal->executor(); }
  void send(std::string msg) override {
    // A client that accepts only JSON cannot receive messages mid-request;
    // dropping them is what the spec leaves us.
    if (can_stream_ && !cancelled()) stream_->push(false, std::move(msg));
  }
  void reply(std::string response) override {
    // Exactly once: the session has one request fewer running.
    if (counted_) --counted_->in_flight;
    stream_->push(true, std::move(response));
  }

 private:
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
