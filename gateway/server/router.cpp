#include "server/router.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "mcp/protocol.hpp"


namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

std::string invalid_params(const jsonrpc::Message& m, const std::string& why) {
  return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid params: " + why);
}

}  // namespace

Router::Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics)
    : cfg_(std::move(cfg)), catalog_(catalog), metrics_(metrics),
      pool_(std::make_unique<WorkerPool>(4, 4096)) {}

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
  std::vector<std::string> out;
  for (const auto& m : config()->modes) out.push_back(m.name);
  return out;
}

Result<std::shared_ptr<transport::Session>> Router::open_session(const transport::ClientContext& ctx) {
  std::string mode = ctx.mode.empty() ? config()->default_mode : ctx.mode;
  if (!ctx.mode.empty()) {
    auto ms = modes();
    if (std::find(ms.begin(), ms.end(), ctx.mode) == ms.end()) return Error{"unknown mode \"" + ctx.mode + "\""};
  }
  if (!ctx.allowed_modes.empty() &&
      std::find(ctx.allowed_modes.begin(), ctx.allowed_modes.end(), mode) == ctx.allowed_modes.end())
    return Error{"principal \"" + ctx.principal + "\" may not use mode \"" + mode + "\""};
  auto s = std::make_shared<McpSession>();
  {
    std::lock_guard lk(sessions_mu_);
    sessions_.insert(s);
    metrics_.set_sessions(static_cast<double>(sessions_.size()));
  }
  return std::shared_ptr<transport::Session>(std::move(s));
}

void Router::close_session(const std::shared_ptr<transport::Session>& session) {
  auto s = std::static_pointer_cast<McpSession>(session);
  {
    std::lock_guard lk(s->mu);
    for (auto& [id, ex] : s->inflight)
      if (auto e = ex.lock()) e->cancel();
  }
  std::lock_guard lk(sessions_mu_);
  sessions_.erase(s);
  metrics_.set_sessions(static_cast<double>(sessions_.size()));
}

void Router::tools_changed() {
  std::string note = jsonrpc::make_notification("notifications/tools/list_changed", nullptr);
  std::vector<std::shared_ptr<McpSession>> live;
  {
    std::lock_guard lk(sessions_mu_);
    live.assign(sessions_.begin(), sessions_.end());
  }
  for (auto& s : live) {
    bool ready;
    {
      std::lock_guard lk(s->mu);
      ready = s->initialized;
    }
    if (ready) s->notify(note);
  }
}

void Router::handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
                    std::shared_ptr<transport::Exchange> ex) {
  auto s = std::static_pointer_cast<McpSession>(session);
  if (msg.is_response()) {
    // Answers to server-to-client requests; the gateway sends none yet.
    metrics_.message("response");
    return;
  }
  metrics_.message(msg.method());
  if (msg.is_notification()) {
    on_notification(*s, msg);
    return;
  }
  std::string_view method = msg.method();
  if (method == "tools/call") {
    // Calls block on upstreams: run them on the pool so the transport thread
    // can stream messages related to the call while it runs.
    std::string key = json::write(msg.id());
    {
      std::lock_guard lk(s->mu);
      s->inflight[key] = ex;
    }
    auto shared = std::make_shared<jsonrpc::Message>(std::move(msg));
    bool queued = pool_ && pool_->submit([this, s, shared, ex, key] {
      ex->reply(call_tool(*s, *shared, *ex));
      std::lock_guard lk(s->mu);
      s->inflight.erase(key);
    });
    if (!queued) ex->reply(jsonrpc::make_error(shared->id(), jsonrpc::kInternalError, "mcpgw is shutting down"));
    return;
  }
  if (method == "initialize") return ex->reply(initialize(*s, msg));
  if (method == "ping") return ex->reply(jsonrpc::make_result_raw(msg.id(), "{}"));
  if (method == "tools/list") return ex->reply(list_tools(msg));
  ex->reply(jsonrpc::make_error(msg.id(), jsonrpc::kMethodNotFound, "Method not found: " + std::string(method)));
}

void Router::on_notification(McpSession& s, const jsonrpc::Message& m) {
  if (m.method() == "notifications/initialized") {
    std::lock_guard lk(s.mu);
    s.initialized = true;
  } else if (m.method() == "notifications/cancelled" && m.params()) {
    const json::Value* id = json::find(*m.params(), "requestId");
    if (!id) return;
    std::lock_guard lk(s.mu);
    auto it = s.inflight.find(json::write(*id));
    if (it == s.inflight.end()) return;
    if (auto e = it->second.lock()) e->cancel();
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
    if (const auto* caps = json::find(*p, "capabilities"); caps && caps->IsObject())
      s.client_capabilities.CopyFrom(*caps, s.client_capabilities.GetAllocator());
    if (const auto* info = json::find(*p, "clientInfo"))
      s.client_name = std::string(json::get_string(*info, "name").value_or(""));
  }
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(version, a), a);
  json::Value caps(rapidjson::kObjectType), tools(rapidjson::kObjectType);
  tools.AddMember("listChanged", true, a);
  caps.AddMember("tools", tools, a);
  r.AddMember("capabilities", caps, a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("title", "mcpgw MCP gateway", a);
  info.AddMember("version", MCPGW_VERSION, a);
  r.AddMember("serverInfo", info, a);
  auto cfg = config();
  if (!cfg->instructions.empty()) r.AddMember("instructions", json::str(cfg->instructions, a), a);
  spdlog::info("session {}: initialized by {} (protocol {})", s.id().substr(0, 8),
               s.client_name.empty() ? "unnamed client" : s.client_name, version);
  return jsonrpc::make_result(m.id(), r);
}

std::string Router::list_tools(const jsonrpc::Message& m) {
  std::size_t offset = 0;
  if (const json::Value* p = m.params(); p && p->IsObject()) {
    if (const json::Value* c = json::find(*p, "cursor"); c && !c->IsNull()) {
      auto off = c->IsString() ? mcp::decode_cursor(c->GetString()) : std::nullopt;
      if (!off) return invalid_params(m, "invalid cursor");
      offset = *off;
    }
  }
  auto snap = catalog_.snapshot();
  std::size_t page = static_cast<std::size_t>(config()->listen.page_size);
  std::size_t end = std::min(snap->tools.size(), offset + page);
  std::string out = "{\"tools\":[";
  for (std::size_t i = offset; i < end; ++i) {
    if (i > offset) out += ',';
    out += snap->tools[i].definition;
  }
  out += ']';
  if (end < snap->tools.size()) out += ",\"nextCursor\":" + json::quote(mcp::encode_cursor(end));
  out += '}';
  return jsonrpc::make_result_raw(m.id(), out);
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
  const catalog::ExposedTool* tool = snap->find(*name);
  if (!tool) return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name));

  const json::Value* meta = json::find(*p, "_meta");
  upstream::CallOptions opts;
  opts.deadline = tool->origin->deadline();
  opts.cancelled = [&ex] { return ex.cancelled(); };
  if (const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr) {
    // The client's token travels back on our notifications; the upstream
    // gets one of ours so tokens of different clients never meet.
    auto client_token = std::make_shared<json::Document>(json::clone(*token));
    opts.on_progress = [&ex, client_token](json::Value& params) {
      json::Document n(rapidjson::kObjectType);
      n.CopyFrom(params, n.GetAllocator());
      json::set(n, "progressToken", json::Value(*client_token, n.GetAllocator()), n.GetAllocator());
      ex.send(jsonrpc::make_notification("notifications/progress", &n));
    };
  }
  auto started = Clock::now();
  upstream::Reply reply = tool->origin->call_tool(tool->upstream_name, args, meta, opts);
  double secs = std::chrono::duration<double>(Clock::now() - started).count();
  bool is_error = reply.rpc_error || (json::find(reply.body, "isError") && reply.body["isError"].IsTrue());
  std::string_view outcome = reply.rpc_error ? "rpc_error" : is_error ? "error" : "ok";
  metrics_.tool_call(tool->origin->name(), outcome, secs);
  spdlog::debug("call {} principal={} session={} {:.1f} ms {}", tool->name,
               s.context().principal.empty() ? "-" : s.context().principal, s.id().substr(0, 8), secs * 1000,
               outcome);
  if (reply.rpc_error) return jsonrpc::make_error_response(m.id(), reply.body);
  return jsonrpc::make_result(m.id(), reply.body);
}

}  // namespace mcpgw::server
