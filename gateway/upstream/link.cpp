// A link's life (start, the first attempt, stop) and state, and what the
// server sends on it: list changes, progress and log lines, its requests
// to the calling client (relayed and answered), its cancellations.
#include "upstream/link.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/tasks.hpp"

namespace mcpgw::upstream {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Requests a server may send a client (MCP "client features", and the
/// tasks a client runs for the server's task-augmented requests).
bool client_request(std::string_view method) {
  return method == "sampling/createMessage" || method == "elicitation/create" || method == "roots/list" ||
         method == "tasks/get" || method == "tasks/result" || method == "tasks/list" || method == "tasks/cancel";
}

/// Declares the tasks extension in client capabilities `caps` when the
/// gateway asks for a task, and only then: a server must not turn a call
/// the gateway relays as an ordinary one (a chain hop, say) into a task.
void declare_tasks(json::Document& caps, bool on) {
  if (!caps.IsObject()) caps.SetObject();
  auto& a = caps.GetAllocator();
  json::Value* extensions = json::find(caps, "extensions");
  if (on && (!extensions || !extensions->IsObject())) {
    json::set(caps, "extensions", json::Value(rapidjson::kObjectType), a);
    extensions = json::find(caps, "extensions");
  }
  if (!extensions || !extensions->IsObject()) return;
  if (on) json::set(*extensions, mcp::kTasksExtension, json::Value(rapidjson::kObjectType), a);
  else extensions->RemoveMember(std::string(mcp::kTasksExtension).c_str());
}

/// The task a message from the server is about: the one its `_meta` ties
/// it to, or the one a tasks/* request names.
std::optional<std::string> task_of(const jsonrpc::Message& m) {
  const json::Value* params = m.params();
  if (!params) return std::nullopt;
  if (auto related = mcp::related_task(*params)) return related;
  if (m.method().rfind("tasks/", 0) == 0)
    if (auto id = json::get_string(*params, "taskId")) return std::string(*id);
  return std::nullopt;
}

}  // namespace

Link::Link(config::Server cfg, transport::Io& io, Listener& listener, std::shared_ptr<oauth::Client> oauth, Role role,
           Owner owner, const json::Value* client_extensions,
           std::function<void(std::shared_ptr<const Listing>)> on_listed)
    : cfg_(std::move(cfg)),
      io_(io),
      listener_(listener),
      oauth_(std::move(oauth)),
      role_(role),
      client_protocol_(std::move(owner.protocol)),
      principal_(std::move(owner.principal)),
      on_listed_(std::move(on_listed)) {
  if (client_extensions) client_extensions_ = json::clone(*client_extensions);
}

Task<bool> Link::wait_settled(std::chrono::steady_clock::time_point deadline) {
  if (state() == State::Connecting) co_await renew(nullptr, deadline);
  co_return ready();
}

bool Link::supervising() const {
  util::MutexLock lk(mu_);
  return supervising_ && !stopping_;
}

Link::~Link() { stop(); }

std::string Link::failure_text(const transport::Response& r) const {
  std::string detail = r.detail.empty() ? "no response" : r.detail;
  switch (r.failure) {
    case transport::Failure::Timeout: return "timed out after " + std::to_string(cfg_.timeout_ms) + " ms";
    case transport::Failure::Cancelled: return "call cancelled by the client";
    case transport::Failure::Interrupted:
      return detail + "; the request may have been carried out there and was not sent again";
    default: return detail;
  }
}

void Link::start() {
  {
    util::MutexLock lk(mu_);
    supervising_ = true;
  }
  auto self = shared_from_this();
  auto ended = [self](std::exception_ptr e) {
    if (e) spdlog::error("upstream {}: supervisor failed", self->cfg_.name);
    {
      util::MutexLock lk(self->mu_);
      self->supervising_ = false;
      self->stopped_.notify_all();
    }
    // For stop_async().
    self->changed_.notify();
  };
  asio::co_spawn(
      asio::make_strand(io_.executor()), [self]() -> Task<> { co_await self->supervise(); }, std::move(ended));
}

Task<> Link::first_attempt(Clock::time_point deadline) {
  std::function<bool()> done = [this]() REQUIRES(mu_) { return first_done_ || stopping_; };
  co_await wait_until(done, deadline);
}

Task<bool> Link::wait_until(const std::function<bool()>& ready, Clock::time_point deadline) {
  for (;;) {
    const auto seen = changed_.generation();
    {
      util::MutexLock lk(mu_);
      if (ready()) co_return true;
    }
    bool woken = co_await changed_.wait(seen, deadline);
    if (!woken) co_return false;
  }
}

bool Link::begin_stop() {
  {
    util::MutexLock lk(mu_);
    if (stopping_ && !supervising_) return false;
    stopping_ = true;
    status_ = "stopped";
    state_ = State::Down;
  }
  changed_.notify();
  // Requests waiting on a client end now; the server is going away.
  util::MutexLock lk(calls_mu_);
  for (auto& [id, cancel] : forwarded_) cancel->cancel();
  return true;
}

void Link::stop() {
  if (!begin_stop()) return;
  // The supervisor closes the connection (reaps the child) on its way out.
  // Only a thread off the loop may wait for that here.
  if (!io_.in_loop()) {
    util::UniqueLock lk(mu_);
    stopped_.wait(lk.native(), [&]() REQUIRES(mu_) { return !supervising_; });
  }
}

void Link::set_stop_reason(std::string reason) {
  util::MutexLock lk(mu_);
  stop_reason_ = std::move(reason);
}

Task<> Link::stop_async() {
  if (!begin_stop()) co_return;
  std::function<bool()> ended = [this]() REQUIRES(mu_) { return !supervising_; };
  co_await wait_until(ended);
}

std::string Link::status() const {
  util::MutexLock lk(mu_);
  return status_;
}

Link::State Link::state() const {
  util::MutexLock lk(mu_);
  return state_;
}

bool Link::settled() const {
  util::MutexLock lk(mu_);
  return first_done_ || stopping_;
}

std::string Link::protocol() const {
  util::MutexLock lk(mu_);
  return protocol_;
}

Link::Trouble Link::last_trouble() const {
  util::MutexLock lk(mu_);
  return trouble_;
}

void Link::note_trouble_locked(std::string what) {
  trouble_.what = std::move(what);
  trouble_.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
}

std::shared_ptr<const Listing> Link::listing() const {
  util::MutexLock lk(mu_);
  return listing_;
}

void Link::inherit_listing(std::shared_ptr<const Listing> inherited) {
  util::MutexLock lk(mu_);
  if (state_ != State::Connected) listing_ = std::move(inherited);
}

std::shared_ptr<transport::Connection> Link::connection() const {
  util::MutexLock lk(mu_);
  return conn_;
}

void Link::add_envelope(json::Document& p, const CallOptions* opts) const {
  auto& a = p.GetAllocator();
  if (!p.IsObject()) p.SetObject();
  json::Value* meta = &json::object_member(p, "_meta", a);
  json::set(*meta, mcp::kMetaVersion, json::ref(mcp::kStatelessVersion), a);
  // The calling client's own capabilities: the server must not ask it for
  // what it cannot give.
  // The gateway's own requests (listings) declare the extensions it passes
  // through, as its initialize does.
  json::Document caps(rapidjson::kObjectType);
  if (opts && opts->client) {
    caps = opts->client->capabilities();
  } else if (json::Document own = own_capabilities(); json::find(own, "extensions")) {
    caps.AddMember("extensions", json::copy(own["extensions"], caps.GetAllocator()), caps.GetAllocator());
  }
  declare_tasks(caps, opts && opts->task);
  json::set(*meta, mcp::kMetaCapabilities, json::copy(caps, a), a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("version", MCPGW_VERSION, a);
  json::set(*meta, mcp::kMetaClientInfo, std::move(info), a);
  if (opts && opts->client)
    if (std::string level = opts->client->log_level(); !level.empty())
      json::set(*meta, mcp::kMetaLogLevel, json::str(level, a), a);
}

void Link::set_log_level(std::string level) {
  {
    util::MutexLock lk(mu_);
    log_level_ = std::move(level);
  }
  // Not on the caller's thread: the server may be slow to answer.
  if (auto c = connection())
    asio::co_spawn(
        asio::make_strand(io_.executor()),
        [self = shared_from_this(), c]() -> Task<> { co_await self->send_log_level(c); }, asio::detached);
}

bool Link::modern() const {
  util::MutexLock lk(mu_);
  return modern_;
}

void Link::on_message(jsonrpc::Message& m) {
  // A request that names the progress token of a call is that call's (the
  // official SDKs send it); otherwise it can only be the sole client's.
  const json::Value* meta = m.is_request() && m.params() ? json::find(*m.params(), "_meta") : nullptr;
  std::optional<ActiveCall> call;
  if (auto token = meta ? json::get_string(*meta, "progressToken") : std::nullopt) {
    util::MutexLock lk(calls_mu_);
    if (auto it = by_token_.find(std::string(*token)); it != by_token_.end()) call = it->second;
  }
  if (auto task = m.is_request() && !call ? task_of(m) : std::nullopt) {
    util::MutexLock lk(calls_mu_);
    if (auto it = by_task_.find(*task); it != by_task_.end()) call = it->second;
  }
  route(m, call ? call : sole_client());
}

std::optional<Link::ActiveCall> Link::sole_client() const {
  util::MutexLock lk(calls_mu_);
  const ActiveCall* last = nullptr;
  for (const auto& [seq, call] : calls_) {
    if (last && last->client->session() != call.client->session()) return std::nullopt;
    last = &call;
  }
  if (!last) return std::nullopt;
  return *last;
}

void Link::route(jsonrpc::Message& m, const std::optional<ActiveCall>& to) {
  if (m.is_notification()) {
    auto method = m.method();
    if (method == "notifications/tools/list_changed" || method == "notifications/resources/list_changed" ||
        method == "notifications/prompts/list_changed") {
      {
        util::MutexLock lk(mu_);
        refresh_ = true;
      }
      changed_.notify();
    } else if (method == "notifications/progress" && m.params()) {
      auto token = json::find(*m.params(), "progressToken");
      if (!token || !token->IsString()) return;
      std::function<void(json::Value&)> fn;
      {
        util::MutexLock lk(progress_mu_);
        auto it = progress_.find(token->GetString());
        if (it != progress_.end()) fn = it->second;
      }
      if (fn) fn(m.doc()["params"]);
    } else if (method == "notifications/message" && m.params()) {
      if (to) to->client->notify(method, m.params());
      else log_line(*m.params());
    } else if (method == "notifications/cancelled" && m.params()) {
      // The server gave up on a request it sent a client.
      const json::Value* id = json::find(*m.params(), "requestId");
      std::shared_ptr<CancelSignal> cancel;
      if (id) {
        util::MutexLock lk(calls_mu_);
        if (auto it = forwarded_.find(std::string(jsonrpc::Id(*id).json())); it != forwarded_.end()) cancel = it->second;
      }
      if (cancel) cancel->cancel();
    } else if (method == "notifications/resources/updated" || method == "notifications/tasks/status") {
      listener_.on_upstream_notification(cfg_.name, m);
    }
    return;
  }
  if (!m.is_request()) return;
  auto c = connection();
  if (!c) return;
  if (m.method() == "ping") {
    c->respond(jsonrpc::make_result(m.id(), json::Value(rapidjson::kObjectType)));
    return;
  }
  if (!client_request(m.method())) {
    c->respond(jsonrpc::make_error(m.id(), jsonrpc::kMethodNotFound, "Method not found: " + std::string(m.method())));
    return;
  }
  if (!to) {
    c->respond(jsonrpc::make_error(m.id(), jsonrpc::kInternalError,
                                   "mcpgw: cannot tell which client " + std::string(m.method()) +
                                       " is for: no call of a single client is in flight on this shared "
                                       "connection (session: per_client gives each client its own)"));
    return;
  }
  auto shared = std::make_shared<jsonrpc::Message>(m.clone());
  // Relayed on the pool, requests sent together may reach the client's
  // call in any order: the order they came in travels with them, so a batch
  // is handed out as the server sent it.
  if (json::Value* params = json::find(shared->doc(), "params"); params && params->IsObject()) {
    auto& a = shared->doc().GetAllocator();
    json::set(json::object_member(*params, "_meta", a), kInputOrder, json::Value(static_cast<std::uint64_t>(next_forward_++)), a);
  }
  // It waits for a person (elicitation) or a model (sampling): in a
  // coroutine of its own, never on the I/O thread that delivered it.
  asio::co_spawn(
      asio::make_strand(io_.executor()),
      [self = shared_from_this(), shared, to = *to]() -> Task<> { co_await self->forward_request(shared, to); },
      asio::detached);
}

void Link::log_line(const json::Value& params) {
  if (log_gate_.admit(Clock::now())) {
    spdlog::info("upstream {} log: {}", cfg_.name, json::write(params));
    return;
  }
  if (suppressing_.exchange(true)) return;
  auto timer = std::make_shared<asio::steady_timer>(io_.executor(), 1s);
  timer->async_wait([weak = weak_from_this(), timer](const boost::system::error_code&) {
    auto self = weak.lock();
    if (!self) return;
    self->suppressing_ = false;
    if (auto n = self->log_gate_.take_suppressed())
      spdlog::warn("upstream {}: {} log messages suppressed (it sent more than {} a second)", self->cfg_.name, n,
                   LogGate::kRate);
  });
}

Task<> Link::forward_request(std::shared_ptr<jsonrpc::Message> m, ActiveCall to) {
  auto cancel = std::make_shared<CancelSignal>();
  const std::string key(m->id().json());
  {
    util::MutexLock lk(calls_mu_);
    forwarded_[key] = cancel;
  }
  Reply r = co_await to.client->request(m->method(), m->params(), to.deadline, *cancel);
  {
    util::MutexLock lk(calls_mu_);
    forwarded_.erase(key);
    // The client runs the request as a task: the server's tasks/* requests
    // about it go to the same call.
    if (auto task = r.rpc_error ? std::nullopt : mcp::created_task(r.body)) by_task_[task->task_id] = to;
  }
  if (cancel->cancelled()) co_return;  // the server withdrew it: no answer is expected
  if (auto c = connection())
    c->respond(r.rpc_error ? jsonrpc::make_error_response(m->id(), r.body) : jsonrpc::make_result(m->id(), r.body));
}

}  // namespace mcpgw::upstream
