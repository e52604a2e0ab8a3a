#include "tasks/run.hpp"

namespace mcpgw::tasks {

TaskRun::TaskRun(std::size_t max_result_bytes) : max_result_bytes_(max_result_bytes) {}

bool TaskRun::start(saga::Engine& engine, const asio::any_io_executor& io,
                    std::shared_ptr<upstream::ClientChannel> client, Work work) {
  auto self = shared_from_this();
  auto parked = engine.start(io, inbox_, std::move(client), [self, work = std::move(work)](CancelSignal& cancel) -> Task<upstream::Reply> {
    upstream::Reply r = co_await work(cancel);
    self->finish(std::move(r));
    co_return upstream::Reply{};
  });
  if (!parked) return false;
  {
    util::MutexLock lk(mu_);
    parked_ = parked;
  }
  // A cancel() before the line above found no parked_: it is done here.
  if (cancelled_.load()) parked->cancel.cancel();
  return true;
}

void TaskRun::finish(upstream::Reply reply) {
  if (max_result_bytes_ && !reply.rpc_error) {
    std::size_t size = json::write(reply.body).size();
    if (size > max_result_bytes_)
      reply = upstream::Reply::error(jsonrpc::kInternalError,
                                     "mcpgw: the task's result is " + std::to_string(size) +
                                         " bytes, over tasks.max_result_bytes (" + std::to_string(max_result_bytes_) +
                                         ")");
  }
  std::function<void()> fn;
  {
    util::MutexLock lk(mu_);
    result_ = std::move(reply);
    fn = watcher_;
  }
  finished_.store(true);
  ended_.notify();
  inbox_->wake();
  if (fn) fn();
}

upstream::Reply TaskRun::result() const {
  util::MutexLock lk(mu_);
  return upstream::Reply{result_.rpc_error, json::clone(result_.body), false, result_.session};
}

void TaskRun::cancel() {
  if (cancelled_.exchange(true)) return;
  std::shared_ptr<saga::Parked> parked;
  std::function<void()> fn;
  {
    util::MutexLock lk(mu_);
    parked = parked_;
    fn = watcher_;
  }
  if (parked) parked->cancel.cancel();
  inbox_->abandon();
  if (fn) fn();
}

void TaskRun::watch(std::function<void()> fn) {
  {
    util::MutexLock lk(mu_);
    watcher_ = fn;
  }
  inbox_->watch(std::move(fn));
}

Task<> TaskRun::wait(CancelSignal& cancel) {
  for (;;) {
    const auto seen = ended_.generation();
    if (finished() || cancel.cancelled()) co_return;
    co_await ended_.wait(seen, std::chrono::steady_clock::time_point::max(), &cancel);
  }
}

}  // namespace mcpgw::tasks
