#include "transport/downstream.hpp"

namespace mcpgw::transport {

bool Outbox::push(std::string msg) {
  {
    std::lock_guard lk(mu_);
    if (closed_ || q_.size() >= capacity_) return false;
    q_.push_back(std::move(msg));
  }
  cv_.notify_one();
  return true;
}

std::optional<std::string> Outbox::pop(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return closed_ || !q_.empty(); });
  if (q_.empty()) return std::nullopt;
  auto m = std::move(q_.front());
  q_.pop_front();
  return m;
}

void Outbox::close() {
  {
    std::lock_guard lk(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Outbox::closed() const {
  std::lock_guard lk(mu_);
  return closed_;
}

void Session::notify(std::string msg) {
  std::lock_guard lk(sink_mu_);
  if (sink_) sink_(std::move(msg));
}

void Session::bind(std::string id, ClientContext ctx, std::function<bool(std::string)> sink) {
  id_ = std::move(id);
  ctx_ = std::move(ctx);
  set_sink(std::move(sink));
}

void Session::set_sink(std::function<bool(std::string)> sink) {
  std::lock_guard lk(sink_mu_);
  sink_ = std::move(sink);
}

}  // namespace mcpgw::transport
