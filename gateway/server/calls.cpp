#include "server/calls.hpp"

namespace mcpgw::server {

ClientCallSettings client_settings(const Services& sv) {
  auto cfg = sv.settings.config();
  const auto& l = cfg->limits;
  ClientRequestLimits limits{static_cast<std::size_t>(l.max_client_requests_per_call),
                             static_cast<std::size_t>(l.max_client_requests_per_session)};
  return {limits, {std::move(cfg), &sv.metrics}};
}

namespace {

/// The server's client of a parked call: the engine keeps the ClientCall
/// it was started with (drive() is the only place that starts one).
ClientCall& client_of(saga::Parked& p) { return static_cast<ClientCall&>(*p.client); }

/// The MRTR answer of a suspendable call: the result, or the questions as
/// `input_required` with a requestState that continues the call.
Task<Answer> mrtr(Services& sv, Request& r, const std::string& target, const json::Value* args, Work work) {
  const json::Value* p = r.params();
  const json::Value* responses = json::find(*p, "inputResponses");
  const json::Value* state = json::find(*p, "requestState");
  if (responses && !responses->IsObject())
    co_return Answer::invalid_params("inputResponses must be an object mapping inputRequests keys to the client's results");
  if (responses)
    for (const auto& e : responses->GetObject())
      if (!e.value.IsObject())
        co_return Answer::invalid_params("inputResponses." + std::string(e.name.GetString()) +
                                      " must be an object (the result of that input request)");
  if (state && !state->IsString()) co_return Answer::invalid_params("requestState must be the string the server returned");

  std::shared_ptr<const saga::Keyring> keys = sv.settings.keyring();
  saga::Claims expect;
  expect.kind = "mrtr";
  expect.principal = r.session->context().principal;
  expect.target = target;
  expect.args_digest = saga::digest(args);
  json::Document answers(rapidjson::kObjectType);
  std::shared_ptr<saga::Parked> parked;
  if (state) {
    auto opened = keys->open(std::string_view(state->GetString(), state->GetStringLength()), expect);
    if (auto* refusal = std::get_if<saga::Refusal>(&opened))
      co_return Answer::error(jsonrpc::kInvalidParams, "Invalid requestState: " + refusal->message);
    const saga::Claims& c = std::get<saga::Claims>(opened);
    if (const json::Value* a = json::find(c.state, "answers"); a && a->IsObject())
      answers = json::clone(*a);
    parked = sv.engine.take(c.state);
  }
  if (responses)
    for (const auto& e : responses->GetObject())
      json::set(answers, std::string_view(e.name.GetString(), e.name.GetStringLength()),
                json::copy(e.value, answers.GetAllocator()), answers.GetAllocator());

  auto started = std::chrono::steady_clock::now();
  auto outcome = co_await drive(sv, r, parked, answers, std::move(work), false);
  audit_round(sv, r, "mrtr_round", target.substr(target.find(' ') + 1), args, outcome,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  if (auto* done = std::get_if<upstream::Reply>(&outcome)) co_return Answer::relay(std::move(*done));
  auto& questions = std::get<std::vector<saga::Question>>(outcome);

  // The upstream asks the client something: hand the questions out.
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("resultType", "input_required", a);
  result.AddMember("inputRequests", saga::input_requests(questions, a), a);
  saga::Claims claims = std::move(expect);
  auto& ca = claims.state.GetAllocator();
  claims.state.AddMember("park", json::str(parked->id, ca), ca);
  claims.state.AddMember("answers", json::copy(parked->inbox->answers(), ca), ca);
  auto sealed = keys->seal(std::move(claims));
  if (!sealed) {
    saga::Engine::abandon(*parked);
    co_return Answer::error(jsonrpc::kInternalError, "mcpgw: cannot suspend the call: " + sealed.error());
  }
  result.AddMember("requestState", json::str(*sealed, a), a);
  if (auto parked_ok = sv.engine.park(parked, keys->ttl()); !parked_ok)
    co_return Answer::error(jsonrpc::kInternalError, parked_ok.error());
  co_return Answer::result(std::move(result));
}

}  // namespace

Task<Answer> execute(Services& sv, Request& r, std::string target, const json::Value* args, Work work) {
  if (r.context.stateless) co_return co_await mrtr(sv, r, target, args, std::move(work));
  auto client = std::make_shared<ClientCall>(r.session, *r.exchange, sv.forwarded_ids, nullptr, client_settings(sv));
  struct CloseAtEnd {
    ClientCall& c;
    ~CloseAtEnd() { c.close(); }
  } close_at_end{*client};
  Progress* progress = nullptr;
  if (const json::Value* token = r.progress_token()) {
    progress = &client->progress();
    progress->retarget(token);
  }
  upstream::Reply reply = co_await work(client, r.exchange->cancel_signal(), progress);
  co_return Answer::relay(std::move(reply));
}


void audit_round(Services& sv, Request& r, std::string_view event, std::string_view tool, const json::Value* args,
                 const saga::Engine::Outcome& outcome, double ms) {
  if (!sv.audit.enabled()) return;
  upstream::Caller who = caller_of(*r.session);
  AuditRecord a;
  a.event = event;
  a.principal = who.principal;
  a.session = who.session;
  a.mode = who.mode;
  a.tool = std::string(tool);
  a.arguments = args;
  a.ms = ms;
  if (auto trace = mcp::trace_of(r.params())) a.trace_id = trace->trace_id.str();
  if (const auto* done = std::get_if<upstream::Reply>(&outcome)) {
    bool is_error = done->rpc_error || (json::find(done->body, "isError") && done->body["isError"].IsTrue());
    a.outcome = r.exchange->cancelled() ? "cancelled" : is_error ? "error" : "ok";
    a.reason = "complete";
  } else {
    a.outcome = "ok";
    a.reason = "suspended: " + std::to_string(std::get<std::vector<saga::Question>>(outcome).size()) +
               " question(s) for the client";
  }
  sv.audit.record(a);
}

upstream::CallOptions options_for(const upstream::ToolOrigin& origin, CancelSignal& cancel,
                                  const upstream::Caller& caller, std::shared_ptr<ClientCall> client) {
  upstream::CallOptions o;
  o.deadline = origin.deadline();
  o.cancel = &cancel;
  o.caller = &caller;
  o.client = std::move(client);
  return o;
}

Task<saga::Engine::Outcome> drive(Services& sv, Request& r, std::shared_ptr<saga::Parked>& parked,
                                  const json::Value& answers, Work work, bool sagas) {
  transport::Exchange& ex = *r.exchange;
  if (parked) {
    // Progress from now on is this request's.
    ClientCall& client = client_of(*parked);
    client.progress().retarget(r.progress_token());
    client.attach(r.session, ex);
    parked->inbox->answer(answers);
  } else {
    // Not parked here (a first call, another gateway process, a restart):
    // run it, answering whatever it asks that the client has already
    // answered.
    auto inbox = std::make_shared<saga::Inbox>();
    inbox->preload(answers);
    auto client = std::make_shared<ClientCall>(r.session, ex, sv.forwarded_ids, inbox, client_settings(sv), !sagas);
    client->progress().retarget(r.progress_token());
    // Not the request's strand: the call outlives the request, and its
    // continuations come on other connections.
    parked = sv.engine.start(sv.io, inbox, client,
                             [client, work = std::move(work)](CancelSignal& cancel) {
                               return work(client, cancel, &client->progress());
                             });
    if (!parked) co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw is shutting down");
  }
  auto questions = co_await sv.engine.wait(parked, ex.cancel_signal());
  client_of(*parked).detach();
  co_return sv.engine.conclude(*parked, ex.cancelled(), std::move(questions));
}

}  // namespace mcpgw::server
