#include "transport/batch.hpp"

#include "jsonrpc/message.hpp"

namespace mcpgw::transport {

std::string batch_refusal(std::size_t size, std::size_t max) {
  json::Document data(rapidjson::kObjectType);
  auto& a = data.GetAllocator();
  data.AddMember("limit", "max_batch_size", a);
  data.AddMember("max", static_cast<std::uint64_t>(max), a);
  data.AddMember("size", static_cast<std::uint64_t>(size), a);
  // No retryAfterMs: the same batch is refused again; smaller ones are not.
  return jsonrpc::make_error(jsonrpc::Id(), -32000,
                             "Batch too large: limits.max_batch_size (" + std::to_string(max) +
                                 ") messages in one batch, this one has " + std::to_string(size) +
                                 "; none of it was run",
                             &data);
}

void BatchGate::start(std::function<void()> start) {
  {
    util::MutexLock lk(mu_);
    waiting_.push_back(std::move(start));
  }
  drain();
}

void BatchGate::done() {
  {
    util::MutexLock lk(mu_);
    --running_;
  }
  drain();
}

void BatchGate::drain() {
  util::UniqueLock lk(mu_);
  // Whoever drains already will see the free slot: a request answered
  // within its own start lands here while its starter is still draining.
  // (It checks for more in the same hold of the lock that ends its drain.)
  if (draining_) return;
  draining_ = true;
  while (running_ < concurrency_ && !waiting_.empty()) {
    auto next = std::move(waiting_.front());
    waiting_.pop_front();
    ++running_;
    lk.unlock();
    next();
    lk.lock();
  }
  draining_ = false;
}

}  // namespace mcpgw::transport
