#pragma once
// The tasks clients created through this process (docs/protocol.md, "Tasks"): what
// their ids name (cluster/task_ids.hpp), which principal holds how many,
// the calls the gateway runs for them, and where an upstream's news about a
// task goes. Any replica opens any task id; this registry adds what only
// the process that created the task knows.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cluster/task_ids.hpp"
#include "tasks/run.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::tasks {

/// A task created through this process.
struct TaskRecord {
  std::string id;      ///< the gateway's id, as clients see it
  std::string digest;  ///< how the cluster names it (cluster::digest_of)
  cluster::TaskRef ref;
  /// The session that created it ("" for a stateless request): status
  /// notifications go there.
  std::string session;
  /// A gateway-made task: its call (set before the record is shared). An
  /// upstream's task: the tasks/result that carries its questions to a
  /// client that polls, once there is one (TaskRegistry::run_of).
  std::shared_ptr<TaskRun> run;
  std::int64_t keep_until_ms = 0;  ///< dropped after
  /// When a gateway-run task last changed (unix ms).
  std::atomic<std::int64_t> updated_ms{0};
};

/// Why a task id was refused. Another principal's id is NotFound, exactly
/// like an id the gateway never made.
enum class TaskRefusal { NotFound, Expired };

class TaskRegistry {
 public:
  /// `secrets`: cluster.secret (empty: a key of this process).
  explicit TaskRegistry(const std::vector<std::string>& secrets);

  /// Uses `secrets` from now on (a reload); the per-process key stays
  /// when there are none, and so does everything when they are unchanged.
  void set_secrets(const std::vector<std::string>& secrets);

  /// A place for one more task of a principal, held until committed by
  /// add() or released (when the call made no task).
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&&) noexcept;
    Slot& operator=(Slot&&) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class TaskRegistry;
    Slot(TaskRegistry* r, std::string principal) : registry_(r), principal_(std::move(principal)) {}
    TaskRegistry* registry_ = nullptr;
    std::string principal_;
  };
  /// A slot for `principal`, or the number of milliseconds until one frees
  /// (at the soonest expiry) when it holds `max` tasks already.
  std::variant<Slot, std::int64_t> reserve(const std::string& principal, int max);
  /// Seals `ref`'s id and records the task, using `slot`.
  Result<std::shared_ptr<TaskRecord>> add(Slot slot, cluster::TaskRef ref, std::string session,
                                          std::shared_ptr<TaskRun> run);

  /// What `id` names, for `principal`.
  struct Opened {
    cluster::TaskRef ref;
    std::shared_ptr<TaskRecord> local;  ///< null when created elsewhere
  };
  std::variant<Opened, TaskRefusal> open(std::string_view id, const std::string& principal);
  /// The id of `ref` (as sealed when it was made).
  Result<std::string> id_of(const cluster::TaskRef& ref) const;

  /// `principal`'s tasks recorded here, oldest first.
  std::vector<std::shared_ptr<TaskRecord>> of(const std::string& principal);
  /// The call run for `rec` (see TaskRecord::run), or null.
  std::shared_ptr<TaskRun> run_of(const TaskRecord& rec) const;
  /// The call run for `rec`, made by `make` (under the registry's lock:
  /// it must not call back) when there is none yet.
  std::shared_ptr<TaskRun> run_of(TaskRecord& rec, const std::function<std::shared_ptr<TaskRun>()>& make);
  /// The task named `digest` (TaskRecord::digest), if made here.
  std::shared_ptr<TaskRecord> by_digest(const std::string& digest);
  /// The task of `server` the upstream calls `upstream_id`, if made here.
  std::shared_ptr<TaskRecord> by_upstream(const std::string& server, const std::string& upstream_id);
  /// Stops every call run for a task (shutdown).
  void cancel_all();
  /// Tasks recorded now (for metrics).
  std::size_t size() const;

 private:
  void release(const std::string& principal) EXCLUDES(mu_);
  /// Drops expired records.
  void sweep(std::int64_t now_ms) REQUIRES(mu_);

  mutable util::Mutex mu_;
  std::vector<std::string> secrets_ GUARDED_BY(mu_);
  std::shared_ptr<const cluster::TaskIds> ids_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<TaskRecord>> by_id_ GUARDED_BY(mu_);
  std::map<std::string, std::string> by_upstream_ GUARDED_BY(mu_);  ///< server "\n" upstream id -> id
  std::map<std::string, std::string> by_digest_ GUARDED_BY(mu_);    ///< digest -> id
  std::map<std::string, int> held_ GUARDED_BY(mu_);                 ///< principal -> records and open slots
};

/// Unix milliseconds now.
std::int64_t unix_ms();

}  // namespace mcpgw::tasks
