#include "transport/http_post_stream.hpp"

namespace mcpgw::transport {

using Clock = std::chrono::steady_clock;

void PostStream::push_error(std::string msg) {
  {
    util::MutexLock lk(mu_);
    ++finals_expected_;
  }
  push_final(std::move(msg), jsonrpc::kInvalidRequest);
}

void PostStream::push_final(SplicedText msg, int error) {
  {
    util::MutexLock lk(mu_);
    ++finals_seen_;
    if (streaming_) {
      queue_->push_final(sse::format_spliced_event(msg));
      if (finals_seen_ == finals_expected_) queue_->close();
    } else {
      events_.push_back({true, nullptr, std::move(msg), error});
    }
  }
  changed_.notify();
}

bool PostStream::push_related(std::string msg, const void* key) {
  bool queued = true;
  {
    util::MutexLock lk(mu_);
    seen_related_ = true;
    if (streaming_) queued = key ? queue_->replace(key, sse::format_event(msg)) : queue_->push(sse::format_event(msg));
    else queued = keep(std::move(msg), key);
  }
  changed_.notify();
  return queued;
}

std::shared_ptr<http::StreamQueue> PostStream::start_streaming() {
  util::MutexLock lk(mu_);
  streaming_ = true;
  queue_ = std::make_shared<http::StreamQueue>(strand_, max_waiting_, max_stream_bytes_,
                                               http::StreamQueue::WhenFull::Drop);
  for (auto& e : events_) {
    std::string chunk = sse::format_spliced_event(e.msg);
    if (e.final) queue_->push_final(std::move(chunk));
    else if (e.key) queue_->replace(e.key, std::move(chunk));
    else queue_->push(std::move(chunk));
  }
  events_.clear();
  if (finals_seen_ == finals_expected_) queue_->close();
  return queue_;
}

std::optional<int> PostStream::first_error() {
  util::MutexLock lk(mu_);
  auto it = std::find_if(events_.begin(), events_.end(), [](const Pending& e) { return e.final; });
  return it == events_.end() ? std::nullopt : std::optional<int>(it->error);
}

SplicedText PostStream::take_json(bool batch) {
  util::MutexLock lk(mu_);
  if (!batch) return std::move(events_.front().msg);
  std::string body = "[";
  for (auto& e : events_) {
    if (body.size() > 1) body += ',';
    e.msg.append_to(body);
  }
  body.push_back(']');
  return body;
}

void PostStream::cancel_all() {
  std::vector<std::shared_ptr<Exchange>> live;
  {
    util::MutexLock lk(mu_);
    for (auto& e : exchanges_)
      if (auto x = e.lock()) live.push_back(std::move(x));
  }
  // Cancel callbacks take other locks: run them outside ours.
  for (auto& x : live) x->cancel();
}

bool PostStream::keep(std::string msg, const void* key) {
  if (key && http::StreamQueue::congested(waiting_, waiting_bytes_)) {
    auto same = std::find_if(events_.rbegin(), events_.rend(), [&](const Pending& e) { return e.key == key; });
    if (same != events_.rend()) {
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
  events_.push_back({false, key, std::move(msg)});
  return true;
}

Task<Answer> PostStream::wait_answer(bool accept_json, bool accept_sse,
                                     std::optional<std::chrono::milliseconds> stream_after) {
  auto deadline = stream_after && accept_sse ? Clock::now() + *stream_after : Clock::time_point::max();
  for (;;) {
    std::uint64_t seen = changed_.generation();
    bool ready, related;
    {
      util::MutexLock lk(mu_);
      related = seen_related_;
      ready = finals_seen_ == finals_expected_ || (related && accept_sse);
    }
    if (ready) co_return accept_json && !related ? Answer::Json : Answer::Stream;
    auto now = Clock::now();
    if (now >= deadline) co_return Answer::Stream;
    co_await changed_.wait(seen, deadline);
  }
}

}  // namespace mcpgw::transport
