// A client of one generation of MCP tasks over an upstream of the other.
// A 2026-07-28 client polls tasks/get and answers with tasks/update; a
// 2025-11-25 upstream hands its questions out only on the stream of a
// tasks/result, which blocks until the task ends. A 2025-11-25 client
// waits on tasks/result for what a 2026-07-28 upstream shows on tasks/get.
#include <set>

#include "server/client_call.hpp"
#include "server/tasks.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

/// Polling a 2026-07-28 upstream: its suggestion, within these bounds.
constexpr std::int64_t kMinPollMs = 100;
constexpr std::int64_t kMaxPollMs = 2000;

/// The tasks/result that carries the questions of `t`'s task (a 2025-11-25
/// upstream's) to the client of `r`, which polls: started with the first
/// tasks/get that finds the task waiting for input, kept with the task.
std::shared_ptr<tasks::TaskRun> question_pump(Services& sv, Request& r, const TaskTarget& t) {
  return sv.tasks.run_of(*t.local, [&]() -> std::shared_ptr<tasks::TaskRun> {
    auto run = std::make_shared<tasks::TaskRun>();
    auto client = std::make_shared<ClientCall>(r.session, *r.exchange, sv.forwarded_ids, run->inbox(), client_settings(sv));
    client->detach();
    client->serve_task(t.id);
    auto u = std::make_shared<const UpstreamTask>(UpstreamTask{t.upstream, t.ref, t.id, caller_of(*r.session), t.redaction});
    auto deadline = task_deadline(t);
    bool started = run->start(sv.engine, sv.io, client, [u, client, deadline](CancelSignal& cancel) -> Task<upstream::Reply> {
      co_return co_await ask_upstream(*u, "tasks/result", json::Document(rapidjson::kObjectType), cancel, client,
                                      deadline);
    });
    return started ? run : nullptr;
  });
}

}  // namespace

Task<Answer> get_bridged(Services& sv, Request& r, const TaskTarget& t) {
  upstream::Reply now = co_await ask_upstream(r, t, "tasks/get", json::Document(rapidjson::kObjectType));
  if (now.rpc_error) co_return Answer::relay(std::move(now));
  auto read = mcp::read_task(now.body);
  if (!read)
    co_return Answer::error(jsonrpc::kInternalError,
                            "mcpgw: upstream '" + t.ref.server + "' answered tasks/get with something that is not a task");
  mcp::TaskState state = *read;
  state.task_id = t.id;
  std::shared_ptr<tasks::TaskRun> pump = t.local ? sv.tasks.run_of(*t.local) : nullptr;
  if (state.status == mcp::TaskStatus::InputRequired && t.local) pump = question_pump(sv, r, t);
  std::vector<saga::Question> pending = pump && !pump->finished() ? pump->inbox()->pending() : std::vector<saga::Question>{};
  std::optional<upstream::Reply> outcome;
  if (state.status == mcp::TaskStatus::Completed || state.status == mcp::TaskStatus::Failed) {
    if (pump && pump->finished()) {
      outcome = pump->result();
    } else {
      // Finished: tasks/result answers at once.
      outcome = co_await ask_upstream(r, t, "tasks/result", json::Document(rapidjson::kObjectType), nullptr,
                                      task_deadline(t));
    }
    // A tool error is `completed` in 2026-07-28, `failed` in 2025-11-25.
    state.status = outcome->rpc_error ? mcp::TaskStatus::Failed : mcp::TaskStatus::Completed;
  } else if (!pending.empty()) {
    state.status = mcp::TaskStatus::InputRequired;
  } else if (state.status == mcp::TaskStatus::InputRequired) {
    // The question is on its way (the upstream sends it on tasks/result),
    // or this process cannot fetch it: not created here.
    state.status = mcp::TaskStatus::Working;
    state.status_message = t.local ? "fetching the server's question"
                                   : "waiting for input; the gateway process that created the task relays its questions";
  }
  json::Document out = tasks::state_document(state, true);
  if (outcome) tasks::add_outcome(out, *outcome);
  if (state.status == mcp::TaskStatus::InputRequired)
    json::set(out, "inputRequests", saga::input_requests(pending, out.GetAllocator()), out.GetAllocator());
  co_return Answer::result(std::move(out));
}

Answer update_bridged(Services& sv, const TaskTarget& t, const json::Value& responses) {
  if (auto pump = t.local ? sv.tasks.run_of(*t.local) : nullptr) pump->inbox()->answer(responses);
  return task_ack();
}

Task<json::Document> ask_client_once(ClientCall& client, const json::Value* input_requests, std::set<std::string>& asked,
                                     const std::string& id, Clock::time_point deadline, CancelSignal& cancel) {
  json::Document answers(rapidjson::kObjectType);
  auto& a = answers.GetAllocator();
  if (!input_requests || !input_requests->IsObject()) co_return answers;
  for (const auto& q : input_requests->GetObject()) {
    std::string key(q.name.GetString(), q.name.GetStringLength());
    auto method = json::get_string(q.value, "method");
    if (!method || !asked.insert(key).second) continue;
    const json::Value* p = json::find(q.value, "params");
    json::Document params = p && p->IsObject() ? json::clone(*p) : json::Document(rapidjson::kObjectType);
    mcp::set_related_task(params, id, params.GetAllocator());
    upstream::Reply got = co_await client.request(*method, &params, deadline, cancel);
    json::Value answer(rapidjson::kObjectType);
    if (got.rpc_error) answer.AddMember("error", json::copy(got.body, a), a);
    else answer = json::copy(got.body, a);
    json::set(answers, key, std::move(answer), a);
  }
  co_return answers;
}

Answer outcome_of(const json::Value& detailed, mcp::TaskStatus status, const std::string& id) {
  if (status == mcp::TaskStatus::Cancelled)
    return Answer::error(jsonrpc::kInternalError, "mcpgw: the task was cancelled");
  const json::Value* error = json::find(detailed, "error");
  if (status == mcp::TaskStatus::Failed || error) {
    if (error && error->IsObject()) return Answer::relay(upstream::Reply{true, json::clone(*error)});
    return Answer::error(jsonrpc::kInternalError, "mcpgw: the task failed");
  }
  const json::Value* result = json::find(detailed, "result");
  json::Document out = result && result->IsObject() ? json::clone(*result) : json::Document(rapidjson::kObjectType);
  mcp::set_related_task(out, id, out.GetAllocator());
  return Answer::result(std::move(out));
}

Task<Answer> result_bridged(Services& sv, Request& r, const TaskTarget& t) {
  RequestClient client(sv, r);
  CancelSignal& cancel = r.exchange->cancel_signal();
  const auto deadline = task_deadline(t);
  std::set<std::string> asked;
  while (!cancel.cancelled() && Clock::now() < deadline) {
    upstream::Reply now = co_await ask_upstream(r, t, "tasks/get", json::Document(rapidjson::kObjectType));
    if (now.rpc_error) co_return Answer::relay(std::move(now));
    auto st = mcp::read_task(now.body);
    if (!st)
      co_return Answer::error(jsonrpc::kInternalError, "mcpgw: upstream '" + t.ref.server +
                                                           "' answered tasks/get with something that is not a task");
    if (mcp::is_terminal(st->status)) co_return outcome_of(now.body, st->status, t.id);
    if (st->status == mcp::TaskStatus::InputRequired) {
      // Each question once, on this request's stream, tied to the task;
      // the answers go back with tasks/update.
      json::Document answers =
          co_await ask_client_once(*client, json::find(now.body, "inputRequests"), asked, t.id, deadline, cancel);
      if (!answers.ObjectEmpty()) {
        json::Document extra(rapidjson::kObjectType);
        json::set(extra, "inputResponses", json::copy(answers, extra.GetAllocator()), extra.GetAllocator());
        upstream::Reply ack = co_await ask_upstream(r, t, "tasks/update", std::move(extra));
        if (ack.rpc_error) co_return Answer::relay(std::move(ack));
        continue;
      }
    }
    Event tick;
    auto pause = std::chrono::milliseconds(std::clamp<std::int64_t>(st->poll_ms.value_or(tasks::kPollMs), kMinPollMs, kMaxPollMs));
    co_await tick.wait(tick.generation(), std::min(deadline, Clock::now() + pause), &cancel);
  }
  co_return Answer::error(jsonrpc::kInternalError,
                          cancel.cancelled() ? "mcpgw: the request was cancelled; the task goes on"
                                             : "mcpgw: the task did not end before it expired");
}

}  // namespace mcpgw::server
