// tools/callSaga and tools/resumeSaga (seed 004): a tool call whose
// questions are handed out as saga steps under a signed sagaToken.
#include "mcp/protocol.hpp"
#include "server/call_filter.hpp"
#include "server/tool_search.hpp"
#include "server/tools.hpp"

namespace mcpgw::server {
namespace {

/// The saga answer for `outcome`: the final CallToolResult, or the
/// suspended state with a new sagaToken and the steps.
Answer saga_reply(Services& sv, Request& r, saga::Engine::Outcome outcome, std::shared_ptr<saga::Parked>& parked,
                  const std::string& tool, const json::Value& arguments) {
  if (auto* done = std::get_if<upstream::Reply>(&outcome)) return Answer::relay(std::move(*done));
  auto& questions = std::get<std::vector<saga::Question>>(outcome);
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("state", "suspended", a);
  json::Value steps(rapidjson::kArrayType);
  saga::Claims claims;
  claims.kind = "saga";
  claims.principal = r.session->context().principal;
  claims.target = "tools/call " + tool;
  claims.args_digest = saga::digest(&arguments);
  auto& ca = claims.state.GetAllocator();
  // Every step so far, answered or not: each resume must carry them all.
  json::Value pending(rapidjson::kArrayType);
  json::Document earlier = parked->inbox->answers();
  for (const auto& e : earlier.GetObject()) pending.PushBack(json::copy(e.name, ca), ca);
  for (auto& q : questions) {
    json::Value step(rapidjson::kObjectType);
    // The seed's step types, and roots for what it did not foresee.
    std::string_view type = q.method == "elicitation/create"      ? "elicitation"
                            : q.method == "sampling/createMessage" ? "sampling"
                                                                   : "roots";
    step.AddMember("type", json::str(type, a), a);
    step.AddMember("stepId", json::str(q.key, a), a);
    step.AddMember("params", json::copy(q.params, a), a);
    steps.PushBack(step, a);
    pending.PushBack(json::str(q.key, ca), ca);
  }
  claims.state.AddMember("park", json::str(parked->id, ca), ca);
  claims.state.AddMember("tool", json::str(tool, ca), ca);
  claims.state.AddMember("arguments", json::copy(arguments, ca), ca);
  claims.state.AddMember("steps", pending, ca);
  std::shared_ptr<const saga::Keyring> keys = sv.settings.keyring();
  auto sealed = keys->seal(std::move(claims));
  if (!sealed) {
    saga::Engine::abandon(*parked);
    return Answer::error(jsonrpc::kInternalError, "mcpgw: cannot suspend the saga: " + sealed.error());
  }
  result.AddMember("sagaToken", json::str(*sealed, a), a);
  result.AddMember("steps", steps, a);
  if (auto parked_ok = sv.engine.park(parked, keys->ttl()); !parked_ok)
    return Answer::error(jsonrpc::kInternalError, parked_ok.error());
  return Answer::result(std::move(result));
}

/// Every step the client completed so far, by id: its result, or
/// {"error": ...} for a step that failed on the client's side; or why the
/// list is not acceptable.
std::variant<json::Document, std::string> completed_steps(const json::Value& steps) {
  json::Document answers(rapidjson::kObjectType);
  auto& a = answers.GetAllocator();
  for (const auto& step : steps.GetArray()) {
    auto id = json::get_string(step, "stepId");
    const json::Value* result = json::find(step, "result");
    const json::Value* error = json::find(step, "error");
    if (!id) return std::string("every completed step needs a stepId string");
    if ((result && error) || (!result && !error))
      return "completed step " + std::string(*id) + " needs exactly one of result and error";
    if ((result && !result->IsObject()) || (error && !error->IsObject()))
      return "completed step " + std::string(*id) + ": result or error must be an object";
    json::Value answer(rapidjson::kObjectType);
    if (result) answer = json::copy(*result, a);
    else answer.AddMember("error", json::copy(*error, a), a);
    json::set(answers, *id, std::move(answer), a);
  }
  return answers;
}

/// The client's trace context of request `params`, as the `_meta` a tool
/// call continues it from; null without one.
std::shared_ptr<json::Document> trace_meta(const json::Value* params) {
  auto trace = mcp::trace_of(params);
  if (!trace) return nullptr;
  auto meta = std::make_shared<json::Document>(rapidjson::kObjectType);
  json::set(*meta, mcp::kMetaTraceparent, json::str(trace->header(), meta->GetAllocator()), meta->GetAllocator());
  return meta;
}

}  // namespace

Task<Answer> call_saga(Services& sv, Request& r) {
  // Admitted as a tools/call is (the tool resolved, the headers checked),
  // then run as a saga by the last admission filter (run_saga).
  CallRequest call{sv, r};
  call.saga = true;
  co_return co_await AdmitNext(admit_filters())(call);
}

Task<Answer> run_saga(Services& sv, Request& r, const CalledTool& c) {
  auto arguments = std::make_shared<json::Document>(rapidjson::kObjectType);
  if (c.args) *arguments = json::clone(*c.args);
  std::shared_ptr<saga::Parked> parked;
  auto started = std::chrono::steady_clock::now();
  json::Value none(rapidjson::kObjectType);
  auto outcome = co_await drive(sv, r, parked, none, called_work(sv, r, c, arguments, trace_meta(r.params())), true);
  audit_round(sv, r, "saga_round", c.name, &*arguments, outcome,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  co_return saga_reply(sv, r, std::move(outcome), parked, c.name, *arguments);
}

Task<Answer> resume_saga(Services& sv, Request& r) {
  const json::Value* p = r.params();
  if (!p || !p->IsObject()) co_return Answer::invalid_params("tools/resumeSaga needs params");
  auto token = json::get_string(*p, "sagaToken");
  if (!token) co_return Answer::invalid_params("sagaToken must be the string of the last suspended result");
  const json::Value* steps = json::find(*p, "completedSteps");
  if (!steps || !steps->IsArray()) co_return Answer::invalid_params("completedSteps must be an array");
  auto completed = completed_steps(*steps);
  if (auto* why = std::get_if<std::string>(&completed)) co_return Answer::invalid_params(*why);
  const json::Document& answers = std::get<json::Document>(completed);

  std::shared_ptr<const saga::Keyring> keys = sv.settings.keyring();
  saga::Claims expect;
  expect.kind = "saga";
  expect.principal = r.session->context().principal;
  auto opened = keys->open(*token, expect);
  if (auto* refusal = std::get_if<saga::Refusal>(&opened))
    co_return Answer::error(jsonrpc::kInvalidParams, "Invalid sagaToken: " + refusal->message);
  const saga::Claims& c = std::get<saga::Claims>(opened);
  // Nothing runs until the whole resume is known to be acceptable.
  if (const json::Value* pending = json::find(c.state, "steps"); pending && pending->IsArray())
    for (const auto& step : pending->GetArray())
      if (step.IsString() && !json::find(answers, step.GetString()))
        co_return Answer::invalid_params("completedSteps has no result or error for step " + std::string(step.GetString()));
  auto name = json::get_string(c.state, "tool");
  const json::Value* args = json::find(c.state, "arguments");
  if (!name || !args || !args->IsObject() || saga::digest(args) != c.args_digest)
    co_return Answer::error(jsonrpc::kInvalidParams, "Invalid sagaToken: it names no call");
  auto snap = sv.catalog.snapshot();
  auto mode = snap->mode_index(r.session->mode());
  const catalog::ExposedTool* tool = mode ? snap->find_tool(*name, *mode) : nullptr;
  if (const integrity::ToolReport* w = tool ? nullptr : snap->integrity.withheld_tool(*name))
    co_return Answer::relay(upstream::Reply{false, mcp::tool_error(w->refusal())});
  if (!tool)
    co_return Answer::error(jsonrpc::kInvalidParams,
                         "Invalid sagaToken: its tool " + std::string(*name) + " is not available to this client");
  // A token resumes once; a second resume of it is refused before it runs,
  // on any replica (cluster.redis).
  if (sv.cluster) {
    auto first = co_await sv.cluster->use_once("saga", c.id, c.expires);
    if (!first)
      co_return Answer::error(jsonrpc::kInternalError,
                           "mcpgw: cannot resume the saga: " + first.error() +
                               "; a saga token resumes once across the cluster, so resuming waits for Redis");
    if (!*first) co_return Answer::error(jsonrpc::kInvalidParams, "Invalid sagaToken: it was already resumed");
  }
  if (!sv.engine.first_resume(c.id, c.expires))
    co_return Answer::error(jsonrpc::kInvalidParams, "Invalid sagaToken: it was already resumed");
  auto arguments = std::make_shared<json::Document>(json::clone(*args));
  std::shared_ptr<saga::Parked> parked = sv.engine.take(c.state);
  auto started = std::chrono::steady_clock::now();
  Work work = parked ? Work() : tool_work(sv, *r.session, snap, *mode, *tool, arguments, trace_meta(r.params()), r.context.span);
  auto outcome = co_await drive(sv, r, parked, answers, std::move(work), true);
  audit_round(sv, r, "saga_round", tool->name, &*arguments, outcome,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  co_return saga_reply(sv, r, std::move(outcome), parked, tool->name, *arguments);
}

}  // namespace mcpgw::server
