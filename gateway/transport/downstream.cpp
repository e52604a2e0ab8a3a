#include "transport/downstream.hpp"

namespace mcpgw::transport {

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
