#pragma once
// MCP tasks through the gateway (docs/protocol.md, "Tasks"), both generations: how a
// tools/call becomes a task (task_calls.cpp) and the tasks/* methods
// (tasks.cpp; a client of one generation over an upstream of the other in
// task_bridge.cpp).
#include <set>
#include <variant>

#include "mcp/tasks.hpp"
#include "server/calls.hpp"
#include "server/redaction.hpp"
#include "tasks/state.hpp"

namespace mcpgw::server {

/// How a tools/call runs, decided before it runs.
struct TaskPlan {
  enum class Kind {
    None,      ///< an ordinary call
    Upstream,  ///< the upstream may run it as a task (pass-through)
    Gateway,   ///< the gateway runs it as a task (`tasks.gateway`)
  } kind = Kind::None;
  /// Upstream: what the upstream is asked for (the client's 2025-11-25
  /// `task` params, or {}).
  json::Document task{rapidjson::kObjectType};
  /// A 2025-11-25 client asked for a task: it gets one even when the
  /// upstream answers at once.
  bool client_asked = false;
  std::int64_t ttl_ms = 0;  ///< how long a task the gateway holds is kept
  tasks::TaskRegistry::Slot slot;
};

/// Why a call is not run as a task it asks to be, and its answer.
struct PlanRefusal {
  /// The refusal's kind, as audited and counted (mcpgw_refused_total):
  /// task_forbidden, task_capability or task_limit.
  std::string_view reason;
  Answer answer;
};

/// Decides how `r`'s call of `tool` runs; the refusal (a task the tool
/// cannot be, a client without the tasks extension for a tool that needs
/// it, tasks.max_per_principal) when it must not.
std::variant<TaskPlan, PlanRefusal> plan_task(Services& sv, Request& r, const catalog::ExposedTool& tool);
/// Runs the call of a plan other than None: a gateway-made task starts and
/// its CreateTaskResult is the answer; an upstream's CreateTaskResult is
/// recorded and given the gateway's id, in the client's generation.
Task<Answer> run_as_task(Services& sv, Request& r, TaskPlan plan, const catalog::ExposedTool& tool,
                         const json::Value* args, Work work);

/// Tells the session that created `rec` (a 2025-11-25 session held here)
/// its new state: notifications/tasks/status.
void notify_status(Services& sv, const tasks::TaskRecord& rec, const mcp::TaskState& state);
/// The -32602 a refused task id gets (the spec's wording).
Answer refusal(tasks::TaskRefusal why);

// --- what the tasks/* handlers share (tasks.cpp, task_bridge.cpp) -------

class ClientCall;

/// The client of a tasks/* request, asked a task's questions on that
/// request's stream; closed when it goes out of scope.
class RequestClient {
 public:
  RequestClient(Services& sv, Request& r);
  ~RequestClient();
  RequestClient(const RequestClient&) = delete;
  RequestClient& operator=(const RequestClient&) = delete;
  ClientCall& operator*() const { return *call_; }
  ClientCall* operator->() const { return call_.get(); }
  const std::shared_ptr<ClientCall>& shared() const { return call_; }

 private:
  std::shared_ptr<ClientCall> call_;
};

/// The task a tasks/* request names, opened for its principal.
struct TaskTarget {
  std::string id;
  cluster::TaskRef ref;
  std::shared_ptr<tasks::TaskRecord> local;             ///< null when made through another process
  std::shared_ptr<upstream::Upstream> upstream;  ///< the one running it (TaskRef::Kind::Upstream)
  RelayRedaction redaction;  ///< what the upstream says of it, redacted
};
/// The task `r` names in `params.taskId`, or the answer refusing it: not a
/// task of the gateway's or of this principal (one -32602 for both),
/// expired, or (2026-07-28) a client without the tasks extension (-32021).
std::variant<TaskTarget, Answer> task_target(Services& sv, Request& r);
/// An upstream's task and the client a request about it is made for, owned
/// (such a request may outlive the client's: a bridge's tasks/result).
struct UpstreamTask {
  std::shared_ptr<upstream::Upstream> upstream;
  cluster::TaskRef ref;
  std::string id;  ///< the gateway's
  upstream::Caller caller;
  RelayRedaction redaction;  ///< what the upstream answers, redacted (ask_upstream)
};
/// Sends `method` about `u` to its upstream: params `extra` with `taskId`
/// set to the upstream's id (but for tasks/list, in `u`'s session), in the session the task lives in, until
/// `deadline` (none: the server's timeout) or `cancel`. What the upstream
/// asks the client meanwhile goes to `client` (null: it is refused). The
/// upstream's id never reaches the client: in an error it becomes the
/// gateway's. The answer is redacted (redact_task_reply).
Task<upstream::Reply> ask_upstream(const UpstreamTask& u, std::string_view method, json::Document extra,
                                   CancelSignal& cancel, std::shared_ptr<upstream::ClientChannel> client = nullptr,
                                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
/// ask_upstream for the client of `r`, cancelled with its request.
Task<upstream::Reply> ask_upstream(Request& r, const TaskTarget& t, std::string_view method, json::Document extra,
                                   std::shared_ptr<upstream::ClientChannel> client = nullptr,
                                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
/// When a request that waits for `t`'s end gives up: at its expiry.
std::chrono::steady_clock::time_point task_deadline(const TaskTarget& t);
/// The empty acknowledgement of tasks/update and tasks/cancel (2026-07-28).
Answer task_ack();

/// Hands the questions of `input_requests` (a DetailedTask's map) that are
/// not in `asked` to the client of `client` on its request's stream, tied
/// to task `id`, and returns the client's answers by key (an answer it
/// could not give as `{"error": {...}}`); adds their keys to `asked`.
Task<json::Document> ask_client_once(ClientCall& client, const json::Value* input_requests, std::set<std::string>& asked,
                                     const std::string& id, std::chrono::steady_clock::time_point deadline,
                                     CancelSignal& cancel);
/// What tasks/result gives a 2025-11-25 client for a finished task shown as
/// 2026-07-28 DetailedTask `detailed`: its result tied to task `id`, or its
/// JSON-RPC error.
Answer outcome_of(const json::Value& detailed, mcp::TaskStatus status, const std::string& id);

/// tasks/get of a 2026-07-28 client for a task of a 2025-11-25 upstream:
/// results inlined, and the questions the task asks (which that upstream
/// sends only on tasks/result) as `inputRequests`.
Task<Answer> get_bridged(Services& sv, Request& r, const TaskTarget& t);
/// tasks/update of a 2026-07-28 client for such a task: answers its questions.
Answer update_bridged(Services& sv, const TaskTarget& t, const json::Value& responses);
/// tasks/result of a 2025-11-25 client for a task of a 2026-07-28 upstream:
/// polls tasks/get until the task ends, asking the client its questions on
/// the way (tasks/update).
Task<Answer> result_bridged(Services& sv, Request& r, const TaskTarget& t);

}  // namespace mcpgw::server
