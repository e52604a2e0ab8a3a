#include "server/client_call.hpp"

#include <algorithm>
#include <cmath>

#include "mcp/era.hpp"
#include "mcp/tasks.hpp"
#include "util/hex.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

/// `_meta` keys a stateful-era upstream may put on its requests so that a
/// client of the stateless revision sees them well: the inputRequests key
/// to use (upstream::kInputKey), and how many requests it sends at once (so
/// they are handed out together rather than one round each).
using upstream::kInputKey;
constexpr std::string_view kInputBatch = "mcpgw/inputBatch";

/// The capability a client must have declared for a server-to-client
/// request, as a ClientCapabilities object, or null when it has it.
json::Document missing_capability(const json::Value& caps, std::string_view method, const json::Value* params) {
  json::Document need;
  auto require = [&](const char* name, const char* sub) {
    need.SetObject();
    json::Value inner(rapidjson::kObjectType);
    if (sub) inner.AddMember(json::ref(sub), json::Value(rapidjson::kObjectType), need.GetAllocator());
    need.AddMember(json::ref(name), inner, need.GetAllocator());
  };
  if (method == "sampling/createMessage" && !json::find(caps, "sampling")) require("sampling", nullptr);
  if (method == "roots/list" && !json::find(caps, "roots")) require("roots", nullptr);
  if (method == "elicitation/create") {
    const json::Value* e = json::find(caps, "elicitation");
    bool url = params && json::get_string(*params, "mode") == "url";
    // An empty elicitation capability means form mode only (2025-11-25).
    if (!e) require("elicitation", url ? "url" : nullptr);
    else if (url && !json::find(*e, "url")) require("elicitation", "url");
  }
  return need;
}

/// The inputRequests key of a question: the upstream's own name for it, or
/// one derived from what it asks, so that a replayed call asking the same
/// question again finds the answer under the same key.
std::string key_of(std::string_view method, const json::Value* params) {
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  if (auto k = meta ? json::get_string(*meta, kInputKey) : std::nullopt; k && !k->empty()) return std::string(*k);
  std::string text(method);
  if (params) {
    json::Document p = json::clone(*params);
    if (p.IsObject()) p.RemoveMember("_meta");
    text += json::write(p);
  }
  return std::string(method.substr(0, method.find('/'))) + "-" + sha256_hex(text, 6);
}

upstream::Reply capability_error(const std::string& client, std::string_view method, json::Document need) {
  // Named as the spec does: "elicitation", "elicitation.url".
  std::string name;
  for (const auto& m : need.GetObject()) {
    name = m.name.GetString();
    if (m.value.IsObject() && m.value.MemberCount() > 0) name += "." + std::string(m.value.MemberBegin()->name.GetString());
  }
  upstream::Reply r = upstream::Reply::error(
      mcp::kMissingClientCapability,
      "mcpgw: " + client + " did not declare the " + name + " capability, so it cannot take " + std::string(method));
  json::Value data(rapidjson::kObjectType);
  data.AddMember("requiredCapabilities", json::copy(need, r.body.GetAllocator()), r.body.GetAllocator());
  r.body.AddMember("data", data, r.body.GetAllocator());
  return r;
}

/// The refusal of a server-to-client request over `limit` (`count`
/// requests `whose` await the client already).
upstream::Reply over_limit(std::string_view limit, std::size_t count, std::string_view whose, std::string_view method) {
  return upstream::Reply::error(-32000, "mcpgw: limits." + std::string(limit) + " (" + std::to_string(count) +
                                            ") reached: that many requests " + std::string(whose) +
                                            " await the client's answer, so " + std::string(method) +
                                            " was not sent to it");
}

/// notifications/cancelled for our request `id` to the client.
std::string withdrawal(const std::string& id, std::string_view reason) {
  json::Document p(rapidjson::kObjectType);
  p.AddMember("requestId", json::str(id, p.GetAllocator()), p.GetAllocator());
  p.AddMember("reason", json::str(reason, p.GetAllocator()), p.GetAllocator());
  return jsonrpc::make_notification("notifications/cancelled", &p);
}

upstream::Reply answered(const jsonrpc::Message& m) {
  if (const json::Value* e = m.error()) return {true, json::clone(*e)};
  const json::Value* r = m.result();
  return {false, r ? json::clone(*r) : json::Document(rapidjson::kObjectType)};
}

}  // namespace

void Progress::retarget(const json::Value* token) {
  util::MutexLock lk(mu_);
  token_.SetNull();
  if (token) token_ = json::clone(*token);
}

void Progress::forward(json::Value& params) {
  const json::Value* p = json::find(params, "progress");
  if (!p || !p->IsNumber()) return;
  {
    util::MutexLock lk(mu_);
    if (last_ && p->GetDouble() <= *last_) return;
    last_ = p->GetDouble();
  }
  send(params);
}

void Progress::step(const std::string& message) {
  json::Document n(rapidjson::kObjectType);
  {
    util::MutexLock lk(mu_);
    last_ = last_ ? std::floor(*last_) + 1 : 1;
    n.AddMember("progress", *last_, n.GetAllocator());
  }
  n.AddMember("message", json::str(message, n.GetAllocator()), n.GetAllocator());
  send(n);
}

void Progress::send(const json::Value& params) {
  json::Document n = json::clone(params);
  redact_relayed(client_.redaction(), n);
  {
    util::MutexLock lk(mu_);
    if (token_.IsNull()) return;
    json::set(n, "progressToken", json::copy(token_, n.GetAllocator()), n.GetAllocator());
  }
  client_.send_progress(jsonrpc::make_notification("notifications/progress", &n));
}

ClientCall::ClientCall(std::shared_ptr<McpSession> s, transport::Exchange& ex, std::atomic<std::uint64_t>& ids,
                       std::shared_ptr<saga::Inbox> inbox, ClientCallSettings settings, bool checks_capabilities)
    : s_(std::move(s)),
      session_id_(s_->id()),
      ex_(&ex),
      ids_(ids),
      inbox_(std::move(inbox)),
      checks_capabilities_(checks_capabilities),
      limits_(settings.limits),
      redaction_(std::move(settings.redaction)) {}

Task<upstream::Reply> ClientCall::request(std::string_view method, const json::Value* params,
                                          Clock::time_point deadline, CancelSignal& cancel) {
  std::shared_ptr<McpSession> s;
  {
    util::MutexLock lk(mu_);
    s = s_;
  }
  json::Document need = missing_capability(s->capabilities(), method, params);
  std::string name = s->client_name();
  std::string client = name.empty() ? "the client" : "the client (" + name + ")";
  if (checks_capabilities_ && need.IsObject()) co_return capability_error(client, method, std::move(need));
  json::Document caps = s->capabilities();
  // The gateway's own hints are for the gateway: no client sees them.
  std::string key = key_of(method, params);
  std::size_t batch = 1;
  std::uint64_t order = 0;
  json::Document clean(rapidjson::kObjectType);
  if (params) clean = json::clone(*params);
  if (json::Value* meta = json::find(clean, "_meta"); meta && meta->IsObject()) {
    if (const json::Value* b = json::find(*meta, kInputBatch); b && b->IsUint()) batch = std::clamp(b->GetUint(), 1u, 64u);
    meta->RemoveMember(std::string(kInputKey).c_str());
    meta->RemoveMember(std::string(kInputBatch).c_str());
    if (const json::Value* o = json::find(*meta, upstream::kInputOrder); o && o->IsUint64()) order = o->GetUint64();
    meta->RemoveMember(std::string(upstream::kInputOrder).c_str());
    // The upstream's progress token is the gateway's own, not the client's.
    meta->RemoveMember("progressToken");
    if (meta->ObjectEmpty()) clean.RemoveMember("_meta");
  }
  redact_relayed(redaction_, clean);
  {
    util::MutexLock lk(mu_);
    if (!task_.empty() && mcp::related_task(clean)) mcp::set_related_task(clean, task_, clean.GetAllocator());
    if (asking_ >= limits_.per_call)
      co_return over_limit("max_client_requests_per_call", limits_.per_call, "of this call", method);
    ++asking_;
  }
  // However the request ends, it no longer counts.
  struct Asked {
    ClientCall& call;
    ~Asked() {
      util::MutexLock lk(call.mu_);
      --call.asking_;
    }
  } asked{*this};
  // A request the upstream wants run as a task goes as an ordinary one to
  // a client that runs no such tasks (the spec's receiver then answers it
  // normally); a client asked mid-call in the stateless way never does.
  if (json::find(clean, "task") && (inbox_ || !mcp::accepts_task_request(caps, method))) clean.RemoveMember("task");
  if (inbox_) co_return co_await inbox_->ask(method, std::move(clean), std::move(key), batch, order, deadline, cancel);
  if (auto refused = to_client_task(method, clean)) co_return std::move(*refused);
  upstream::Reply reply =
      co_await stream_request(method, std::move(clean), params != nullptr, deadline, cancel, std::move(client));
  from_client_task(method, reply);
  co_return reply;
}

void ClientCall::serve_task(std::string id) {
  util::MutexLock lk(mu_);
  task_ = std::move(id);
}

std::optional<upstream::Reply> ClientCall::to_client_task(std::string_view method, json::Document& params) {
  if (method.rfind("tasks/", 0) != 0 || method == "tasks/list") return std::nullopt;
  auto id = json::get_string(params, "taskId");
  util::MutexLock lk(mu_);
  auto it = id ? client_tasks_.find(std::string(*id)) : client_tasks_.end();
  if (it == client_tasks_.end())
    return upstream::Reply::error(jsonrpc::kInvalidParams, "Failed to retrieve task: Task not found");
  json::set(params, "taskId", json::str(it->second, params.GetAllocator()), params.GetAllocator());
  return std::nullopt;
}

void ClientCall::from_client_task(std::string_view method, upstream::Reply& reply) {
  if (reply.rpc_error || !reply.body.IsObject()) return;
  auto& a = reply.body.GetAllocator();
  util::MutexLock lk(mu_);
  auto ours = [&](std::string_view client_id) REQUIRES(mu_) -> std::string {
    for (const auto& [gw, theirs] : client_tasks_)
      if (theirs == client_id) return gw;
    return {};
  };
  // A new task of the client's: named by the gateway from now on.
  if (auto created = method.rfind("tasks/", 0) == 0 ? std::nullopt : mcp::created_task(reply.body)) {
    std::string gw = "mcpgw-ct-" + std::to_string(ids_.fetch_add(1));
    client_tasks_[gw] = created->task_id;
    if (json::Value* task = json::find(reply.body, "task"); task && task->IsObject())
      json::set(*task, "taskId", json::str(gw, a), a);
    return;
  }
  if (method == "tasks/list") {
    // Only the tasks of this call: the client's others are not the upstream's business.
    json::Value* tasks = json::find(reply.body, "tasks");
    if (!tasks || !tasks->IsArray()) return;
    json::Value kept(rapidjson::kArrayType);
    for (auto& t : tasks->GetArray()) {
      std::string gw = ours(json::get_string(t, "taskId").value_or(""));
      if (gw.empty()) continue;
      json::set(t, "taskId", json::str(gw, a), a);
      kept.PushBack(json::copy(t, a), a);
    }
    *tasks = std::move(kept);
    return;
  }
  if (auto theirs = json::get_string(reply.body, "taskId")) json::set(reply.body, "taskId", json::str(ours(*theirs), a), a);
  if (auto related = mcp::related_task(reply.body)) mcp::set_related_task(reply.body, ours(*related), a);
}

json::Document ClientCall::capabilities() const {
  util::MutexLock lk(mu_);
  return s_->capabilities();
}

bool ClientCall::can_ask() const {
  util::MutexLock lk(mu_);
  return inbox_ || (!closed_ && ex_ && ex_->can_send());
}

std::string ClientCall::log_level() const {
  util::MutexLock lk(mu_);
  return s_->log_level();
}

Task<upstream::Reply> ClientCall::stream_request(std::string_view method, json::Document params, bool has_params,
                                                 Clock::time_point deadline, CancelSignal& cancel,
                                                 std::string client) {
  const std::string id = "mcpgw-" + std::to_string(ids_.fetch_add(1));
  auto pending = std::make_shared<Pending>();
  {
    util::MutexLock lk(mu_);
    if (closed_) co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the client's call has ended");
    if (!ex_->can_send())
      co_return upstream::Reply::error(jsonrpc::kInternalError,
                                    "mcpgw: " + client + " accepts only a JSON response to its call, so it cannot be "
                                    "asked " + std::string(method) + " in the middle of it");
    if (!s_->await_answer(id, weak_from_this(), limits_.per_session))
      co_return over_limit("max_client_requests_per_session", limits_.per_session, "of this session", method);
    pending_[id] = pending;
    json::Document req(rapidjson::kObjectType);
    auto& a = req.GetAllocator();
    req.AddMember("jsonrpc", "2.0", a);
    req.AddMember("id", json::str(id, a), a);
    req.AddMember("method", json::str(method, a), a);
    if (has_params) req.AddMember("params", json::copy(params, a), a);
    if (!ex_->send(json::write(req))) {
      pending_.erase(id);
      s_->forget_answer(id);
      co_return upstream::Reply::error(jsonrpc::kInternalError,
                                       "mcpgw: " + std::string(method) + " could not be sent to " + client +
                                           ": its response stream is full (it reads too slowly) or the call ended");
    }
  }
  // Whoever gives up first ends the wait: the client's answer, the
  // upstream withdrawing the request, the call or the session ending, the
  // deadline.
  bool woken = true;
  for (;;) {
    const auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      if (pending->answer || cancel.cancelled() || gone_ || closed_) break;
    }
    if (!co_await changed_.wait(seen, deadline, &cancel)) {
      woken = false;
      break;
    }
  }
  util::UniqueLock lk(mu_);
  pending_.erase(id);
  s_->forget_answer(id);
  if (pending->answer) co_return std::move(*pending->answer);
  if (gone_) co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: " + client + "'s session ended");
  // Withdrawn from the client when the call ended (close()).
  if (closed_)
    co_return upstream::Reply::error(jsonrpc::kInternalError,
                                     "mcpgw: the client's call ended before it answered " + std::string(method));
  // Unanswered: tell the client to stop asking its user or model.
  ex_->send(withdrawal(id, woken ? "the server withdrew the request" : "no answer in time"));
  if (woken)
    co_return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the server withdrew " + std::string(method));
  co_return upstream::Reply::error(jsonrpc::kInternalError,
                                   "mcpgw: " + client + " did not answer " + std::string(method) + " in time");
}

void ClientCall::notify(std::string_view method, const json::Value* params) {
  json::Document masked;
  if (params && redaction_.on()) {
    masked = json::clone(*params);
    if (redact_relayed(redaction_, masked)) params = &masked;
  }
  util::MutexLock lk(mu_);
  if (closed_ || !ex_) return;
  if (method == "notifications/message" && params) {
    // The client decides, per session (logging/setLevel) or per request
    // (the stateless envelope's logLevel; none = no messages).
    std::string wanted = s_->log_level();
    if (wanted.empty()) return;
    auto level = json::get_string(*params, "level");
    if (level && mcp::log_level_rank(*level) < mcp::log_level_rank(wanted)) return;
  }
  ex_->send(jsonrpc::make_notification(method, params));
}

void ClientCall::send_progress(std::string msg) {
  util::MutexLock lk(mu_);
  if (!closed_ && ex_) ex_->progress(std::move(msg));
}

void ClientCall::answer(const std::string& id, jsonrpc::Message msg) {
  util::MutexLock lk(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second->answer) return;
  it->second->answer = answered(msg);
  changed_.notify();
}

void ClientCall::close() {
  util::MutexLock lk(mu_);
  if (closed_) return;
  // On the call's own stream, before its answer: the client stops asking
  // its user or model about a call that is over.
  for (const auto& [id, pending] : pending_)
    if (!pending->answer && ex_) ex_->send(withdrawal(id, "the call ended"));
  closed_ = true;
  changed_.notify();
}

void ClientCall::abandon() {
  util::MutexLock lk(mu_);
  gone_ = true;
  changed_.notify();
}

void ClientCall::attach(std::shared_ptr<McpSession> s, transport::Exchange& ex) {
  util::MutexLock lk(mu_);
  s_ = std::move(s);
  ex_ = &ex;
  closed_ = false;
}

void ClientCall::detach() {
  util::MutexLock lk(mu_);
  ex_ = nullptr;
  closed_ = true;
}

}  // namespace mcpgw::server
