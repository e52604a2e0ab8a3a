// How a tools/call becomes a task: passed through to an upstream that runs
// tasks, or run by the gateway itself (`tasks.gateway`).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/client_call.hpp"
#include "server/tasks.hpp"
#include "util/iso8601.hpp"
#include "util/random.hpp"

namespace mcpgw::server {
namespace {

/// How long a task the gateway holds is kept when the client asks for no
/// ttl, and at most.
constexpr std::int64_t kDefaultTtlMs = 3600LL * 1000;
constexpr std::int64_t kMaxTtlMs = 24LL * 3600 * 1000;

/// The ttl a 2025-11-25 client asks for in its `task` params, bounded.
std::int64_t requested_ttl(const json::Value* task) {
  const json::Value* ttl = task ? json::find(*task, "ttl") : nullptr;
  if (!ttl || !ttl->IsNumber() || ttl->GetDouble() <= 0) return kDefaultTtlMs;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(ttl->GetDouble()), 1000, kMaxTtlMs);
}

Answer limit_refusal(const std::string& principal, int max, std::int64_t retry_ms) {
  json::Document data(rapidjson::kObjectType);
  auto& a = data.GetAllocator();
  data.AddMember("limit", "max_per_principal", a);
  data.AddMember("retryAfterMs", retry_ms, a);
  return Answer::error(-32000,
                       "Too many tasks: tasks.max_per_principal (" + std::to_string(max) + ") reached for " +
                           (principal.empty() ? std::string("anonymous clients") : "principal \"" + principal + "\""),
                       &data);
}

/// Keeps the call's CreateTaskResult `_meta` (e.g. a model-immediate-response)
/// on the one the gateway writes.
void keep_meta(json::Document& out, const json::Value& from) {
  if (const json::Value* meta = json::find(from, "_meta"); meta && meta->IsObject())
    json::set(out, "_meta", json::copy(*meta, out.GetAllocator()), out.GetAllocator());
}

/// The CreateTaskResult of `state` for the client of `r`.
json::Document create_result(Request& r, const mcp::TaskState& state) {
  return r.context.stateless ? mcp::task_2026(state, true) : mcp::create_result_2025(state);
}

/// Starts a task the gateway runs: the work already done (`done`), or `work`.
Task<Answer> start_gateway_task(Services& sv, Request& r, TaskPlan& plan, std::optional<upstream::Reply> done,
                                Work work) {
  auto cfg = sv.settings.config();
  auto run = std::make_shared<tasks::TaskRun>(cfg->tasks.max_result_bytes);
  cluster::TaskRef ref;
  ref.kind = cluster::TaskRef::Kind::Gateway;
  ref.principal = r.session->context().principal;
  ref.upstream_id = random_hex(16);
  ref.created_ms = tasks::unix_ms();
  ref.expires_ms = ref.created_ms + plan.ttl_ms;
  auto added = sv.tasks.add(std::move(plan.slot), std::move(ref), r.context.stateless ? "" : r.session->id(), run);
  if (!added) co_return Answer::error(jsonrpc::kInternalError, "mcpgw: cannot create the task: " + added.error());
  std::shared_ptr<tasks::TaskRecord> record = *added;
  std::weak_ptr<tasks::TaskRecord> weak = record;
  // Every change: its time, the creating session told, the replicas too.
  run->watch([&sv, weak] {
    auto rec = weak.lock();
    if (!rec) return;
    rec->updated_ms = tasks::unix_ms();
    notify_status(sv, *rec, tasks::run_state(*rec, false));
    sv.task_share.put(*rec);
  });
  // The client is asked through the task (its inbox), never on the stream
  // of the request that created it, which is answered at once.
  auto client = std::make_shared<ClientCall>(r.session, *r.exchange, sv.forwarded_ids, run->inbox(), client_settings(sv));
  client->detach();
  client->serve_task(record->id);
  // The replicas learn of the task before it runs: a change the run makes
  // (the watcher's put) must reach Redis after this first state, never
  // be overwritten by it (a question asked at once stayed unseen there).
  if (auto shared = co_await sv.task_share.put_new(*record); !shared)
    spdlog::warn("task {}: other replicas cannot answer for it: Redis did not take it: {}", record->id.substr(0, 16),
                 shared.error());
  auto shared_done = done ? std::make_shared<upstream::Reply>(std::move(*done)) : nullptr;
  bool started = run->start(sv.engine, sv.io, client,
                            [client, work = std::move(work), shared_done](CancelSignal& cancel) -> Task<upstream::Reply> {
                              if (shared_done) co_return std::move(*shared_done);
                              co_return co_await work(client, cancel, nullptr);
                            });
  if (!started) {
    // The task is listed here and in Redis already: it ends failed, so
    // that neither shows it working until it expires.
    constexpr const char* kStopping = "mcpgw is shutting down";
    run->finish(upstream::Reply::error(jsonrpc::kInternalError, kStopping));
    co_return Answer::error(jsonrpc::kInternalError, kStopping);
  }
  spdlog::info("task {} created by principal={} session={}: the gateway runs it", record->id.substr(0, 16),
               record->ref.principal.empty() ? "-" : record->ref.principal, r.session->id().substr(0, 8));
  co_return Answer::result(create_result(r, tasks::run_state(*record, r.context.stateless)));
}

}  // namespace

std::variant<TaskPlan, PlanRefusal> plan_task(Services& sv, Request& r, const catalog::ExposedTool& tool) {
  using Kind = TaskPlan::Kind;
  TaskPlan plan;
  const json::Value* params = r.params();
  const json::Value* task = params ? json::find(*params, "task") : nullptr;
  auto up = std::dynamic_pointer_cast<upstream::Upstream>(tool.origin);
  bool up_modern = up && up->speaks_stateless();
  bool up_runs = up && tool.task_support != mcp::TaskSupport::Forbidden;
  if (!r.context.stateless) {
    // MCP 2025-11-25: the client asks for a task with `task`.
    if (!task) return plan;
    if (!task->IsObject()) return PlanRefusal{"invalid_params", Answer::invalid_params("task must be an object ({ttl?})")};
    plan.client_asked = true;
    plan.ttl_ms = requested_ttl(task);
    if (up_modern || up_runs) {
      plan.kind = Kind::Upstream;
      if (!up_modern) plan.task = json::clone(*task);
    } else if (tool.gateway_task) {
      plan.kind = Kind::Gateway;
    } else {
      return PlanRefusal{"task_forbidden", Answer::error(jsonrpc::kMethodNotFound,
                                                         "Method not found: tool " + tool.name +
                                                             " cannot be called as a task (its execution.taskSupport "
                                                             "is forbidden)")};
    }
  } else {
    // MCP 2026-07-28: the server decides, for a client that declared the
    // extension; a `task` param is the old generation's and means nothing.
    bool declared = mcp::declares_tasks_extension(r.session->capabilities());
    plan.ttl_ms = kDefaultTtlMs;
    if (up_modern) {
      if (declared) plan.kind = Kind::Upstream;
    } else if (up_runs && tool.task_support == mcp::TaskSupport::Required) {
      if (!declared) {
        json::Document data(rapidjson::kObjectType);
        data.AddMember("requiredCapabilities", json::copy(mcp::tasks_extension_capability(), data.GetAllocator()),
                       data.GetAllocator());
        return PlanRefusal{"task_capability",
                           Answer::error(mcp::kMissingClientCapability,
                                         "Missing required client capability: tool " + tool.name +
                                             " runs only as a task, which needs the io.modelcontextprotocol/tasks "
                                             "extension",
                                         &data)};
      }
      plan.kind = Kind::Upstream;
    } else if (tool.gateway_task && declared) {
      plan.kind = Kind::Gateway;
    }
  }
  if (plan.kind == Kind::None) return plan;
  int max = sv.settings.config()->tasks.max_per_principal;
  const std::string& principal = r.session->context().principal;
  auto slot = sv.tasks.reserve(principal, max);
  if (auto* retry = std::get_if<std::int64_t>(&slot))
    return PlanRefusal{"task_limit", limit_refusal(principal, max, *retry)};
  plan.slot = std::move(std::get<tasks::TaskRegistry::Slot>(slot));
  return plan;
}

Task<Answer> run_as_task(Services& sv, Request& r, TaskPlan plan, const catalog::ExposedTool& tool,
                         const json::Value* args, Work work) {
  if (plan.kind == TaskPlan::Kind::Gateway) co_return co_await start_gateway_task(sv, r, plan, std::nullopt, std::move(work));
  Answer answer = co_await execute(sv, r, "tools/call " + tool.name, args, std::move(work));
  auto created = answer.is_error() ? std::nullopt : mcp::created_task(answer.body());
  if (!created) {
    // The upstream answered at once. A 2025-11-25 client that asked for a
    // task still gets one, already complete.
    if (!plan.client_asked) co_return answer;
    upstream::Reply done{answer.is_error(), std::move(answer.body())};
    co_return co_await start_gateway_task(sv, r, plan, std::move(done), Work());
  }
  cluster::TaskRef ref;
  ref.kind = cluster::TaskRef::Kind::Upstream;
  ref.principal = r.session->context().principal;
  ref.server = tool.origin->name();
  ref.upstream_id = created->task_id;
  ref.upstream_session = answer.upstream_session();
  ref.created_ms = tasks::unix_ms();
  if (created->ttl_ms) ref.expires_ms = ref.created_ms + *created->ttl_ms;
  auto added = sv.tasks.add(std::move(plan.slot), std::move(ref), r.context.stateless ? "" : r.session->id(), nullptr);
  if (!added) co_return Answer::error(jsonrpc::kInternalError, "mcpgw: cannot name the upstream's task: " + added.error());
  sv.task_share.list(**added);
  mcp::TaskState state = *created;
  state.task_id = (*added)->id;
  json::Document out = create_result(r, state);
  keep_meta(out, answer.body());
  spdlog::info("task {} created by principal={} session={}: upstream {} runs it", state.task_id.substr(0, 16),
               (*added)->ref.principal.empty() ? "-" : (*added)->ref.principal, r.session->id().substr(0, 8),
               tool.origin->name());
  co_return Answer::result(std::move(out));
}



void notify_status(Services& sv, const tasks::TaskRecord& rec, const mcp::TaskState& state) {
  if (rec.session.empty()) return;
  auto s = sv.sessions.find(rec.session);
  if (!s) return;
  json::Document params = tasks::state_document(state, false);
  // An upstream's status message is its own words.
  redact_relayed({sv.settings.config(), &sv.metrics}, params);
  s->notify(jsonrpc::make_notification("notifications/tasks/status", &params));
}

Answer refusal(tasks::TaskRefusal why) {
  return Answer::error(jsonrpc::kInvalidParams, why == tasks::TaskRefusal::Expired ? "Failed to retrieve task: Task has expired"
                                                                             : "Failed to retrieve task: Task not found");
}

}  // namespace mcpgw::server
