#pragma once
// A call the gateway runs on its own for a task: the tool call of a task
// the gateway makes (`tasks.gateway`), or the tasks/result that fetches an
// upstream task's questions for a client that polls instead (a 2026-07-28
// client of a 2025-11-25 upstream). It outlives the request that started
// it; its questions for the client wait in an inbox (the task's
// `inputRequests`, or what tasks/result hands a 2025-11-25 client); its
// reply is kept once it ends.
#include <atomic>
#include <functional>
#include <memory>

#include "saga/engine.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::tasks {

class TaskRun : public std::enable_shared_from_this<TaskRun> {
 public:
  /// The work, given the signal that cancels it.
  using Work = std::function<Task<upstream::Reply>(CancelSignal&)>;

  /// `max_result_bytes`: a larger reply ends the run as a JSON-RPC error
  /// naming tasks.max_result_bytes (0 = no bound).
  explicit TaskRun(std::size_t max_result_bytes = 0);

  /// Starts `work` on `engine` (counted there, so a shutdown waits for it)
  /// with `client` as the way back to the client; false once the engine is
  /// shutting down.
  bool start(saga::Engine& engine, const asio::any_io_executor& io, std::shared_ptr<upstream::ClientChannel> client,
             Work work);
  /// Where the run's questions for the client wait.
  const std::shared_ptr<saga::Inbox>& inbox() const { return inbox_; }
  bool finished() const { return finished_.load(); }
  /// The reply; valid once finished().
  upstream::Reply result() const;
  /// Stops the work (its upstream request is cancelled).
  void cancel();
  /// True once cancel() was called.
  bool cancelled() const { return cancelled_.load(); }
  /// Calls `fn` (any thread, no lock held) whenever the run asks, is
  /// answered, is cancelled or ends.
  void watch(std::function<void()> fn);
  /// Waits until the run ends or `cancel` fires.
  Task<> wait(CancelSignal& cancel);
  /// Ends the run with `reply` and tells the watcher: the work's own end,
  /// or a run that could not start, which must not look `working` forever.
  void finish(upstream::Reply reply);

 private:
  const std::size_t max_result_bytes_;
  const std::shared_ptr<saga::Inbox> inbox_ = std::make_shared<saga::Inbox>();
  std::atomic<bool> finished_{false}, cancelled_{false};
  Event ended_;
  mutable util::Mutex mu_;
  /// Under mu_: a gateway-made task's run is listed (TaskRegistry::add)
  /// before start() sets it, so cancel() (TaskRegistry::cancel_all) may
  /// read it meanwhile.
  std::shared_ptr<saga::Parked> parked_ GUARDED_BY(mu_);
  upstream::Reply result_ GUARDED_BY(mu_);
  std::function<void()> watcher_ GUARDED_BY(mu_);
};

}  // namespace mcpgw::tasks
