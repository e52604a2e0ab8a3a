#include "server/router.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>

#include "chain/chain.hpp"
#include "mcp/protocol.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

std::string invalid_params(const jsonrpc::Message& m, const std::string& why) {
  return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid params: " + why);
}

/// MCP's "resource not found" code (spec: server/resources, error handling).
constexpr int kResourceNotFound = -32002;

/// Methods that wait on an upstream and therefore run on the worker pool.
bool blocks(std::string_view method) {
  return method == "tools/call" || method == "resources/read" || method == "prompts/get" ||
         method == "completion/complete" || method == "resources/subscribe" || method == "resources/unsubscribe";
}

/// `{"<key>":[defs of the page],"nextCursor":...}` over `defs`, paginated.
template <typename Defs>
std::string page_of(const jsonrpc::Message& m, std::string_view key, const Defs& defs, std::size_t page_size) {
  std::size_t offset = 0;
  if (const json::Value* p = m.params(); p && p->IsObject()) {
    if (const json::Value* c = json::find(*p, "cursor"); c && !c->IsNull()) {
      auto off = c->IsString() ? mcp::decode_cursor(c->GetString()) : std::nullopt;
      if (!off) return invalid_params(m, "invalid cursor");
      offset = *off;
    }
  }
  std::size_t end = std::min(defs.size(), offset + page_size);
  std::string out = "{\"";
  out.append(key).append("\":[");
  for (std::size_t i = offset; i < end; ++i) {
    if (i > offset) out += ',';
    out += defs[i];
  }
  out += ']';
  if (end < defs.size()) out += ",\"nextCursor\":" + json::quote(mcp::encode_cursor(end));
  out += '}';
  return jsonrpc::make_result_raw(m.id(), out);
}

/// Serialised definitions of catalog entries, for page_of.
struct Definitions {
  const std::vector<catalog::ExposedEntry>& entries;
  std::size_t size() const { return entries.size(); }
  const std::string& operator[](std::size_t i) const { return entries[i].definition; }
};

std::string relay(const jsonrpc::Message& m, const upstream::Reply& r) {
  return r.rpc_error ? jsonrpc::make_error_response(m.id(), r.body) : jsonrpc::make_result(m.id(), r.body);
}

std::string principal_of(const McpSession& s) {
  return s.context().principal.empty() ? "-" : s.context().principal;
}

/// Progress notifications of one client call. Progress must increase, and
/// a chain mixes the upstreams' own progress with one step per hop: the
/// upstreams' values pass only when they go forward, a hop takes the next
/// whole step.
class Progress {
 public:
  Progress(transport::Exchange& ex, const json::Value& token) : ex_(ex) { token_.CopyFrom(token, token_.GetAllocator()); }
  void forward(json::Value& params) {
    const json::Value* p = json::find(params, "progress");
    if (!p || !p->IsNumber()) return;
    {
      std::lock_guard lk(mu_);
      if (last_ && p->GetDouble() <= *last_) return;
      last_ = p->GetDouble();
    }
    send(params);
  }
  void step(const std::string& message) {
    json::Document n(rapidjson::kObjectType);
    {
      std::lock_guard lk(mu_);
      last_ = last_ ? std::floor(*last_) + 1 : 1;
      n.AddMember("progress", *last_, n.GetAllocator());
    }
    n.AddMember("message", json::str(message, n.GetAllocator()), n.GetAllocator());
    send(n);
  }

 private:
  void send(const json::Value& params) {
    json::Document n;
    n.CopyFrom(params, n.GetAllocator());
    json::set(n, "progressToken", json::Value(token_, n.GetAllocator()), n.GetAllocator());
    ex_.send(jsonrpc::make_notification("notifications/progress", &n));
  }
  transport::Exchange& ex_;
  json::Document token_;
  std::mutex mu_;
  std::optional<double> last_;
};

upstream::CallOptions options_for(const upstream::ToolOrigin& origin, transport::Exchange& ex,
                                  const upstream::Caller& caller) {
  upstream::CallOptions o;
  o.deadline = origin.deadline();
  o.cancel = &ex.cancel_signal();
  o.caller = &caller;
  return o;
}

upstream::Caller caller_of(const McpSession& s) { return {s.context().principal, s.mode, s.id()}; }

/// Severity rank of an MCP log level (RFC 5424 order), -1 when unknown.
int level_rank(std::string_view level) {
  static constexpr std::string_view kLevels[] = {"debug", "info", "notice", "warning",
                                                 "error", "critical", "alert", "emergency"};
  for (int i = 0; i < 8; ++i)
    if (kLevels[i] == level) return i;
  return -1;
}

/// The capability a client must have declared for a server-to-client
/// request, or "" when the request needs none the client can lack.
std::string missing_capability(const json::Value& caps, std::string_view method, const json::Value* params) {
  if (method == "sampling/createMessage") return json::find(caps, "sampling") ? "" : "sampling";
  if (method == "roots/list") return json::find(caps, "roots") ? "" : "roots";
  if (method == "elicitation/create") {
    const json::Value* e = json::find(caps, "elicitation");
    if (!e) return "elicitation";
    bool url = params && json::get_string(*params, "mode") == "url";
    // An empty elicitation capability means form mode only (2025-11-25).
    if (url && !json::find(*e, "url")) return "elicitation.url";
  }
  return "";
}

}  // namespace

/// The client of one tools/call as the upstreams reach it: their requests
/// go out on the call's stream under ids of ours, the client's answers come
/// back through Router::handle. Once the call has ended nothing more is
/// sent through it, but a request already sent still waits for its answer:
/// over stdio a request is tied to the client, not to one call, and may
/// have gone out on the stream of a sibling call that ended first.
class ClientCall final : public upstream::ClientChannel, public std::enable_shared_from_this<ClientCall> {
 public:
  ClientCall(std::shared_ptr<McpSession> s, transport::Exchange& ex, std::atomic<std::uint64_t>& ids)
      : s_(std::move(s)), ex_(ex), ids_(ids) {}

  const std::string& session() const override { return s_->id(); }

  upstream::Reply request(std::string_view method, const json::Value* params, Clock::time_point deadline,
                          CancelSignal& cancel) override {
    std::string missing;
    std::string client;
    {
      std::lock_guard lk(s_->mu);
      missing = missing_capability(s_->client_capabilities, method, params);
      client = s_->client_name.empty() ? "the client" : "the client (" + s_->client_name + ")";
    }
    if (!missing.empty())
      return upstream::Reply::error(jsonrpc::kMethodNotFound,
                       "mcpgw: " + client + " did not declare the " + missing + " capability, so it cannot take " +
                           std::string(method));
    const std::string id = "mcpgw-" + std::to_string(ids_.fetch_add(1));
    auto pending = std::make_shared<Pending>();
    {
      std::lock_guard lk(mu_);
      if (closed_) return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the client's call has ended");
      if (!ex_.can_send())
        return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: " + client +
                                                      " accepts only a JSON response to its call, so it cannot be "
                                                      "asked " + std::string(method) + " in the middle of it");
      pending_[id] = pending;
      {
        std::lock_guard slk(s_->mu);
        s_->forwarded[id] = weak_from_this();
      }
      json::Document req(rapidjson::kObjectType);
      auto& a = req.GetAllocator();
      req.AddMember("jsonrpc", "2.0", a);
      req.AddMember("id", json::str(id, a), a);
      req.AddMember("method", json::str(method, a), a);
      if (params) req.AddMember("params", json::Value(*params, a), a);
      ex_.send(json::write(req));
    }
    // Whoever gives up first ends the wait: the client's answer, the
    // upstream withdrawing the request, the session ending, the deadline.
    auto withdrawn = cancel.on_cancel([this] {
      std::lock_guard lk(mu_);
      cv_.notify_all();
    });
    std::unique_lock lk(mu_);
    bool woken = cv_.wait_until(lk, deadline, [&] { return pending->answer || cancel.cancelled() || gone_; });
    pending_.erase(id);
    {
      std::lock_guard slk(s_->mu);
      s_->forwarded.erase(id);
    }
    if (pending->answer) {
      const jsonrpc::Message& m = *pending->answer;
      if (const json::Value* e = m.error()) return {true, json::clone(*e)};
      const json::Value* r = m.result();
      return {false, r ? json::clone(*r) : json::Document(rapidjson::kObjectType)};
    }
    if (gone_) return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: " + client + "'s session ended");
    // Unanswered: tell the client to stop asking its user or model.
    json::Document p(rapidjson::kObjectType);
    p.AddMember("requestId", json::str(id, p.GetAllocator()), p.GetAllocator());
    p.AddMember("reason", json::ref(woken ? "the server withdrew the request" : "no answer in time"), p.GetAllocator());
    std::string note = jsonrpc::make_notification("notifications/cancelled", &p);
    if (!closed_) ex_.send(std::move(note));
    else s_->notify(std::move(note));
    if (woken) return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the server withdrew " + std::string(method));
    return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: " + client + " did not answer " + std::string(method) + " in time");
  }

  void notify(std::string_view method, const json::Value* params) override {
    std::lock_guard lk(mu_);
    if (closed_) return;
    if (method == "notifications/message" && params) {
      // The client's logging/setLevel decides, per session.
      std::lock_guard slk(s_->mu);
      auto level = json::get_string(*params, "level");
      if (level && level_rank(*level) < level_rank(s_->log_level)) return;
    }
    ex_.send(jsonrpc::make_notification(method, params));
  }

  /// The client's answer to our request `id`.
  void answer(const std::string& id, jsonrpc::Message msg) {
    std::lock_guard lk(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second->answer) return;
    it->second->answer = std::move(msg);
    cv_.notify_all();
  }

  /// The call is over: nothing more is sent through its stream.
  void close() {
    std::lock_guard lk(mu_);
    closed_ = true;
  }

  /// The session ended: no answer will come.
  void abandon() {
    std::lock_guard lk(mu_);
    gone_ = true;
    cv_.notify_all();
  }

 private:
  struct Pending {
    std::optional<jsonrpc::Message> answer;
  };
  std::shared_ptr<McpSession> s_;
  transport::Exchange& ex_;  ///< only while !closed_
  std::atomic<std::uint64_t>& ids_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false, gone_ = false;
  std::map<std::string, std::shared_ptr<Pending>> pending_;
};

Router::Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
               std::function<void(const std::string& session)> session_closed)
    : cfg_(std::move(cfg)),
      catalog_(catalog),
      metrics_(metrics),
      pool_(std::make_unique<WorkerPool>(4, 4096)),
      session_closed_(std::move(session_closed)) {}

Router::~Router() { drain(); }

void Router::drain() { pool_.reset(); }

void Router::set_config(std::shared_ptr<const config::Config> cfg) {
  std::lock_guard lk(cfg_mu_);
  cfg_ = std::move(cfg);
}

std::shared_ptr<const config::Config> Router::config() const {
  std::lock_guard lk(cfg_mu_);
  return cfg_;
}

std::vector<std::string> Router::modes() const {
  std::vector<std::string> out{"all"};
  for (const auto& m : config()->modes) out.push_back(m.name);
  return out;
}

Result<std::shared_ptr<transport::Session>> Router::open_session(const transport::ClientContext& ctx) {
  auto cfg = config();
  std::string mode = ctx.mode.empty() ? cfg->default_mode : ctx.mode;
  auto known = modes();
  if (std::find(known.begin(), known.end(), mode) == known.end()) {
    std::string list;
    for (const auto& m : known) {
      if (!list.empty()) list += ", ";
      list += m;
    }
    return Error{"unknown mode \"" + mode + "\"; available modes: " + list};
  }
  if (!ctx.allowed_modes.empty() &&
      std::find(ctx.allowed_modes.begin(), ctx.allowed_modes.end(), mode) == ctx.allowed_modes.end())
    return Error{"principal \"" + ctx.principal + "\" may not use mode \"" + mode + "\""};
  auto s = std::make_shared<McpSession>();
  s->mode = mode;
  {
    std::lock_guard lk(sessions_mu_);
    sessions_.insert(s);
    metrics_.set_sessions(static_cast<double>(sessions_.size()));
  }
  return std::shared_ptr<transport::Session>(std::move(s));
}

void Router::close_session(const std::shared_ptr<transport::Session>& session) {
  auto s = std::static_pointer_cast<McpSession>(session);
  std::vector<std::shared_ptr<transport::Exchange>> running;
  {
    std::lock_guard lk(s->mu);
    for (auto& [id, ex] : s->inflight)
      if (auto e = ex.lock()) running.push_back(std::move(e));
  }
  // Cancel callbacks take upstream locks: run them outside the session's.
  for (auto& e : running) e->cancel();
  std::vector<std::shared_ptr<ClientCall>> asked;
  {
    std::lock_guard lk(s->mu);
    for (auto& [id, c] : s->forwarded)
      if (auto call = c.lock()) asked.push_back(std::move(call));
  }
  for (auto& c : asked) c->abandon();
  unsubscribe_all(*s);
  if (session_closed_) session_closed_(s->id());
  std::lock_guard lk(sessions_mu_);
  sessions_.erase(s);
  metrics_.set_sessions(static_cast<double>(sessions_.size()));
}

void Router::list_changed(std::string_view what) {
  notify_sessions(jsonrpc::make_notification("notifications/" + std::string(what) + "/list_changed", nullptr),
                  [](const McpSession& s) { return s.initialized; });
}

void Router::resource_updated(const upstream::Upstream& origin, const jsonrpc::Message& msg) {
  auto uri = msg.params() ? json::get_string(*msg.params(), "uri") : std::nullopt;
  if (!uri) return;
  std::string exposed = catalog_.snapshot()->expose_uri(origin, *uri);
  json::Document params;
  params.CopyFrom(*msg.params(), params.GetAllocator());
  json::set(params, "uri", json::str(exposed, params.GetAllocator()), params.GetAllocator());
  notify_sessions(jsonrpc::make_notification("notifications/resources/updated", &params),
                  [&](const McpSession& s) { return s.subscriptions.count(exposed) > 0; });
}

void Router::notify_sessions(const std::string& note, const std::function<bool(const McpSession&)>& wants) {
  std::vector<std::shared_ptr<McpSession>> live;
  {
    std::lock_guard lk(sessions_mu_);
    live.assign(sessions_.begin(), sessions_.end());
  }
  for (auto& s : live) {
    bool send;
    {
      std::lock_guard lk(s->mu);
      send = wants(*s);
    }
    if (send) s->notify(note);
  }
}

void Router::handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
                    std::shared_ptr<transport::Exchange> ex) {
  auto s = std::static_pointer_cast<McpSession>(session);
  if (msg.is_response()) {
    // An answer to a request an upstream sent this client through us.
    metrics_.message("response");
    if (!msg.id().IsString()) return;
    std::string id = msg.id().GetString();
    std::shared_ptr<ClientCall> call;
    {
      std::lock_guard lk(s->mu);
      if (auto it = s->forwarded.find(id); it != s->forwarded.end()) call = it->second.lock();
    }
    if (call) call->answer(id, std::move(msg));
    return;
  }
  metrics_.message(msg.method());
  if (msg.is_notification()) {
    on_notification(*s, msg);
    return;
  }
  if (!blocks(msg.method())) return ex->reply(dispatch(*s, msg, *ex));
  std::string key = json::write(msg.id());
  {
    std::lock_guard lk(s->mu);
    s->inflight[key] = ex;
  }
  // A call that blocks on an upstream runs on the transport's thread when
  // that thread serves this request alone and nothing needs streaming while
  // it runs (no progress asked for): two thread hand-offs fewer per call.
  // Otherwise it runs on the pool, and the transport streams related
  // messages as they come.
  const json::Value* meta = msg.params() ? json::find(*msg.params(), "_meta") : nullptr;
  bool answers;
  {
    std::lock_guard lk(s->mu);
    answers = s->answers_requests;
  }
  if (ex->may_block_caller() && !answers && !(meta && json::find(*meta, "progressToken"))) {
    std::string reply = dispatch(*s, msg, *ex);
    {
      std::lock_guard lk(s->mu);
      s->inflight.erase(key);
    }
    return ex->reply(std::move(reply));
  }
  auto shared = std::make_shared<jsonrpc::Message>(std::move(msg));
  bool queued = pool_ && pool_->submit([this, s, shared, ex, key] {
    ex->reply(dispatch(*s, *shared, *ex));
    std::lock_guard lk(s->mu);
    s->inflight.erase(key);
  });
  if (!queued) ex->reply(jsonrpc::make_error(shared->id(), jsonrpc::kInternalError, "mcpgw is shutting down"));
}

std::string Router::dispatch(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  std::string_view method = m.method();
  if (method == "tools/call") return call_tool(s, m, ex);
  if (method == "tools/list") return list_tools(s, m);
  if (method == "initialize") return initialize(s, m);
  if (method == "ping") return jsonrpc::make_result_raw(m.id(), "{}");
  if (method == "resources/list" || method == "resources/templates/list" || method == "prompts/list") {
    auto snap = catalog_.snapshot();
    std::size_t page = static_cast<std::size_t>(config()->listen.page_size);
    if (method == "resources/list") return page_of(m, "resources", Definitions{snap->resources}, page);
    if (method == "prompts/list") return page_of(m, "prompts", Definitions{snap->prompts}, page);
    return page_of(m, "resourceTemplates", Definitions{snap->templates}, page);
  }
  if (method == "resources/read") return read_resource(s, m, ex);
  if (method == "resources/subscribe") return subscribe(s, m, true);
  if (method == "resources/unsubscribe") return subscribe(s, m, false);
  if (method == "prompts/get") return get_prompt(s, m, ex);
  if (method == "completion/complete") return complete(s, m, ex);
  if (method == "logging/setLevel") {
    auto level = m.params() ? json::get_string(*m.params(), "level") : std::nullopt;
    if (!level || level_rank(*level) < 0)
      return invalid_params(m, "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
    std::lock_guard lk(s.mu);
    s.log_level = std::string(*level);
    return jsonrpc::make_result_raw(m.id(), "{}");
  }
  return jsonrpc::make_error(m.id(), jsonrpc::kMethodNotFound, "Method not found: " + std::string(method));
}

void Router::on_notification(McpSession& s, const jsonrpc::Message& m) {
  if (m.method() == "notifications/initialized") {
    std::lock_guard lk(s.mu);
    s.initialized = true;
  } else if (m.method() == "notifications/cancelled" && m.params()) {
    const json::Value* id = json::find(*m.params(), "requestId");
    if (!id) return;
    std::shared_ptr<transport::Exchange> target;
    {
      std::lock_guard lk(s.mu);
      if (auto it = s.inflight.find(json::write(*id)); it != s.inflight.end()) target = it->second.lock();
    }
    if (target) target->cancel();
  }
}

std::string Router::initialize(McpSession& s, const jsonrpc::Message& m) {
  const json::Value* p = m.params();
  if (!p || !p->IsObject()) return invalid_params(m, "initialize needs params");
  auto requested = json::get_string(*p, "protocolVersion");
  if (!requested) return invalid_params(m, "protocolVersion must be a string");
  std::string_view version = mcp::negotiate(*requested);
  {
    std::lock_guard lk(s.mu);
    s.protocol_version = std::string(version);
    if (const auto* caps = json::find(*p, "capabilities"); caps && caps->IsObject()) {
      s.client_capabilities.CopyFrom(*caps, s.client_capabilities.GetAllocator());
      s.answers_requests = json::find(*caps, "sampling") || json::find(*caps, "elicitation") || json::find(*caps, "roots");
    }
    if (const auto* info = json::find(*p, "clientInfo"))
      s.client_name = std::string(json::get_string(*info, "name").value_or(""));
  }
  // Capabilities are the gateway's, not the upstreams' of the moment: an
  // upstream that connects later must not need a new session.
  static constexpr std::string_view kCaps =
      R"({"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},)"
      R"("prompts":{"listChanged":true},"completions":{},"logging":{}})";
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(version, a), a);
  auto caps = json::parse(kCaps);
  r.AddMember("capabilities", json::Value(*caps, a), a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("title", "mcpgw MCP gateway", a);
  info.AddMember("version", MCPGW_VERSION, a);
  r.AddMember("serverInfo", info, a);
  auto cfg = config();
  std::string instructions = cfg->instructions;
  std::string welcome = welcome_text(s, *cfg);
  if (!welcome.empty()) instructions += (instructions.empty() ? "" : "\n\n") + welcome;
  if (!instructions.empty()) r.AddMember("instructions", json::str(instructions, a), a);
  spdlog::info("session {}: initialized by {} (protocol {}, mode {})", s.id().substr(0, 8),
               s.client_name.empty() ? "unnamed client" : s.client_name, version, s.mode);
  return jsonrpc::make_result(m.id(), r);
}

std::string Router::welcome_text(const McpSession& s, const config::Config& cfg) {
  auto snap = catalog_.snapshot();
  auto mode = snap->mode_index(s.mode);
  if (!mode || *mode >= snap->welcome_by_mode.size() || !snap->welcome_by_mode[*mode]) return {};
  const catalog::ExposedTool& tool = snap->tools[*snap->welcome_by_mode[*mode]];
  auto args = json::parse(cfg.welcome.arguments_json);
  upstream::CallOptions o;
  o.deadline = std::min(Clock::now() + std::chrono::milliseconds(cfg.welcome.timeout_ms), tool.origin->deadline());
  upstream::Caller caller = caller_of(s);
  o.caller = &caller;
  auto reply = tool.origin->call_tool(tool.upstream_name, args ? &*args : nullptr, nullptr, o);
  // A welcome that fails must not stop the session from starting.
  bool failed = reply.rpc_error || (json::find(reply.body, "isError") && reply.body["isError"].IsTrue());
  std::string text;
  if (const json::Value* content = json::find(reply.body, "content"); content && content->IsArray())
    for (const auto& item : content->GetArray())
      if (json::get_string(item, "type") == "text")
        if (auto t = json::get_string(item, "text")) text += (text.empty() ? "" : "\n") + std::string(*t);
  if (failed) {
    spdlog::warn("session {}: welcome tool {} failed, starting without it: {}", s.id().substr(0, 8), tool.name,
                 text.empty() ? json::write(reply.body) : text);
    return {};
  }
  spdlog::info("session {}: welcome tool {} gave {} characters of instructions", s.id().substr(0, 8), tool.name,
               text.size());
  return text;
}

std::string Router::list_tools(McpSession& s, const jsonrpc::Message& m) {
  auto snap = catalog_.snapshot();
  auto mode = snap->mode_index(s.mode);
  static const std::vector<std::size_t> kNone;
  const auto& visible = mode && *mode < snap->mode_tools.size() ? snap->mode_tools[*mode] : kNone;
  struct Defs {
    const catalog::Snapshot& snap;
    const std::vector<std::size_t>& idx;
    std::size_t size() const { return idx.size(); }
    const std::string& operator[](std::size_t i) const { return snap.tools[idx[i]].definition; }
  };
  return page_of(m, "tools", Defs{*snap, visible}, static_cast<std::size_t>(config()->listen.page_size));
}

std::string Router::call_tool(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  const json::Value* p = m.params();
  if (!p || !p->IsObject()) return invalid_params(m, "tools/call needs params");
  auto name = json::get_string(*p, "name");
  if (!name) return invalid_params(m, "name must be a string");
  const json::Value* args = json::find(*p, "arguments");
  if (args && !args->IsObject() && !args->IsNull()) return invalid_params(m, "arguments must be an object");
  if (args && args->IsNull()) args = nullptr;

  auto snap = catalog_.snapshot();
  auto mode = snap->mode_index(s.mode);
  // A tool hidden from this client's mode is as unknown as one that does not exist.
  const catalog::ExposedTool* tool = mode ? snap->find_tool(*name, *mode) : nullptr;
  if (!tool) return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name));

  const json::Value* meta = json::find(*p, "_meta");
  const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr;
  auto progress = token ? std::make_shared<Progress>(ex, *token) : nullptr;
  upstream::Caller caller = caller_of(s);
  auto client = std::make_shared<ClientCall>(s.shared_from_this(), ex, next_forwarded_id_);
  struct CloseAtEnd {
    ClientCall& c;
    ~CloseAtEnd() { c.close(); }
  } close_at_end{*client};
  auto call = [&](const catalog::ExposedTool& t, const json::Value* arguments, const json::Value* call_meta) {
    upstream::CallOptions opts = options_for(*t.origin, ex, caller);
    opts.client = client;
    if (progress) opts.on_progress = [progress](json::Value& params) { progress->forward(params); };
    auto started = Clock::now();
    upstream::Reply reply = t.origin->call_tool(t.upstream_name, arguments, call_meta, opts);
    double secs = std::chrono::duration<double>(Clock::now() - started).count();
    bool is_error = reply.rpc_error || (json::find(reply.body, "isError") && reply.body["isError"].IsTrue());
    std::string_view outcome = reply.rpc_error ? "rpc_error" : is_error ? "error" : "ok";
    metrics_.tool_call(t.origin->name(), outcome, secs);
    spdlog::debug("call {} principal={} session={} {:.1f} ms {}", t.name, principal_of(s), s.id().substr(0, 8),
                  secs * 1000, outcome);
    return std::make_pair(std::move(reply), secs * 1000);
  };
  auto [reply, ms] = call(*tool, args, meta);
  auto cfg = config();
  if (reply.rpc_error || !cfg->chain.resolve || !chain::has_next_tool(reply.body)) return relay(m, reply);

  // The result asks for another tool: follow the chain here, each hop a
  // full call by this client (its mode, timeouts, cancellation, progress).
  chain::Context ctx{*snap, *mode, cfg->chain, nullptr, nullptr, nullptr, &ex.cancel_signal()};
  ctx.call = [&](const catalog::ExposedTool& t, const json::Value* arguments) {
    return call(t, arguments, nullptr).first;
  };
  ctx.before_hop = [&](int hop, const catalog::ExposedTool& t) {
    if (progress) progress->step("chain hop " + std::to_string(hop) + ": " + t.name);
  };
  ctx.after_hop = [&](int hop, const catalog::ExposedTool& t, bool is_error, double hop_ms) {
    spdlog::info("chain hop {} of {}: {} principal={} session={} {:.1f} ms {}", hop, tool->name, t.name,
                 principal_of(s), s.id().substr(0, 8), hop_ms, is_error ? "error" : "ok");
  };
  return jsonrpc::make_result(m.id(), chain::resolve(ctx, *tool, args, std::move(reply.body), ms));
}

std::string Router::read_resource(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  auto uri = m.params() ? json::get_string(*m.params(), "uri") : std::nullopt;
  if (!uri) return invalid_params(m, "uri must be a string");
  auto snap = catalog_.snapshot();
  auto route = snap->route_resource(*uri);
  if (!route) {
    json::Document data(rapidjson::kObjectType);
    data.AddMember("uri", json::str(*uri, data.GetAllocator()), data.GetAllocator());
    return jsonrpc::make_error(m.id(), kResourceNotFound, "Resource not found: " + std::string(*uri), &data);
  }
  json::Document p;
  p.CopyFrom(*m.params(), p.GetAllocator());
  json::set(p, "uri", json::str(route->upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::Caller caller = caller_of(s);
  upstream::Reply r = route->origin->request("resources/read", p, options_for(*route->origin, ex, caller));
  // Contents name the resource as the client knows it.
  if (!r.rpc_error) {
    if (auto* contents = json::find(r.body, "contents"); contents && contents->IsArray())
      for (auto& c : contents->GetArray())
        if (auto u = json::get_string(c, "uri"))
          json::set(c, "uri", json::str(snap->expose_uri(*route->origin, *u), r.body.GetAllocator()),
                    r.body.GetAllocator());
  }
  return relay(m, r);
}

std::string Router::subscribe(McpSession& s, const jsonrpc::Message& m, bool on) {
  auto uri = m.params() ? json::get_string(*m.params(), "uri") : std::nullopt;
  if (!uri) return invalid_params(m, "uri must be a string");
  auto snap = catalog_.snapshot();
  auto route = snap->route_resource(*uri);
  if (!route) return jsonrpc::make_error(m.id(), kResourceNotFound, "Resource not found: " + std::string(*uri));
  // Whatever form the client used, updates arrive under the exposed URI.
  std::string exposed = snap->expose_uri(*route->origin, route->upstream_key);
  bool changed;
  {
    std::lock_guard lk(s.mu);
    changed = on ? s.subscriptions.insert(exposed).second : s.subscriptions.erase(exposed) > 0;
  }
  if (changed) count_subscription(*route, on ? 1 : -1);
  return jsonrpc::make_result_raw(m.id(), "{}");
}

void Router::count_subscription(const catalog::Route& r, int delta) {
  bool send;
  {
    std::lock_guard lk(subs_mu_);
    int& n = upstream_subs_[{r.origin.get(), r.upstream_key}];
    int before = n;
    n += delta;
    send = (before == 0 && n == 1) || (before == 1 && n == 0);
    if (n <= 0) upstream_subs_.erase({r.origin.get(), r.upstream_key});
  }
  if (!send) return;
  // One upstream subscription serves every client subscribed to the
  // resource; the first subscribes, the last unsubscribes.
  json::Document p(rapidjson::kObjectType);
  p.AddMember("uri", json::str(r.upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::CallOptions o;
  o.deadline = r.origin->deadline();
  auto reply = r.origin->request(delta > 0 ? "resources/subscribe" : "resources/unsubscribe", p, o);
  if (reply.rpc_error)
    spdlog::warn("upstream {}: {} {} failed: {}", r.origin->name(), delta > 0 ? "subscribe" : "unsubscribe",
                 r.upstream_key, json::write(reply.body));
}

void Router::unsubscribe_all(McpSession& s) {
  std::set<std::string> subs;
  {
    std::lock_guard lk(s.mu);
    subs.swap(s.subscriptions);
  }
  auto snap = catalog_.snapshot();
  for (const auto& uri : subs)
    if (auto route = snap->route_resource(uri)) count_subscription(*route, -1);
}

std::string Router::get_prompt(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  auto name = m.params() ? json::get_string(*m.params(), "name") : std::nullopt;
  if (!name) return invalid_params(m, "name must be a string");
  auto route = catalog_.snapshot()->route_prompt(*name);
  if (!route) return invalid_params(m, "unknown prompt: " + std::string(*name));
  json::Document p;
  p.CopyFrom(*m.params(), p.GetAllocator());
  json::set(p, "name", json::str(route->upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::Caller caller = caller_of(s);
  return relay(m, route->origin->request("prompts/get", p, options_for(*route->origin, ex, caller)));
}

std::string Router::complete(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  const json::Value* ref = m.params() ? json::find(*m.params(), "ref") : nullptr;
  auto type = ref ? json::get_string(*ref, "type") : std::nullopt;
  if (!type) return invalid_params(m, "ref.type must be a string");
  auto snap = catalog_.snapshot();
  std::optional<catalog::Route> route;
  const char* key = nullptr;
  if (*type == "ref/prompt") {
    key = "name";
    if (auto n = json::get_string(*ref, "name")) route = snap->route_prompt(*n);
  } else if (*type == "ref/resource") {
    key = "uri";
    if (auto u = json::get_string(*ref, "uri")) {
      route = snap->route_template(*u);
      if (!route) route = snap->route_resource(*u);
    }
  } else {
    return invalid_params(m, "unknown ref.type " + std::string(*type));
  }
  if (!route) return invalid_params(m, "unknown " + std::string(*type == "ref/prompt" ? "prompt" : "resource"));
  json::Document p;
  p.CopyFrom(*m.params(), p.GetAllocator());
  json::set(p["ref"], key, json::str(route->upstream_key, p.GetAllocator()), p.GetAllocator());
  upstream::Caller caller = caller_of(s);
  return relay(m, route->origin->request("completion/complete", p, options_for(*route->origin, ex, caller)));
}

}  // namespace mcpgw::server
