#include "server/router.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <atomic>
#include <cmath>
#include <condition_variable>

#include "chain/chain.hpp"
#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "server/client_call.hpp"
#include "util/random.hpp"

namespace mcpgw::server {
namespace {

using Clock = std::chrono::steady_clock;

std::string invalid_params(const jsonrpc::Message& m, const std::string& why) {
  return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid params: " + why);
}

/// Capabilities are the gateway's, not the upstreams' of the moment: an
/// upstream that connects later must not need a new session.
constexpr std::string_view kServerCapabilities =
    R"({"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},)"
    R"("prompts":{"listChanged":true},"completions":{},"logging":{},)"
    R"("experimental":{"mcpgw/sagas":{"methods":["tools/callSaga","tools/resumeSaga"],)"
    R"("stepTypes":["elicitation","sampling","roots"]}}})";

json::Value server_info(json::Allocator& a) {
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", "mcpgw", a);
  info.AddMember("title", "mcpgw MCP gateway", a);
  info.AddMember("version", MCPGW_VERSION, a);
  return info;
}

/// MCP's "resource not found" code (spec: server/resources, error handling).
constexpr int kResourceNotFound = -32002;

/// Methods that wait on an upstream and therefore run on the worker pool.
bool blocks(std::string_view method) {
  // initialize and server/discover call the welcome tool.
  return method == "initialize" || method == "server/discover" || method == "tools/call" || method == "tools/callSaga" || method == "tools/resumeSaga" ||
         method == "resources/read" || method == "prompts/get" ||
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


}  // namespace

/// Progress notifications of one client call. Progress must increase, and
/// a chain mixes the upstreams' own progress with one step per hop: the
/// upstreams' values pass only when they go forward, a hop takes the next
/// whole step. A suspended call's retries bring their own tokens.
class Progress {
 public:
  explicit Progress(std::shared_ptr<ClientCall> client) : client_(std::move(client)) {}
  /// Reports under `token` from now on (null: not at all).
  void retarget(const json::Value* token) {
    std::lock_guard lk(mu_);
    token_.SetNull();
    if (token) token_.CopyFrom(*token, token_.GetAllocator());
  }
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
    {
      std::lock_guard lk(mu_);
      if (token_.IsNull()) return;
      json::set(n, "progressToken", json::Value(token_, n.GetAllocator()), n.GetAllocator());
    }
    client_->send(jsonrpc::make_notification("notifications/progress", &n));
  }
  std::shared_ptr<ClientCall> client_;
  std::mutex mu_;
  json::Document token_;
  std::optional<double> last_;
};

namespace {

/// Removes what a stateless client sends back for a suspended call: it is
/// the gateway's, not the upstream's.
void strip_client_state(json::Value& params) {
  params.RemoveMember("inputResponses");
  params.RemoveMember("requestState");
  if (json::Value* meta = json::find(params, "_meta"); meta && meta->IsObject()) {
    for (auto it = meta->MemberBegin(); it != meta->MemberEnd();) {
      std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (key.rfind("io.modelcontextprotocol/", 0) == 0) it = meta->EraseMember(it);
      else ++it;
    }
  }
}

/// The `_meta` of a client's request as an upstream may see it: without the
/// stateless envelope (the upstream gets the gateway's own) and the
/// progress token (the gateway's replaces it).
std::shared_ptr<json::Document> upstream_meta(const json::Value* meta) {
  if (!meta || !meta->IsObject()) return nullptr;
  auto out = std::make_shared<json::Document>(rapidjson::kObjectType);
  for (const auto& m : meta->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key.rfind("io.modelcontextprotocol/", 0) == 0 || key == "progressToken") continue;
    out->AddMember(json::str(key, out->GetAllocator()), json::Value(m.value, out->GetAllocator()), out->GetAllocator());
  }
  return out->ObjectEmpty() ? nullptr : out;
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

/// A stateless HTTP request has no session to key a per-client upstream
/// connection by: it uses the shared one.
upstream::Caller caller_of(const McpSession& s) {
  return {s.context().principal, s.mode, s.context().stateless ? std::string() : s.id()};
}

/// Why the `Mcp-Param-*` headers of a stateless HTTP call disagree with its
/// arguments, per the `x-mcp-header` properties of the tool's inputSchema;
/// "" when they agree.
std::string param_header_mismatch(const catalog::ExposedTool& tool, const json::Value* args,
                                  const transport::ClientContext& ctx) {
  if (!ctx.has_param_headers) return {};
  auto def = json::parse(tool.definition);
  const json::Value* schema = def ? json::find(*def, "inputSchema") : nullptr;
  const json::Value* props = schema ? json::find(*schema, "properties") : nullptr;
  if (!props || !props->IsObject()) return {};
  for (const auto& p : props->GetObject()) {
    auto header = json::get_string(p.value, "x-mcp-header");
    if (!header) continue;
    std::string name = "Mcp-Param-" + std::string(*header);
    std::string lowered;
    for (char c : *header) lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const std::string* raw = nullptr;
    for (const auto& [n, v] : ctx.param_headers)
      if (n == lowered) raw = &v;
    const json::Value* value = args ? json::find(*args, std::string_view(p.name.GetString(), p.name.GetStringLength())) : nullptr;
    if (value && value->IsNull()) value = nullptr;
    if (!value && !raw) continue;
    if (!raw) return "the body carries " + std::string(p.name.GetString()) + " but the " + name + " header is absent";
    auto decoded = mcp::decode_header_value(*raw);
    if (!decoded) return "the " + name + " header is not valid =?base64?...?=";
    if (!value) return "the " + name + " header is present but the body has no " + std::string(p.name.GetString());
    std::string expected = value->IsString() ? std::string(value->GetString(), value->GetStringLength()) : json::write(*value);
    bool same = mcp::header_matches(*decoded, expected);
    // Integers compare as numbers: "042" and 42 agree.
    if (!same && value->IsInt64()) {
      std::int64_t n = 0;
      auto [end, ec] = std::from_chars(decoded->data(), decoded->data() + decoded->size(), n);
      same = ec == std::errc() && end == decoded->data() + decoded->size() && n == value->GetInt64();
    }
    if (!same) return "the " + name + " header says \"" + *decoded + "\" but the body says " + json::write(*value);
  }
  return {};
}

}  // namespace

/// A stateless client's call waiting for its client's input: the upstream
/// keeps waiting for the answers, and the client's retry finds the call
/// here by the id in its requestState.
struct Router::Parked {
  std::string id;
  std::shared_ptr<ClientCall> client;
  std::shared_ptr<Progress> progress;
  CancelSignal cancel;
  std::atomic<bool> done{false};
  upstream::Reply result;
  Clock::time_point expires;
};

Router::Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
               std::shared_ptr<const saga::Keyring> keyring, Hooks hooks)
    : cfg_(std::move(cfg)),
      keyring_(std::move(keyring)),
      catalog_(catalog),
      metrics_(metrics),
      pool_(std::make_unique<WorkerPool>(4, 4096)),
      bridge_pool_(std::make_unique<WorkerPool>(0, kMaxParked + 64)),
      hooks_(std::move(hooks)) {}

Router::~Router() { drain(); }

void Router::drain() {
  std::map<std::string, std::shared_ptr<Parked>> parked;
  {
    std::lock_guard lk(parked_mu_);
    parked.swap(parked_);
  }
  // Suspended calls would wait for retries that cannot come any more.
  for (auto& [id, p] : parked) {
    p->cancel.cancel();
    p->client->abandon();
  }
  pool_.reset();
  bridge_pool_.reset();
}

void Router::set_config(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring) {
  std::lock_guard lk(cfg_mu_);
  cfg_ = std::move(cfg);
  keyring_ = std::move(keyring);
}

std::shared_ptr<const saga::Keyring> Router::keyring() const {
  std::lock_guard lk(cfg_mu_);
  return keyring_;
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
  s->stateless = ctx.stateless;
  // A stateless request's session lasts one request: it is not a client
  // session to count or to notify.
  if (ctx.stateless) return std::shared_ptr<transport::Session>(std::move(s));
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
  if (s->context().stateless) return;
  // Unsubscribing upstream and stopping per-client upstreams block, and the
  // transports call this on an I/O thread: the rest runs on the pool.
  auto finish = [this, s] {
    unsubscribe_all(*s);
    if (hooks_.session_closed) hooks_.session_closed(s->id());
    {
      std::lock_guard lk(sessions_mu_);
      sessions_.erase(s);
      metrics_.set_sessions(static_cast<double>(sessions_.size()));
    }
    update_log_level();
  };
  if (!pool_ || !pool_->submit(finish)) finish();
}

void Router::update_log_level() {
  if (!hooks_.log_level) return;
  std::string wanted;
  bool asked = false;
  std::lock_guard lk(sessions_mu_);
  for (const auto& s : sessions_) {
    std::lock_guard slk(s->mu);
    asked = asked || s->log_level_set;
    if (wanted.empty() || mcp::log_level_rank(s->log_level) < mcp::log_level_rank(wanted)) wanted = s->log_level;
  }
  // Upstreams keep their own default until some client asks for a level;
  // then they are set to the most verbose level any session (asking or
  // not) takes.
  if (!asked || wanted.empty() || wanted == upstream_log_level_) return;
  upstream_log_level_ = wanted;
  hooks_.log_level(wanted);
}

void Router::list_changed(std::string_view what) {
  notify_sessions(jsonrpc::make_notification("notifications/" + std::string(what) + "/list_changed", nullptr),
                  [](const McpSession& s) { return s.initialized; });
  notify_listeners("notifications/" + std::string(what) + "/list_changed", "", [&](const McpSession& s) {
    return what == "tools" ? s.listen_tools : what == "prompts" ? s.listen_prompts : s.listen_resources;
  });
}

void Router::notify_listeners(std::string_view method, const std::string& uri,
                              const std::function<bool(const McpSession&)>& wants) {
  std::vector<std::shared_ptr<McpSession>> live;
  {
    std::lock_guard lk(listeners_mu_);
    live.assign(listeners_.begin(), listeners_.end());
  }
  for (auto& s : live) {
    std::shared_ptr<transport::Exchange> ex;
    std::string id;
    {
      std::lock_guard lk(s->mu);
      if (!wants(*s)) continue;
      ex = s->listen_exchange;
      id = s->listen_id;
    }
    if (!ex) continue;
    std::string params = "{";
    if (!uri.empty()) params += "\"uri\":" + json::quote(uri) + ",";
    params += "\"_meta\":{\"" + std::string(mcp::kMetaSubscriptionId) + "\":" + id + "}}";
    ex->send("{\"jsonrpc\":\"2.0\",\"method\":\"" + std::string(method) + "\",\"params\":" + params + "}");
  }
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
  notify_listeners("notifications/resources/updated", exposed,
                   [&](const McpSession& s) { return s.listen_uris.count(exposed) > 0; });
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
  // A request claiming the stateless revision is one, unless the client
  // already chose the stateful ones with initialize.
  bool stateless = s->stateless;
  if (!stateless && mcp::claimed_version(msg)) {
    std::lock_guard lk(s->mu);
    stateless = s->protocol_version.empty();
  }
  if (stateless) return handle_stateless(s, std::move(msg), std::move(ex));
  run(s, s, std::move(msg), std::move(ex));
}

void Router::handle_stateless(const std::shared_ptr<McpSession>& parent, jsonrpc::Message msg,
                              std::shared_ptr<transport::Exchange> ex) {
  auto envelope = mcp::read_envelope(msg, std::nullopt);
  if (auto* r = std::get_if<mcp::Refusal>(&envelope))
    return ex->reply(jsonrpc::make_error(msg.id(), r->code, r->message, r->data.IsNull() ? nullptr : &r->data));
  if (mcp::removed_in_stateless(msg.method()))
    return ex->reply(jsonrpc::make_error(msg.id(), jsonrpc::kMethodNotFound,
                                         "Method not found: " + std::string(msg.method()) + " is not part of MCP " +
                                             std::string(mcp::kStatelessVersion)));
  // The request's own view of its client, from its envelope; it shares
  // the parent's identity, mode and way to the client.
  auto s = std::make_shared<McpSession>();
  auto& e = std::get<mcp::Envelope>(envelope);
  s->stateless = true;
  s->mode = parent->mode;
  s->protocol_version = e.version;
  s->client_capabilities.CopyFrom(e.capabilities, s->client_capabilities.GetAllocator());
  s->client_name = e.client_name;
  s->log_level = e.log_level;
  std::weak_ptr<McpSession> weak_parent = parent;
  s->bind(parent->id(), parent->context(), [weak_parent](std::string m) {
    auto p = weak_parent.lock();
    if (p) p->notify(std::move(m));
    return p != nullptr;
  });
  if (msg.method() == "subscriptions/listen") return listen(s, msg, std::move(ex));
  run(parent, s, std::move(msg), std::move(ex));
}

void Router::run(const std::shared_ptr<McpSession>& parent, const std::shared_ptr<McpSession>& s, jsonrpc::Message msg,
                 std::shared_ptr<transport::Exchange> ex) {
  if (!blocks(msg.method())) return ex->reply(answer(*s, msg, *ex));
  std::string key = json::write(msg.id());
  {
    std::lock_guard lk(parent->mu);
    parent->inflight[key] = ex;
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
    std::string reply = answer(*s, msg, *ex);
    {
      std::lock_guard lk(parent->mu);
      parent->inflight.erase(key);
    }
    return ex->reply(std::move(reply));
  }
  auto shared = std::make_shared<jsonrpc::Message>(std::move(msg));
  bool queued = pool_ && pool_->submit([this, parent, s, shared, ex, key] {
    ex->reply(answer(*s, *shared, *ex));
    std::lock_guard lk(parent->mu);
    parent->inflight.erase(key);
  });
  if (!queued) ex->reply(jsonrpc::make_error(shared->id(), jsonrpc::kInternalError, "mcpgw is shutting down"));
}

std::string Router::answer(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  std::string reply = dispatch(s, m, ex);
  if (!s.stateless) return reply;
  auto doc = json::parse(reply);
  json::Value* result = doc ? json::find(*doc, "result") : nullptr;
  if (!result) return reply;
  // Lists and reads are the same for every client of a mode unless
  // principals see different things.
  mcp::stamp_result(*result, m.method(), config()->auth.enabled ? "private" : "public", doc->GetAllocator());
  return json::write(*doc);
}

std::string Router::discover(McpSession& s, const jsonrpc::Message& m) {
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value versions(rapidjson::kArrayType);
  for (auto v : mcp::kStatelessVersions) versions.PushBack(json::ref(v), a);
  for (auto v : mcp::kSessionVersions) versions.PushBack(json::ref(v), a);
  r.AddMember("supportedVersions", versions, a);
  auto caps = json::parse(kServerCapabilities);
  r.AddMember("capabilities", json::Value(*caps, a), a);
  auto cfg = config();
  std::string instructions = cfg->instructions;
  std::string welcome = welcome_text(s, *cfg);
  if (!welcome.empty()) instructions += (instructions.empty() ? "" : "\n\n") + welcome;
  if (!instructions.empty()) r.AddMember("instructions", json::str(instructions, a), a);
  json::Value meta(rapidjson::kObjectType);
  meta.AddMember(json::ref(mcp::kMetaServerInfo), server_info(a), a);
  r.AddMember("_meta", meta, a);
  return jsonrpc::make_result(m.id(), r);
}

void Router::listen(const std::shared_ptr<McpSession>& s, const jsonrpc::Message& m,
                    std::shared_ptr<transport::Exchange> ex) {
  const json::Value* filter = m.params() ? json::find(*m.params(), "notifications") : nullptr;
  if (!filter || !filter->IsObject())
    return ex->reply(invalid_params(m, "notifications must be a SubscriptionFilter object"));
  auto flag = [&](const char* key) {
    const json::Value* v = json::find(*filter, key);
    return v && v->IsTrue();
  };
  // The acknowledgement names what will be sent: what was asked for that
  // the gateway can tell.
  json::Document ack(rapidjson::kObjectType);
  auto& a = ack.GetAllocator();
  json::Value honoured(rapidjson::kObjectType);
  auto snap = catalog_.snapshot();
  {
    std::lock_guard lk(s->mu);
    s->listen_id = json::write(m.id());
    s->listen_tools = flag("toolsListChanged");
    s->listen_prompts = flag("promptsListChanged");
    s->listen_resources = flag("resourcesListChanged");
    if (s->listen_tools) honoured.AddMember("toolsListChanged", true, a);
    if (s->listen_prompts) honoured.AddMember("promptsListChanged", true, a);
    if (s->listen_resources) honoured.AddMember("resourcesListChanged", true, a);
    if (const json::Value* uris = json::find(*filter, "resourceSubscriptions"); uris && uris->IsArray()) {
      json::Value kept(rapidjson::kArrayType);
      for (const auto& u : uris->GetArray()) {
        if (!u.IsString()) continue;
        auto route = snap->route_resource(u.GetString());
        if (!route) continue;
        std::string exposed = snap->expose_uri(*route->origin, route->upstream_key);
        if (s->listen_uris.insert(exposed).second) kept.PushBack(json::str(u.GetString(), a), a);
      }
      if (!kept.Empty()) honoured.AddMember("resourceSubscriptions", kept, a);
    }
    s->listen_exchange = ex;
  }
  for (const auto& uri : s->listen_uris)
    if (auto route = snap->route_resource(uri)) count_subscription(*route, 1);
  ack.AddMember("notifications", honoured, a);
  json::Value meta(rapidjson::kObjectType);
  meta.AddMember(json::ref(mcp::kMetaSubscriptionId), json::Value(m.id(), a), a);
  ack.AddMember("_meta", meta, a);
  ex->send(jsonrpc::make_notification("notifications/subscriptions/acknowledged", &ack));
  {
    std::lock_guard lk(listeners_mu_);
    listeners_.insert(s);
  }
  // The stream ends when the client closes it (HTTP) or cancels the request
  // (stdio). The end runs on the pool: the cancel callback must not drop
  // the last reference to the session that holds its subscription.
  std::weak_ptr<McpSession> weak = s;
  auto sub = ex->cancel_signal().on_cancel([this, weak] {
    if (auto live = weak.lock(); live && pool_) pool_->submit([this, live] { end_listen(live); });
  });
  std::lock_guard lk(s->mu);
  s->listen_end = std::move(sub);
}

void Router::end_listen(const std::shared_ptr<McpSession>& s) {
  {
    std::lock_guard lk(listeners_mu_);
    if (!listeners_.erase(s)) return;
  }
  std::shared_ptr<transport::Exchange> ex;
  std::set<std::string> uris;
  CancelSignal::Subscription end;
  {
    std::lock_guard lk(s->mu);
    ex = std::move(s->listen_exchange);
    uris.swap(s->listen_uris);
    end = std::move(s->listen_end);
  }
  // The subscription points into the exchange: it goes first.
  end.reset();
  auto snap = catalog_.snapshot();
  for (const auto& uri : uris)
    if (auto route = snap->route_resource(uri)) count_subscription(*route, -1);
  if (ex) {
    std::string id = s->listen_id;
    ex->reply("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"resultType\":\"complete\",\"_meta\":{\"" +
              std::string(mcp::kMetaSubscriptionId) + "\":" + id + "}}}");
  }
}

std::string Router::dispatch(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  std::string_view method = m.method();
  if (method == "tools/call") return call_tool(s, m, ex);
  if (method == "tools/callSaga") return call_saga(s, m, ex);
  if (method == "tools/resumeSaga") return resume_saga(s, m, ex);
  if (method == "tools/list") return list_tools(s, m);
  if (method == "initialize") return initialize(s, m);
  if (method == "server/discover" && s.stateless) return discover(s, m);
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
    if (!level || mcp::log_level_rank(*level) < 0)
      return invalid_params(m, "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
    {
      std::lock_guard lk(s.mu);
      s.log_level = std::string(*level);
      s.log_level_set = true;
    }
    update_log_level();
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
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(version, a), a);
  auto caps = json::parse(kServerCapabilities);
  r.AddMember("capabilities", json::Value(*caps, a), a);
  r.AddMember("serverInfo", server_info(a), a);
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
  if (std::string why = param_header_mismatch(*tool, args, s.context()); !why.empty())
    return jsonrpc::make_error(m.id(), mcp::kHeaderMismatch, "Header mismatch: " + why);

  // The work may outlive this request (a suspended call), so it owns
  // everything it reads.
  auto arguments = std::make_shared<json::Document>();
  if (args) arguments->CopyFrom(*args, arguments->GetAllocator());
  Work work = tool_work(s, snap, *mode, *tool, arguments, upstream_meta(json::find(*p, "_meta")));
  return execute(s, m, ex, "tools/call " + tool->name, args, std::move(work));
}

Router::Work Router::tool_work(McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
                              const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
                              std::shared_ptr<json::Document> meta) {
  auto cfg = config();
  const catalog::ExposedTool* t = &tool;
  return [this, snap, mode, tool = t, arguments, meta, cfg, caller = caller_of(s), session = s.id()](
                  const std::shared_ptr<ClientCall>& client, CancelSignal& cancel,
                  const std::shared_ptr<Progress>& progress) -> upstream::Reply {
    const json::Value* args = arguments->IsNull() ? nullptr : &*arguments;
    auto call = [&](const catalog::ExposedTool& t, const json::Value* arguments, const json::Value* call_meta) {
      upstream::CallOptions opts = options_for(*t.origin, cancel, caller, client);
      if (progress) opts.on_progress = [progress](json::Value& params) { progress->forward(params); };
      auto started = Clock::now();
      upstream::Reply reply = t.origin->call_tool(t.upstream_name, arguments, call_meta, opts);
      double secs = std::chrono::duration<double>(Clock::now() - started).count();
      bool is_error = reply.rpc_error || (json::find(reply.body, "isError") && reply.body["isError"].IsTrue());
      std::string_view outcome = reply.rpc_error ? "rpc_error" : is_error ? "error" : "ok";
      metrics_.tool_call(t.origin->name(), outcome, secs);
      spdlog::debug("call {} principal={} session={} {:.1f} ms {}", t.name, caller.principal.empty() ? "-" : caller.principal,
                    session.substr(0, 8), secs * 1000, outcome);
      return std::make_pair(std::move(reply), secs * 1000);
    };
    auto [reply, ms] = call(*tool, args, meta ? &*meta : nullptr);
    if (reply.rpc_error || !cfg->chain.resolve || !chain::has_next_tool(reply.body)) return std::move(reply);

    // The result asks for another tool: follow the chain here, each hop a
    // full call by this client (its mode, timeouts, cancellation, progress).
    chain::Context ctx{*snap, mode, cfg->chain, nullptr, nullptr, nullptr, &cancel};
    ctx.call = [&](const catalog::ExposedTool& t, const json::Value* arguments) {
      return call(t, arguments, nullptr).first;
    };
    ctx.before_hop = [&](int hop, const catalog::ExposedTool& t) {
      if (progress) progress->step("chain hop " + std::to_string(hop) + ": " + t.name);
    };
    ctx.after_hop = [&](int hop, const catalog::ExposedTool& t, bool is_error, double hop_ms) {
      spdlog::info("chain hop {} of {}: {} principal={} session={} {:.1f} ms {}", hop, tool->name, t.name,
                   caller.principal.empty() ? "-" : caller.principal, session.substr(0, 8), hop_ms,
                   is_error ? "error" : "ok");
    };
    return upstream::Reply{false, chain::resolve(ctx, *tool, args, std::move(reply.body), ms)};
  };
}

std::string Router::execute(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex,
                            const std::string& target, const json::Value* args, Work work) {
  const json::Value* meta = m.params() ? json::find(*m.params(), "_meta") : nullptr;
  const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr;
  if (!s.stateless) {
    auto client = std::make_shared<ClientCall>(s.shared_from_this(), ex, next_forwarded_id_, false);
    struct CloseAtEnd {
      ClientCall& c;
      ~CloseAtEnd() { c.close(); }
    } close_at_end{*client};
    std::shared_ptr<Progress> progress;
    if (token) {
      progress = std::make_shared<Progress>(client);
      progress->retarget(token);
    }
    return relay(m, work(client, ex.cancel_signal(), progress));
  }
  return suspendable(s, m, ex, target, args, std::move(work));
}

std::shared_ptr<Router::Parked> Router::take_parked(const json::Value& state) {
  auto park = json::get_string(state, "park");
  if (!park) return nullptr;
  std::lock_guard lk(parked_mu_);
  auto it = parked_.find(std::string(*park));
  if (it == parked_.end()) return nullptr;
  auto p = std::move(it->second);
  parked_.erase(it);
  return p;
}

Router::Outcome Router::drive(McpSession& s, transport::Exchange& ex, std::shared_ptr<Parked>& parked,
                              const json::Value& answers, const json::Value* progress_token, Work work, bool sagas) {
  auto session = std::static_pointer_cast<McpSession>(s.shared_from_this());
  if (parked) {
    // Progress from now on is this request's.
    parked->progress->retarget(progress_token);
    parked->client->attach(session, ex);
    parked->client->answer_pending(answers);
  } else {
    // Not suspended here (a first call, another gateway process, a
    // restart): run it, answering whatever it asks that the client has
    // already answered.
    parked = std::make_shared<Parked>();
    parked->id = random_hex(12);
    parked->client = std::make_shared<ClientCall>(session, ex, next_forwarded_id_, true, !sagas);
    parked->client->preload(answers);
    parked->progress = std::make_shared<Progress>(parked->client);
    parked->progress->retarget(progress_token);
    bool queued = bridge_pool_ && bridge_pool_->submit([parked, work = std::move(work)] {
      parked->result = work(parked->client, parked->cancel, parked->progress);
      parked->done.store(true);
      parked->client->wake();
    });
    if (!queued) return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw is shutting down");
  }
  std::vector<Question> questions;
  {
    auto stop = ex.cancel_signal().on_cancel([&parked] { parked->cancel.cancel(); });
    questions = parked->client->wait([&] { return parked->done.load(); }, ex.cancel_signal());
  }
  parked->client->detach();
  if (parked->done.load()) return std::move(parked->result);
  if (ex.cancelled()) {
    parked->client->abandon();
    return upstream::Reply::error(jsonrpc::kInternalError, "mcpgw: the call was cancelled");
  }
  return questions;
}

void Router::park(const std::shared_ptr<Parked>& parked, std::chrono::seconds ttl, std::string& error) {
  parked->expires = Clock::now() + ttl;
  std::lock_guard lk(parked_mu_);
  // Calls never resumed give up their upstream request at expiry.
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second->expires < Clock::now() || it->second->done.load()) {
      it->second->cancel.cancel();
      it->second->client->abandon();
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  if (parked_.size() >= kMaxParked) {
    parked->cancel.cancel();
    parked->client->abandon();
    error = "mcpgw: too many calls are waiting for client input; try again later";
    return;
  }
  parked_[parked->id] = parked;
}

std::string Router::suspendable(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex,
                                const std::string& target, const json::Value* args, Work work) {
  const json::Value* p = m.params();
  const json::Value* responses = json::find(*p, "inputResponses");
  const json::Value* state = json::find(*p, "requestState");
  if (responses && !responses->IsObject())
    return invalid_params(m, "inputResponses must be an object mapping inputRequests keys to the client's results");
  if (responses)
    for (const auto& r : responses->GetObject())
      if (!r.value.IsObject())
        return invalid_params(m, "inputResponses." + std::string(r.name.GetString()) +
                                     " must be an object (the result of that input request)");
  if (state && !state->IsString()) return invalid_params(m, "requestState must be the string the server returned");

  std::shared_ptr<const saga::Keyring> keys = keyring();
  saga::Claims expect;
  expect.kind = "mrtr";
  expect.principal = s.context().principal;
  expect.target = target;
  expect.args_digest = saga::digest(args);
  json::Document answers(rapidjson::kObjectType);
  std::shared_ptr<Parked> parked;
  if (state) {
    auto opened = keys->open(std::string_view(state->GetString(), state->GetStringLength()), expect);
    if (auto* r = std::get_if<saga::Refusal>(&opened))
      return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid requestState: " + r->message);
    const saga::Claims& c = std::get<saga::Claims>(opened);
    if (const json::Value* a = json::find(c.state, "answers"); a && a->IsObject())
      answers.CopyFrom(*a, answers.GetAllocator());
    parked = take_parked(c.state);
  }
  if (responses)
    for (const auto& r : responses->GetObject())
      json::set(answers, std::string_view(r.name.GetString(), r.name.GetStringLength()),
                json::Value(r.value, answers.GetAllocator()), answers.GetAllocator());

  const json::Value* meta = json::find(*p, "_meta");
  Outcome outcome = drive(s, ex, parked, answers, meta ? json::find(*meta, "progressToken") : nullptr, std::move(work),
                          false);
  if (auto* done = std::get_if<upstream::Reply>(&outcome)) return relay(m, *done);
  auto& questions = std::get<std::vector<Question>>(outcome);

  // The upstream asks the client something: hand the questions out.
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("resultType", "input_required", a);
  json::Value requests(rapidjson::kObjectType);
  for (auto& q : questions) {
    json::Value r(rapidjson::kObjectType);
    r.AddMember("method", json::str(q.method, a), a);
    r.AddMember("params", json::Value(q.params, a), a);
    requests.AddMember(json::str(q.key, a), r, a);
  }
  result.AddMember("inputRequests", requests, a);
  saga::Claims claims = std::move(expect);
  claims.state.AddMember("park", json::str(parked->id, claims.state.GetAllocator()), claims.state.GetAllocator());
  claims.state.AddMember("answers", json::Value(parked->client->answers(), claims.state.GetAllocator()),
                         claims.state.GetAllocator());
  auto sealed = keys->seal(std::move(claims));
  if (!sealed) {
    parked->cancel.cancel();
    parked->client->abandon();
    return jsonrpc::make_error(m.id(), jsonrpc::kInternalError, "mcpgw: cannot suspend the call: " + sealed.error());
  }
  result.AddMember("requestState", json::str(*sealed, a), a);
  std::string error;
  park(parked, keys->ttl(), error);
  if (!error.empty()) return jsonrpc::make_error(m.id(), jsonrpc::kInternalError, error);
  return jsonrpc::make_result(m.id(), result);
}

std::string Router::call_saga(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  const json::Value* p = m.params();
  if (!p || !p->IsObject()) return invalid_params(m, "tools/callSaga needs params");
  auto name = json::get_string(*p, "name");
  if (!name) return invalid_params(m, "name must be a string");
  const json::Value* args = json::find(*p, "arguments");
  if (args && !args->IsObject() && !args->IsNull()) return invalid_params(m, "arguments must be an object");
  auto snap = catalog_.snapshot();
  auto mode = snap->mode_index(s.mode);
  const catalog::ExposedTool* tool = mode ? snap->find_tool(*name, *mode) : nullptr;
  if (!tool) return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name));
  auto arguments = std::make_shared<json::Document>(rapidjson::kObjectType);
  if (args && args->IsObject()) arguments->CopyFrom(*args, arguments->GetAllocator());
  std::shared_ptr<Parked> parked;
  const json::Value* meta = json::find(*p, "_meta");
  Outcome outcome = drive(s, ex, parked, json::Value(rapidjson::kObjectType),
                          meta ? json::find(*meta, "progressToken") : nullptr,
                          tool_work(s, snap, *mode, *tool, arguments, nullptr), true);
  return saga_reply(s, m, std::move(outcome), parked, tool->name, *arguments);
}

std::string Router::resume_saga(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  const json::Value* p = m.params();
  if (!p || !p->IsObject()) return invalid_params(m, "tools/resumeSaga needs params");
  auto token = json::get_string(*p, "sagaToken");
  if (!token) return invalid_params(m, "sagaToken must be the string of the last suspended result");
  const json::Value* steps = json::find(*p, "completedSteps");
  if (!steps || !steps->IsArray()) return invalid_params(m, "completedSteps must be an array");
  // Every step the client completed so far, by id: its result, or
  // {"error": ...} for a step that failed on the client's side.
  json::Document answers(rapidjson::kObjectType);
  auto& a = answers.GetAllocator();
  for (const auto& step : steps->GetArray()) {
    auto id = json::get_string(step, "stepId");
    const json::Value* result = json::find(step, "result");
    const json::Value* error = json::find(step, "error");
    if (!id) return invalid_params(m, "every completed step needs a stepId string");
    if ((result && error) || (!result && !error))
      return invalid_params(m, "completed step " + std::string(*id) + " needs exactly one of result and error");
    if ((result && !result->IsObject()) || (error && !error->IsObject()))
      return invalid_params(m, "completed step " + std::string(*id) + ": result or error must be an object");
    json::Value answer(rapidjson::kObjectType);
    if (result) answer.CopyFrom(*result, a);
    else answer.AddMember("error", json::Value(*error, a), a);
    json::set(answers, *id, std::move(answer), a);
  }

  std::shared_ptr<const saga::Keyring> keys = keyring();
  saga::Claims expect;
  expect.kind = "saga";
  expect.principal = s.context().principal;
  auto opened = keys->open(*token, expect);
  if (auto* r = std::get_if<saga::Refusal>(&opened))
    return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid sagaToken: " + r->message);
  const saga::Claims& c = std::get<saga::Claims>(opened);
  // Nothing runs until the whole resume is known to be acceptable.
  if (const json::Value* pending = json::find(c.state, "steps"); pending && pending->IsArray())
    for (const auto& step : pending->GetArray())
      if (step.IsString() && !json::find(answers, step.GetString()))
        return invalid_params(m, "completedSteps has no result or error for step " + std::string(step.GetString()));
  auto name = json::get_string(c.state, "tool");
  const json::Value* args = json::find(c.state, "arguments");
  if (!name || !args || !args->IsObject() || saga::digest(args) != c.args_digest)
    return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid sagaToken: it names no call");
  auto snap = catalog_.snapshot();
  auto mode = snap->mode_index(s.mode);
  const catalog::ExposedTool* tool = mode ? snap->find_tool(*name, *mode) : nullptr;
  if (!tool)
    return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams,
                               "Invalid sagaToken: its tool " + std::string(*name) + " is not available to this client");
  {
    // A token resumes once; a second resume of it is refused before it runs.
    std::lock_guard lk(resumed_mu_);
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::erase_if(resumed_, [&](const auto& e) { return e.second < now; });
    if (!resumed_.emplace(c.id, c.expires).second)
      return jsonrpc::make_error(m.id(), jsonrpc::kInvalidParams, "Invalid sagaToken: it was already resumed");
  }
  auto arguments = std::make_shared<json::Document>(json::clone(*args));
  std::shared_ptr<Parked> parked = take_parked(c.state);
  const json::Value* meta = json::find(*p, "_meta");
  Outcome outcome = drive(s, ex, parked, answers, meta ? json::find(*meta, "progressToken") : nullptr,
                          parked ? Work() : tool_work(s, snap, *mode, *tool, arguments, nullptr), true);
  return saga_reply(s, m, std::move(outcome), parked, tool->name, *arguments);
}

std::string Router::saga_reply(McpSession& s, const jsonrpc::Message& m, Outcome outcome,
                               std::shared_ptr<Parked>& parked, const std::string& tool, const json::Value& arguments) {
  if (auto* done = std::get_if<upstream::Reply>(&outcome)) return relay(m, *done);
  auto& questions = std::get<std::vector<Question>>(outcome);
  json::Document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("state", "suspended", a);
  json::Value steps(rapidjson::kArrayType);
  saga::Claims claims;
  claims.kind = "saga";
  claims.principal = s.context().principal;
  claims.target = "tools/call " + tool;
  claims.args_digest = saga::digest(&arguments);
  auto& ca = claims.state.GetAllocator();
  // Every step so far, answered or not: each resume must carry them all.
  json::Value pending(rapidjson::kArrayType);
  json::Document earlier = parked->client->answers();
  for (const auto& e : earlier.GetObject()) pending.PushBack(json::Value(e.name, ca), ca);
  for (auto& q : questions) {
    json::Value step(rapidjson::kObjectType);
    // The seed's step types, and roots for what it did not foresee.
    std::string_view type = q.method == "elicitation/create"      ? "elicitation"
                            : q.method == "sampling/createMessage" ? "sampling"
                                                                   : "roots";
    step.AddMember("type", json::str(type, a), a);
    step.AddMember("stepId", json::str(q.key, a), a);
    step.AddMember("params", json::Value(q.params, a), a);
    steps.PushBack(step, a);
    pending.PushBack(json::str(q.key, ca), ca);
  }
  claims.state.AddMember("park", json::str(parked->id, ca), ca);
  claims.state.AddMember("tool", json::str(tool, ca), ca);
  claims.state.AddMember("arguments", json::Value(arguments, ca), ca);
  claims.state.AddMember("steps", pending, ca);
  std::shared_ptr<const saga::Keyring> keys = keyring();
  auto sealed = keys->seal(std::move(claims));
  if (!sealed) {
    parked->cancel.cancel();
    parked->client->abandon();
    return jsonrpc::make_error(m.id(), jsonrpc::kInternalError, "mcpgw: cannot suspend the saga: " + sealed.error());
  }
  result.AddMember("sagaToken", json::str(*sealed, a), a);
  result.AddMember("steps", steps, a);
  std::string error;
  park(parked, keys->ttl(), error);
  if (!error.empty()) return jsonrpc::make_error(m.id(), jsonrpc::kInternalError, error);
  return jsonrpc::make_result(m.id(), result);
}

std::string Router::read_resource(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex) {
  auto uri = m.params() ? json::get_string(*m.params(), "uri") : std::nullopt;
  if (!uri) return invalid_params(m, "uri must be a string");
  auto snap = catalog_.snapshot();
  auto route = snap->route_resource(*uri);
  if (!route) {
    json::Document data(rapidjson::kObjectType);
    data.AddMember("uri", json::str(*uri, data.GetAllocator()), data.GetAllocator());
    // 2026-07-28 replaced the resource-not-found code with invalid params.
    return jsonrpc::make_error(m.id(), s.stateless ? jsonrpc::kInvalidParams : kResourceNotFound,
                               "Resource not found: " + std::string(*uri), &data);
  }
  auto p = std::make_shared<json::Document>();
  p->CopyFrom(*m.params(), p->GetAllocator());
  json::set(*p, "uri", json::str(route->upstream_key, p->GetAllocator()), p->GetAllocator());
  strip_client_state(*p);
  Work work = [snap, route = *route, p, caller = caller_of(s)](const std::shared_ptr<ClientCall>& client,
                                                                CancelSignal& cancel, const std::shared_ptr<Progress>&) {
    upstream::Reply r = route.origin->request("resources/read", *p, options_for(*route.origin, cancel, caller, client));
    // Contents name the resource as the client knows it.
    if (!r.rpc_error) {
      if (auto* contents = json::find(r.body, "contents"); contents && contents->IsArray())
        for (auto& c : contents->GetArray())
          if (auto u = json::get_string(c, "uri"))
            json::set(c, "uri", json::str(snap->expose_uri(*route.origin, *u), r.body.GetAllocator()),
                      r.body.GetAllocator());
    }
    return r;
  };
  return execute(s, m, ex, "resources/read " + std::string(*uri), nullptr, std::move(work));
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
  auto p = std::make_shared<json::Document>();
  p->CopyFrom(*m.params(), p->GetAllocator());
  json::set(*p, "name", json::str(route->upstream_key, p->GetAllocator()), p->GetAllocator());
  strip_client_state(*p);
  const json::Value* args = json::find(*m.params(), "arguments");
  Work work = [route = *route, p, caller = caller_of(s)](const std::shared_ptr<ClientCall>& client, CancelSignal& cancel,
                                                          const std::shared_ptr<Progress>&) {
    return route.origin->request("prompts/get", *p, options_for(*route.origin, cancel, caller, client));
  };
  return execute(s, m, ex, "prompts/get " + std::string(*name), args, std::move(work));
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
  return relay(m, route->origin->request("completion/complete", p, options_for(*route->origin, ex.cancel_signal(), caller, nullptr)));
}

}  // namespace mcpgw::server
