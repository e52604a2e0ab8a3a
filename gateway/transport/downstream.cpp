#include "transport/downstream.hpp"

namespace mcpgw::transport {

void Session::notify(std::string msg) {
  util::MutexLock lk(sink_mu_);
  if (sink_) sink_(std::move(msg));
}

void Session::bind(std::string id, ClientContext ctx, std::function<bool(std::string)> sink) {
  id_ = std::move(id);
  set_subject_token(ctx.subject_token);
  ctx_ = std::move(ctx);
  set_sink(std::move(sink));
}

std::string Session::subject_token() const {
  util::MutexLock lk(sink_mu_);
  return subject_token_;
}

void Session::set_subject_token(std::string token) {
  util::MutexLock lk(sink_mu_);
  subject_token_ = std::move(token);
}

void Session::set_sink(std::function<bool(std::string)> sink) {
  util::MutexLock lk(sink_mu_);
  sink_ = std::move(sink);
}

}  // namespace mcpgw::transport
