#pragma once
// Tasks across replicas (cluster.redis; docs/protocol.md, "Tasks"). The replica that
// runs a gateway-made task writes its state to Redis at every change
// (status, questions for the client, the outcome), so any replica answers
// tasks/get; answers and cancellations that land elsewhere reach the
// running replica over the cluster's channel. Every replica lists a
// principal's tasks from Redis. Without Redis nothing is shared: a
// gateway-made task is answered by the process that runs it.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.hpp"
#include "mcp/tasks.hpp"
#include "tasks/registry.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::tasks {

class TaskShare {
 public:
  explicit TaskShare(TaskRegistry& registry) : registry_(registry) {}
  /// Shares through `cluster` from now on (before serving).
  void set_cluster(cluster::Cluster& cluster) { cluster_ = &cluster; }

  /// Redis holds the tasks.
  bool on() const { return cluster_ && cluster_->redis(); }
  /// Writes the state of new task `rec` (made by the gateway here) and lists
  /// it as its principal's, once Redis has it: any replica must find a task
  /// once its creator has been answered.
  Task<Result<void>> put_new(const TaskRecord& rec);
  /// Writes the changed state of `rec` (in the background, in order).
  void put(const TaskRecord& rec);
  /// Records an upstream's task of this process in its principal's list.
  void list(const TaskRecord& rec);
  /// The state of gateway-made task `id` (a 2026-07-28 DetailedTask), as
  /// Redis holds it; nullopt when it has none (or there is no Redis).
  Task<std::optional<json::Document>> get(const std::string& id);
  /// The ids of `principal`'s tasks on every replica (no Redis: none).
  Task<std::vector<std::string>> ids_of(const std::string& principal);
  /// Asks the replica running task `id` to take `answers` / to cancel it.
  void answer(const std::string& id, const json::Value& answers);
  void cancel(const std::string& id);
  /// Waits until Redis says task `id` changed, `deadline` or `cancel`.
  Task<> changed(const std::string& id, std::chrono::steady_clock::time_point deadline, CancelSignal& cancel);
  /// What the cluster's channel says of task `digest` (Cluster::Hooks::task).
  void on_event(const std::string& digest, const std::string& kind, const std::string& payload);

 private:
  cluster::Cluster* cluster_ = nullptr;
  TaskRegistry& registry_;
  util::Mutex mu_;
  /// Waiters for a task's change, by digest.
  std::map<std::string, std::shared_ptr<Event>> changes_ GUARDED_BY(mu_);
};

/// A task the gateway runs, as Redis keeps it: the 2026-07-28 DetailedTask
/// (result, error or inputRequests inlined).
json::Document shared_state(const TaskRecord& rec);
/// A state read back from Redis, as a client of the session revisions sees
/// it: a tool error is `failed` there.
mcp::TaskState state_2025(const json::Value& shared);

}  // namespace mcpgw::tasks
