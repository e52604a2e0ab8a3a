// Handlers of the tasks/* methods, both generations: tasks/get,
// tasks/cancel (both), tasks/result and tasks/list (2025-11-25),
// tasks/update (2026-07-28). A task the gateway runs is answered here; an
// upstream's is asked for under the upstream's own id.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "server/client_call.hpp"
#include "server/tasks.hpp"

namespace mcpgw::server {

RequestClient::RequestClient(Services& sv, Request& r)
    : call_(std::make_shared<ClientCall>(r.session, *r.exchange, sv.forwarded_ids, nullptr, client_settings(sv))) {}

RequestClient::~RequestClient() { call_->close(); }

namespace {

using Clock = std::chrono::steady_clock;
using Kind = cluster::TaskRef::Kind;

/// Replaces `from` by `to` in `text`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// `st` of a task of `t`'s upstream, under the gateway's id; a tool error
/// of a 2026-07-28 upstream (`completed`, `result.isError`) is `failed`
/// for a 2025-11-25 client, as that generation says.
mcp::TaskState as_gateways(mcp::TaskState st, const TaskTarget& t, const json::Value& body, bool modern) {
  st.task_id = t.id;
  const json::Value* result = json::find(body, "result");
  const json::Value* is_error = result ? json::find(*result, "isError") : nullptr;
  if (!modern && st.status == mcp::TaskStatus::Completed && is_error && is_error->IsTrue())
    st.status = mcp::TaskStatus::Failed;
  return st;
}

/// The upstream's answer to a tasks/* request read as a task, or the
/// answer to give instead.
std::variant<mcp::TaskState, Answer> state_of(const upstream::Reply& reply, const TaskTarget& t) {
  if (reply.rpc_error) return Answer::relay(upstream::Reply{true, json::clone(reply.body)});
  auto st = mcp::read_task(reply.body);
  if (!st)
    return Answer::error(jsonrpc::kInternalError,
                         "mcpgw: upstream '" + t.ref.server + "' answered with something that is not a task");
  return *st;
}

/// `params.inputResponses` of a tasks/update, checked.
std::variant<const json::Value*, Answer> input_responses(const Request& r) {
  const json::Value* responses = r.params() ? json::find(*r.params(), "inputResponses") : nullptr;
  if (!responses || !responses->IsObject())
    return Answer::invalid_params("inputResponses must be an object mapping inputRequests keys to the client's results");
  for (const auto& e : responses->GetObject())
    if (!e.value.IsObject())
      return Answer::invalid_params("inputResponses." + std::string(e.name.GetString()) +
                                    " must be an object (the result of that input request)");
  return responses;
}

/// The final outcome of a task the gateway runs, as tasks/result returns it
/// to a 2025-11-25 client: what the call returned, tied to the task.
Answer outcome_2025(const tasks::TaskRecord& rec) {
  if (rec.run->cancelled()) return Answer::error(jsonrpc::kInternalError, "mcpgw: the task was cancelled");
  upstream::Reply r = rec.run->result();
  if (r.rpc_error) return Answer::relay(std::move(r));
  mcp::set_related_task(r.body, rec.id, r.body.GetAllocator());
  return Answer::result(std::move(r.body));
}

/// tasks/result of a task the gateway runs: hands its questions to the
/// client on this request's stream (tied to the task) as they come, then
/// returns its outcome.
Task<Answer> gateway_result(Services& sv, Request& r, const TaskTarget& t) {
  tasks::TaskRun& run = *t.local->run;
  RequestClient client(sv, r);
  CancelSignal& cancel = r.exchange->cancel_signal();
  std::function<bool()> finished = [&run] { return run.finished() || run.cancelled(); };
  while (!finished() && !cancel.cancelled()) {
    auto questions = co_await run.inbox()->wait(finished, cancel);
    json::Document answers(rapidjson::kObjectType);
    for (auto& q : questions) {
      mcp::set_related_task(q.params, t.id, q.params.GetAllocator());
      upstream::Reply reply = co_await client->request(q.method, &q.params, task_deadline(t), cancel);
      json::Value answer(rapidjson::kObjectType);
      if (reply.rpc_error) answer.AddMember("error", json::copy(reply.body, answers.GetAllocator()), answers.GetAllocator());
      else answer = json::copy(reply.body, answers.GetAllocator());
      json::set(answers, q.key, std::move(answer), answers.GetAllocator());
    }
    if (!questions.empty()) run.inbox()->answer(answers);
  }
  if (cancel.cancelled() && !run.finished())
    co_return Answer::error(jsonrpc::kInternalError, "mcpgw: the request was cancelled; the task goes on");
  co_await run.wait(cancel);
  co_return outcome_2025(*t.local);
}

/// tasks/result of a task the gateway runs on another replica: follows its
/// state in Redis, handing its questions to the client on the way (the
/// answers go to the running replica), until it ends.
Task<Answer> remote_result(Services& sv, Request& r, const TaskTarget& t) {
  RequestClient client(sv, r);
  CancelSignal& cancel = r.exchange->cancel_signal();
  const auto deadline = task_deadline(t);
  std::set<std::string> asked;
  while (!cancel.cancelled() && Clock::now() < deadline) {
    auto shared = co_await sv.task_share.get(t.id);
    if (!shared) co_return refusal(tasks::TaskRefusal::NotFound);
    auto st = mcp::read_task(*shared);
    if (!st) co_return refusal(tasks::TaskRefusal::NotFound);
    if (mcp::is_terminal(st->status)) co_return outcome_of(*shared, st->status, t.id);
    json::Document answers =
        co_await ask_client_once(*client, json::find(*shared, "inputRequests"), asked, t.id, deadline, cancel);
    if (!answers.ObjectEmpty()) sv.task_share.answer(t.id, answers);
    // Redis says when it changes; a second bounds a missed message.
    co_await sv.task_share.changed(t.id, std::min(deadline, Clock::now() + std::chrono::seconds(1)), cancel);
  }
  co_return Answer::error(jsonrpc::kInternalError, cancel.cancelled()
                                                       ? "mcpgw: the request was cancelled; the task goes on"
                                                       : "mcpgw: the task did not end before it expired");
}

/// Where a principal's upstream task stands, for tasks/list: one
/// tasks/list per upstream session of the session revisions, a tasks/get
/// each for the stateless ones.
Task<std::vector<json::Document>> upstream_listing(Services& sv, Request& r,
                                                   const std::vector<std::shared_ptr<tasks::TaskRecord>>& records) {
  std::vector<json::Document> out;
  std::map<std::pair<std::string, std::string>, std::vector<std::shared_ptr<tasks::TaskRecord>>> groups;
  for (const auto& rec : records)
    if (rec->ref.kind == Kind::Upstream) groups[{rec->ref.server, rec->ref.upstream_session}].push_back(rec);
  for (const auto& [where, recs] : groups) {
    TaskTarget first{recs.front()->id, recs.front()->ref, recs.front(), sv.upstream(where.first),
                     {sv.settings.config(), &sv.metrics}};
    if (!first.upstream) continue;
    std::map<std::string, mcp::TaskState> listed;
    if (!first.upstream->speaks_stateless()) {
      json::Document extra(rapidjson::kObjectType);
      upstream::Reply reply = co_await ask_upstream(r, first, "tasks/list", std::move(extra));
      const json::Value* tasks = reply.rpc_error ? nullptr : json::find(reply.body, "tasks");
      if (tasks && tasks->IsArray())
        for (const auto& item : tasks->GetArray())
          if (auto st = mcp::read_task(item)) listed.emplace(st->task_id, *st);
    }
    for (const auto& rec : recs) {
      TaskTarget t{rec->id, rec->ref, rec, first.upstream, first.redaction};
      auto it = listed.find(rec->ref.upstream_id);
      upstream::Reply got;
      if (it == listed.end()) {
        got = co_await ask_upstream(r, t, "tasks/get", json::Document(rapidjson::kObjectType));
        auto st = got.rpc_error ? std::nullopt : mcp::read_task(got.body);
        if (!st) continue;  // gone upstream: not the principal's any more
        it = listed.emplace(rec->ref.upstream_id, *st).first;
      }
      out.push_back(tasks::state_document(as_gateways(it->second, t, got.body, false), false));
    }
  }
  co_return out;
}

}  // namespace

std::variant<TaskTarget, Answer> task_target(Services& sv, Request& r) {
  const json::Value* p = r.params();
  auto id = p ? json::get_string(*p, "taskId") : std::nullopt;
  if (!id) return Answer::invalid_params("taskId must be a string");
  if (r.context.stateless && !mcp::declares_tasks_extension(r.session->capabilities())) {
    json::Document data(rapidjson::kObjectType);
    data.AddMember("requiredCapabilities", json::copy(mcp::tasks_extension_capability(), data.GetAllocator()),
                   data.GetAllocator());
    return Answer::error(mcp::kMissingClientCapability,
                         "Missing required client capability: " + std::string(r.message.method()) +
                             " needs the io.modelcontextprotocol/tasks extension in the request's clientCapabilities",
                         &data);
  }
  auto opened = sv.tasks.open(*id, r.session->context().principal);
  if (auto* why = std::get_if<tasks::TaskRefusal>(&opened)) return refusal(*why);
  auto& o = std::get<tasks::TaskRegistry::Opened>(opened);
  TaskTarget t{std::string(*id), std::move(o.ref), std::move(o.local), nullptr, {sv.settings.config(), &sv.metrics}};
  if (t.ref.kind == Kind::Gateway) {
    // Its state lives where it runs, and in Redis for the other replicas.
    if ((t.local && t.local->run) || sv.task_share.on()) return t;
    return refusal(tasks::TaskRefusal::NotFound);
  }
  t.upstream = sv.upstream(t.ref.server);
  if (!t.upstream) return refusal(tasks::TaskRefusal::NotFound);
  return t;
}

Task<upstream::Reply> ask_upstream(const UpstreamTask& u, std::string_view method, json::Document extra,
                                   CancelSignal& cancel, std::shared_ptr<upstream::ClientChannel> client,
                                   std::optional<Clock::time_point> deadline) {
  auto& a = extra.GetAllocator();
  if (method != "tasks/list") json::set(extra, "taskId", json::str(u.ref.upstream_id, a), a);
  upstream::CallOptions o = options_for(*u.upstream, cancel, u.caller, nullptr);
  o.client = std::move(client);
  if (deadline) o.deadline = *deadline;
  const json::Document tasks(rapidjson::kObjectType);
  o.task = &tasks;
  o.upstream_session = u.ref.upstream_session;
  upstream::Reply reply = co_await u.upstream->request(method, extra, o);
  if (reply.rpc_error)
    if (json::Value* m = json::find(reply.body, "message"); m && m->IsString())
      *m = json::str(replaced(m->GetString(), u.ref.upstream_id, u.id), reply.body.GetAllocator());
  redact_task_reply(u.redaction, method, reply);
  co_return reply;
}

Task<upstream::Reply> ask_upstream(Request& r, const TaskTarget& t, std::string_view method, json::Document extra,
                                   std::shared_ptr<upstream::ClientChannel> client,
                                   std::optional<Clock::time_point> deadline) {
  const UpstreamTask u{t.upstream, t.ref, t.id, caller_of(*r.session), t.redaction};
  co_return co_await ask_upstream(u, method, std::move(extra), r.exchange->cancel_signal(), std::move(client),
                                  deadline);
}

Clock::time_point task_deadline(const TaskTarget& t) {
  std::int64_t left = t.ref.expires_ms ? t.ref.expires_ms - tasks::unix_ms() : 24LL * 3600 * 1000;
  return Clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(left, 1));
}


Answer task_ack() { return Answer::empty(); }

Task<Answer> get_task(Services& sv, Request& r) {
  auto target = task_target(sv, r);
  if (auto* refused = std::get_if<Answer>(&target)) co_return std::move(*refused);
  const TaskTarget& t = std::get<TaskTarget>(target);
  const bool modern = r.context.stateless;
  if (t.ref.kind == Kind::Gateway) {
    if (t.local) co_return Answer::result(modern ? tasks::shared_state(*t.local) : tasks::state_document(tasks::run_state(*t.local, false), false));
    auto shared = co_await sv.task_share.get(t.id);
    if (!shared) co_return refusal(tasks::TaskRefusal::NotFound);
    co_return Answer::result(modern ? std::move(*shared) : tasks::state_document(tasks::state_2025(*shared), false));
  }
  if (modern && !t.upstream->speaks_stateless()) co_return co_await get_bridged(sv, r, t);
  upstream::Reply reply = co_await ask_upstream(r, t, "tasks/get", json::Document(rapidjson::kObjectType));
  auto st = state_of(reply, t);
  if (auto* answer = std::get_if<Answer>(&st)) co_return std::move(*answer);
  json::Document out = tasks::state_document(as_gateways(std::get<mcp::TaskState>(st), t, reply.body, modern), modern);
  if (modern) {
    // Both ends speak 2026-07-28: the payload passes as it is.
    auto& a = out.GetAllocator();
    if (const json::Value* requests = json::find(reply.body, "inputRequests"))
      json::set(out, "inputRequests", json::copy(*requests, a), a);
    if (const json::Value* result = json::find(reply.body, "result"))
      tasks::add_outcome(out, upstream::Reply{false, json::clone(*result)});
    else if (const json::Value* error = json::find(reply.body, "error"))
      tasks::add_outcome(out, upstream::Reply{true, json::clone(*error)});
  }
  co_return Answer::result(std::move(out));
}

Task<Answer> task_result(Services& sv, Request& r) {
  auto target = task_target(sv, r);
  if (auto* refused = std::get_if<Answer>(&target)) co_return std::move(*refused);
  const TaskTarget& t = std::get<TaskTarget>(target);
  // Not `t.local ? co_await ... : co_await ...`: GCC 12 destroys the result
  // of such an expression twice.
  if (t.ref.kind == Kind::Gateway && t.local) co_return co_await gateway_result(sv, r, t);
  if (t.ref.kind == Kind::Gateway) co_return co_await remote_result(sv, r, t);
  if (t.upstream->speaks_stateless()) co_return co_await result_bridged(sv, r, t);
  // The upstream blocks until the task ends, asking what it must on this
  // request's stream: those requests go to the client, tied to the task.
  RequestClient client(sv, r);
  client->serve_task(t.id);
  upstream::Reply reply = co_await ask_upstream(r, t, "tasks/result", json::Document(rapidjson::kObjectType),
                                                client.shared(), task_deadline(t));
  if (!reply.rpc_error && mcp::related_task(reply.body))
    mcp::set_related_task(reply.body, t.id, reply.body.GetAllocator());
  co_return Answer::relay(std::move(reply));
}

Task<Answer> list_tasks(Services& sv, Request& r) {
  const std::string& principal = r.session->context().principal;
  auto records = sv.tasks.of(principal);
  json::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  json::Value tasks(rapidjson::kArrayType);
  // Tasks made through other replicas: named in Redis; what they are, their
  // sealed ids say.
  std::set<std::string> here;
  for (const auto& rec : records) here.insert(rec->id);
  std::vector<std::string> shared_ids = co_await sv.task_share.ids_of(principal);
  for (const auto& id : shared_ids) {
    if (here.count(id)) continue;
    auto opened = sv.tasks.open(id, principal);
    auto* o = std::get_if<tasks::TaskRegistry::Opened>(&opened);
    if (!o) continue;
    if (o->ref.kind == Kind::Upstream) {
      auto rec = std::make_shared<tasks::TaskRecord>();
      rec->id = id;
      rec->ref = std::move(o->ref);
      records.push_back(std::move(rec));
    } else if (auto shared = co_await sv.task_share.get(id)) {
      tasks.PushBack(json::Value(tasks::state_document(tasks::state_2025(*shared), false), a), a);
    }
  }
  for (const auto& rec : records)
    if (rec->ref.kind == Kind::Gateway && rec->run)
      tasks.PushBack(json::Value(tasks::state_document(tasks::run_state(*rec, false), false), a), a);
  std::vector<json::Document> listed = co_await upstream_listing(sv, r, records);
  for (auto& d : listed) tasks.PushBack(json::copy(d, a), a);
  out.AddMember("tasks", tasks, a);
  co_return Answer::result(std::move(out));
}

Task<Answer> cancel_task(Services& sv, Request& r) {
  auto target = task_target(sv, r);
  if (auto* refused = std::get_if<Answer>(&target)) co_return std::move(*refused);
  const TaskTarget& t = std::get<TaskTarget>(target);
  const bool modern = r.context.stateless;
  // 2025-11-25 refuses to cancel a finished task; 2026-07-28 acknowledges
  // it again (idempotent).
  auto finished = [&](mcp::TaskStatus s) -> std::optional<Answer> {
    if (!mcp::is_terminal(s)) return std::nullopt;
    if (modern) return task_ack();
    return Answer::error(jsonrpc::kInvalidParams,
                         "Cannot cancel task in terminal status: " + std::string(mcp::status_name(s)));
  };
  if (t.ref.kind == Kind::Gateway) {
    mcp::TaskState st;
    if (t.local) {
      st = tasks::run_state(*t.local, modern);
    } else {
      auto shared = co_await sv.task_share.get(t.id);
      if (!shared) co_return refusal(tasks::TaskRefusal::NotFound);
      st = tasks::state_2025(*shared);
    }
    if (auto done = finished(st.status)) co_return std::move(*done);
    // Stopped here, or by the replica that runs it.
    if (t.local) t.local->run->cancel();
    else sv.task_share.cancel(t.id);
    spdlog::info("task {} cancelled by the client", t.id.substr(0, 16));
    st.status = mcp::TaskStatus::Cancelled;
    st.status_message = "cancelled by the client";
    co_return modern ? task_ack() : Answer::result(tasks::state_document(st, false));
  }
  if (!modern && !t.upstream->speaks_stateless()) {
    // Same generation: the upstream decides, under the gateway's id.
    upstream::Reply reply = co_await ask_upstream(r, t, "tasks/cancel", json::Document(rapidjson::kObjectType));
    auto st = state_of(reply, t);
    if (auto* answer = std::get_if<Answer>(&st)) co_return std::move(*answer);
    co_return Answer::result(tasks::state_document(as_gateways(std::get<mcp::TaskState>(st), t, reply.body, false), false));
  }
  upstream::Reply now = co_await ask_upstream(r, t, "tasks/get", json::Document(rapidjson::kObjectType));
  auto st = state_of(now, t);
  if (auto* answer = std::get_if<Answer>(&st)) co_return std::move(*answer);
  mcp::TaskState state = as_gateways(std::get<mcp::TaskState>(st), t, now.body, modern);
  if (auto done = finished(state.status)) co_return std::move(*done);
  if (auto pump = t.local ? sv.tasks.run_of(*t.local) : nullptr) pump->cancel();
  upstream::Reply reply = co_await ask_upstream(r, t, "tasks/cancel", json::Document(rapidjson::kObjectType));
  if (reply.rpc_error) co_return Answer::relay(std::move(reply));
  if (modern) co_return task_ack();
  // A 2025-11-25 client is answered with the task, cancelled.
  state.status = mcp::TaskStatus::Cancelled;
  co_return Answer::result(tasks::state_document(state, false));
}

Task<Answer> update_task(Services& sv, Request& r) {
  auto target = task_target(sv, r);
  if (auto* refused = std::get_if<Answer>(&target)) co_return std::move(*refused);
  const TaskTarget& t = std::get<TaskTarget>(target);
  auto responses = input_responses(r);
  if (auto* refused = std::get_if<Answer>(&responses)) co_return std::move(*refused);
  const json::Value& given = *std::get<const json::Value*>(responses);
  // Answers to questions not (or no longer) outstanding are ignored, as
  // the extension asks.
  if (t.ref.kind == Kind::Gateway) {
    if (t.local) t.local->run->inbox()->answer(given);
    else sv.task_share.answer(t.id, given);
    co_return task_ack();
  }
  if (!t.upstream->speaks_stateless()) co_return update_bridged(sv, t, given);
  json::Document extra(rapidjson::kObjectType);
  json::set(extra, "inputResponses", json::copy(given, extra.GetAllocator()), extra.GetAllocator());
  upstream::Reply reply = co_await ask_upstream(r, t, "tasks/update", std::move(extra));
  if (reply.rpc_error) co_return Answer::relay(std::move(reply));
  co_return task_ack();
}

}  // namespace mcpgw::server
