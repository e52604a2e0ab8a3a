#pragma once
// One POST to the MCP endpoint as its answer is made: the replies and
// related messages its requests produce (from any thread), and the choice
// between one JSON body and an SSE stream. Internal to HttpServer.
#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transport/downstream.hpp"
#include "transport/http_listener.hpp"
#include "transport/http_server.hpp"
#include "transport/http_sessions.hpp"
#include "transport/sse.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

/// How a POST is answered: one JSON body, or an SSE stream.
enum class Answer { Json, Stream };

/// The events of one POST: replies and related messages, in order, pushed
/// from any thread. The request's coroutine waits (wait_answer()) until it
/// can choose between one JSON body and a stream; once streaming, events
/// go to queue() as they come. What a slow client costs is bounded
/// (stream_max_messages, stream_max_bytes) without ever costing it an
/// answer: once the stream backs up, a request's progress takes one place
/// whatever its rate (the latest wins), other related messages over the
/// bound are dropped (and counted), final replies always go out.
class PostStream {
 public:
  PostStream(const asio::any_io_executor& strand, const HttpServerOptions& o)
      : strand_(strand),
        max_waiting_(o.stream_max_messages),
        max_stream_bytes_(o.stream_max_bytes) {}

  /// One more final reply to wait for, from `ex`, which cancel_all()
  /// reaches for as long as it lives.
  void expect_reply(const std::shared_ptr<Exchange>& ex) {
    util::MutexLock lk(mu_);
    exchanges_.push_back(ex);
    ++finals_expected_;
  }
  /// A final reply known before anything runs (a batch member that is not
  /// a valid message: Invalid Request).
  void push_error(std::string msg);
  /// A request's final reply, and the JSON-RPC error code it carries (0
  /// for a result).
  void push_final(SplicedText msg, int error);
  /// A message related to a request (`key`: the request's progress, which
  /// replaces the one still waiting); false when it was dropped.
  bool push_related(std::string msg, const void* key);
  /// True when no final reply is to come (only notifications and
  /// responses were posted).
  bool expects_nothing() {
    util::MutexLock lk(mu_);
    return finals_expected_ == 0;
  }
  /// Waits until the answer can start: every reply is in, or (for a client
  /// that takes SSE) something must stream first, or `stream_after` passed.
  Task<Answer> wait_answer(bool accept_json, bool accept_sse,
                           std::optional<std::chrono::milliseconds> stream_after = std::nullopt);
  /// From now on the answer is a stream: what came so far goes first.
  /// Returns the queue the streamed answer writes.
  std::shared_ptr<http::StreamQueue> start_streaming();
  /// Both kinds of answer end after the last reply.
  bool complete() {
    util::MutexLock lk(mu_);
    return finals_seen_ == finals_expected_;
  }
  /// The JSON-RPC error code of the first final reply (0 for a result),
  /// while the answer has not started; nothing before one came.
  std::optional<int> first_error();
  /// The answer as one JSON body (once every reply is in and nothing else
  /// came): the reply, or a batch's replies as an array. Takes them.
  SplicedText take_json(bool batch);
  /// Related messages dropped because the client read too slowly.
  std::size_t dropped() {
    util::MutexLock lk(mu_);
    return dropped_early_ + (queue_ ? queue_->dropped() : 0);
  }
  /// Cancels every request of this POST still running (they still reply).
  void cancel_all();
  /// The strand the answer is written on.
  const asio::any_io_executor& executor() const { return strand_; }

 private:
  /// One message of the answer, kept until the answer streams.
  struct Pending {
    bool final;
    const void* key;  ///< progress of one request: a newer one replaces it
    SplicedText msg;
    int error = 0;  ///< a final reply's JSON-RPC error code; 0 for a result
  };

  /// Keeps a related message until streaming starts, under the same bound
  /// and coalescing.
  bool keep(std::string msg, const void* key) REQUIRES(mu_);

  util::Mutex mu_;
  std::deque<Pending> events_ GUARDED_BY(mu_);  // until streaming
  std::size_t finals_expected_ GUARDED_BY(mu_) = 0;
  std::size_t finals_seen_ GUARDED_BY(mu_) = 0;
  bool seen_related_ GUARDED_BY(mu_) = false;
  bool streaming_ GUARDED_BY(mu_) = false;
  // Weak: each exchange owns the stream, not the other way round.
  std::vector<std::weak_ptr<Exchange>> exchanges_ GUARDED_BY(mu_);
  const asio::any_io_executor strand_;
  /// What wait_answer() waits on: a final reply or a related message
  /// came. Its notifiers hold no lock, and the answer is written on the
  /// worker the calls usually answer on: resumed inline.
  Event changed_{Resume::Inline};
  /// Made when the answer streams (most are one JSON body): safe to use
  /// from any thread once set.
  std::shared_ptr<http::StreamQueue> queue_ GUARDED_BY(mu_);
  const std::size_t max_waiting_;
  const std::size_t max_stream_bytes_;
  std::size_t waiting_ GUARDED_BY(mu_) = 0;        ///< related messages in `events_`
  std::size_t waiting_bytes_ GUARDED_BY(mu_) = 0;  ///< their size
  std::size_t dropped_early_ GUARDED_BY(mu_) = 0;  ///< dropped before streaming
};

/// A request of one POST: what it sends goes to the POST's stream, and
/// `counted` (its session, if any) counts it as running until it replies.
class PostExchange final : public Exchange {
 public:
  PostExchange(std::shared_ptr<PostStream> stream, bool can_stream, std::shared_ptr<HttpSession> counted = nullptr)
      : stream_(std::move(stream)), can_stream_(can_stream), counted_(std::move(counted)) {
    if (counted_) ++counted_->in_flight;
  }
  bool can_send() const override { return can_stream_; }
  asio::any_io_executor executor() const override { return stream_->executor(); }
  bool send(std::string msg) override {
    // A client that accepts only JSON cannot receive messages mid-request;
    // dropping them is what the spec leaves us.
    return can_stream_ && !cancelled() && stream_->push_related(std::move(msg), nullptr);
  }
  void progress(std::string msg) override {
    if (can_stream_ && !cancelled()) stream_->push_related(std::move(msg), this);
  }
  void reply(SplicedText response, int error) override {
    // Exactly once: the session has one request fewer running.
    if (counted_) --counted_->in_flight;
    stream_->push_final(std::move(response), error);
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

}  // namespace mcpgw::transport
