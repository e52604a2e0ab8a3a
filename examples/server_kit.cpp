#include "server_kit.hpp"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <future>
#include <iomanip>
#include <iostream>
#include <list>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "mcp/protocol.hpp"
#include "util/random.hpp"

namespace mcpgw::examples {
namespace {

using namespace std::chrono_literals;

/// How long a tool waits for the client to answer a server-to-client request
/// (sampling, elicitation): long enough for a person to answer a short form,
/// short enough that a client that never answers does not pin a thread.
constexpr auto kClientRequestTimeout = 30s;

constexpr std::array<std::string_view, 8> kLogLevels = {
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

void log_line(std::string_view what) { std::cerr << what << std::endl; }

json::Document parse_or_throw(const JsonText& text, std::string_view what) {
  auto doc = json::parse(text.text());
  if (!doc) throw std::invalid_argument(std::string(what) + ": " + doc.error());
  return std::move(*doc);
}

/// Integral numbers as JSON integers (50, not 50.0): what a client written
/// in any language reads back as the number it expects.
json::Value number(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) return json::Value(static_cast<std::int64_t>(v));
  return json::Value(v);
}

/// Runs a registered handler; a throwing one is a bug in the server, not in
/// the caller's input, hence an internal error.
template <typename F>
Outcome guarded(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::exception& e) {
    return RpcError{jsonrpc::kInternalError, std::string("Internal error: ") + e.what()};
  }
}

std::string answer(const json::Value& id, Outcome out) {
  if (auto* err = std::get_if<RpcError>(&out)) return jsonrpc::make_error(id, err->code, err->message);
  return jsonrpc::make_result(id, std::get<json::Document>(out));
}

json::Document empty_result() { return json::Document(rapidjson::kObjectType); }

/// Adds the optional descriptive members shared by resources, templates and prompts.
void add_optional(json::Value& def, const char* key, const std::string& value, json::Allocator& a) {
  if (!value.empty()) def.AddMember(json::ref(key), json::str(value, a), a);
}

}  // namespace

// ---------------------------------------------------------------------------
// Sessions

namespace detail {

/// Messages waiting for a session's standalone GET stream (HTTP only). At
/// most one stream is attached; without one, unsolicited messages are
/// dropped (the spec lets a server send them only on such a stream).
class Outbox {
 public:
  bool attach() {
    std::lock_guard lock(mutex_);
    if (attached_ || closed_) return false;
    attached_ = true;
    return true;
  }
  void detach() {
    std::lock_guard lock(mutex_);
    attached_ = false;
    queue_.clear();
  }
  bool push(std::string msg) {
    {
      std::lock_guard lock(mutex_);
      if (!attached_ || closed_) return false;
      queue_.push_back(std::move(msg));
    }
    cv_.notify_all();
    return true;
  }
  /// The next message; nullopt after `wait` without one or once closed.
  std::optional<std::string> pop(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, wait, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return std::nullopt;
    std::string msg = std::move(queue_.front());
    queue_.pop_front();
    return msg;
  }
  bool closed() {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool attached_ = false;
  bool closed_ = false;
};

/// One client session: what the protocol remembers between messages
/// (client capabilities, logging level, subscriptions, requests awaiting the
/// client's answer) and the way to reach the client outside of a call.
struct Session {
  explicit Session(std::string session_id) : id(std::move(session_id)) {}

  const std::string id;
  /// Least severe level CallContext::log sends (logging/setLevel).
  std::atomic<int> log_level{static_cast<int>(LogLevel::Debug)};
  /// Over stdio: writes an unsolicited message to stdout. Unset over HTTP,
  /// where the outbox feeds the GET stream. Set before the session is shared.
  std::function<void(std::string)> writer;
  Outbox outbox;

  bool notify(std::string msg) {
    if (writer) {
      writer(std::move(msg));
      return true;
    }
    return outbox.push(std::move(msg));
  }

  void set_client_capabilities(const json::Value& caps) {
    std::lock_guard lock(mutex_);
    capabilities_.CopyFrom(caps, capabilities_.GetAllocator());
  }
  bool client_supports(std::string_view name) {
    std::lock_guard lock(mutex_);
    const json::Value* cap = json::find(capabilities_, name);
    return cap && cap->IsObject();
  }

  void subscribe(std::string_view uri, bool on) {
    std::lock_guard lock(mutex_);
    if (on)
      subscriptions_.emplace(uri);
    else if (auto it = subscriptions_.find(uri); it != subscriptions_.end())
      subscriptions_.erase(it);
  }
  bool subscribed(std::string_view uri) {
    std::lock_guard lock(mutex_);
    return subscriptions_.find(uri) != subscriptions_.end();
  }

  /// Registers a request to the client: its id and where the answer lands.
  std::pair<std::int64_t, std::future<Result<json::Document>>> begin_request() {
    std::lock_guard lock(mutex_);
    const std::int64_t request_id = next_request_id_++;
    std::promise<Result<json::Document>> promise;
    auto future = promise.get_future();
    if (closed_)
      promise.set_value(Error{"the session has ended"});
    else
      pending_.emplace(request_id, std::move(promise));
    return {request_id, std::move(future)};
  }
  void abandon(std::int64_t request_id) {
    std::lock_guard lock(mutex_);
    pending_.erase(request_id);
  }
  /// Hands a client's response to the request waiting for it; responses to
  /// nothing we asked (or asked and gave up on) are dropped.
  void resolve(const jsonrpc::Message& response) {
    const json::Value& rid = response.id();
    if (!rid.IsInt64()) return;
    std::promise<Result<json::Document>> promise;
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(rid.GetInt64());
      if (it == pending_.end()) return;
      promise = std::move(it->second);
      pending_.erase(it);
    }
    if (const json::Value* result = response.result()) {
      promise.set_value(json::clone(*result));
      return;
    }
    const json::Value* error = response.error();
    std::string why = "the client answered with an error";
    if (error) {
      if (auto message = json::get_string(*error, "message")) why += ": " + std::string(*message);
      if (const json::Value* code = json::find(*error, "code"); code && code->IsInt())
        why += " (" + std::to_string(code->GetInt()) + ")";
    }
    promise.set_value(Error{why});
  }

  /// Ends the session: requests waiting for the client fail, the GET
  /// stream ends.
  void close(std::string_view why) {
    std::map<std::int64_t, std::promise<Result<json::Document>>> pending;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      pending.swap(pending_);
    }
    for (auto& [request_id, promise] : pending) promise.set_value(Error{std::string(why)});
    outbox.close();
  }

 private:
  std::mutex mutex_;
  json::Document capabilities_{rapidjson::kObjectType};
  std::set<std::string, std::less<>> subscriptions_;
  std::map<std::int64_t, std::promise<Result<json::Document>>> pending_;
  std::int64_t next_request_id_ = 1;
  bool closed_ = false;
};

}  // namespace detail

void Server::track(std::shared_ptr<detail::Session> session) {
  std::lock_guard lock(sessions_mutex_);
  sessions_[session->id] = std::move(session);
}

void Server::untrack(const std::string& id) {
  std::lock_guard lock(sessions_mutex_);
  sessions_.erase(id);
}

void Server::notify_resource_updated(std::string_view uri) {
  std::vector<std::shared_ptr<detail::Session>> sessions;
  {
    std::lock_guard lock(sessions_mutex_);
    for (const auto& [id, session] : sessions_) sessions.push_back(session);
  }
  json::Document params(rapidjson::kObjectType);
  params.AddMember("uri", json::str(uri, params.GetAllocator()), params.GetAllocator());
  const std::string note = jsonrpc::make_notification("notifications/resources/updated", &params);
  for (const auto& session : sessions)
    if (session->subscribed(uri)) session->notify(note);
}

// ---------------------------------------------------------------------------
// CallContext

CallContext::CallContext(detail::Session& session, Send send, const json::Value* progress_token)
    : session_(session), send_(std::move(send)) {
  if (progress_token) progress_token_.CopyFrom(*progress_token, progress_token_.GetAllocator());
}

void CallContext::progress(double progress, std::optional<double> total, std::string_view message) {
  if (!has_progress_token()) return;
  json::Document params(rapidjson::kObjectType);
  auto& a = params.GetAllocator();
  params.AddMember("progressToken", json::Value(progress_token_, a), a);
  params.AddMember("progress", number(progress), a);
  if (total) params.AddMember("total", number(*total), a);
  if (!message.empty()) params.AddMember("message", json::str(message, a), a);
  send_(jsonrpc::make_notification("notifications/progress", &params));
}

void CallContext::log(LogLevel level, std::string_view message, std::string_view logger) {
  if (static_cast<int>(level) < session_.log_level.load()) return;
  json::Document params(rapidjson::kObjectType);
  auto& a = params.GetAllocator();
  params.AddMember("level", json::ref(kLogLevels[static_cast<std::size_t>(level)]), a);
  if (!logger.empty()) params.AddMember("logger", json::str(logger, a), a);
  params.AddMember("data", json::str(message, a), a);
  send_(jsonrpc::make_notification("notifications/message", &params));
}

bool CallContext::client_supports(std::string_view name) const { return session_.client_supports(name); }

Result<json::Document> CallContext::request(std::string_view method, const json::Value& params) {
  auto [request_id, answer] = session_.begin_request();
  if (!send_(jsonrpc::make_request(request_id, method, &params))) {
    session_.abandon(request_id);
    return Error{"this transport cannot send " + std::string(method) +
                 " to the client (over HTTP it needs a POST answered as an SSE stream)"};
  }
  if (answer.wait_for(kClientRequestTimeout) != std::future_status::ready) {
    session_.abandon(request_id);
    return Error{"the client did not answer " + std::string(method) + " within " +
                 std::to_string(std::chrono::seconds(kClientRequestTimeout).count()) + " s"};
  }
  return answer.get();
}

// ---------------------------------------------------------------------------
// Result and argument helpers

void set_json(json::Document& result, std::string_view key, std::string_view json_text) {
  json::Document value = parse_or_throw(std::string(json_text), key);
  json::set(result, key, json::Value(value, result.GetAllocator()), result.GetAllocator());
}

json::Document parse_json(std::string_view json_text) {
  return parse_or_throw(std::string(json_text), "JSON text");
}

std::optional<double> get_number(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

std::optional<std::int64_t> get_int(const json::Value& args, std::string_view key) {
  const json::Value* v = json::find(args, key);
  if (!v || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::optional<TemplateVars> match_uri_template(std::string_view uri_template, std::string_view uri) {
  TemplateVars vars;
  std::size_t t = 0;
  std::size_t u = 0;
  while (t < uri_template.size()) {
    if (uri_template[t] != '{') {
      if (u >= uri.size() || uri[u] != uri_template[t]) return std::nullopt;
      ++t;
      ++u;
      continue;
    }
    const std::size_t close = uri_template.find('}', t);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view name = uri_template.substr(t + 1, close - t - 1);
    t = close + 1;
    // The value runs to the next literal character of the template (or the
    // end) and never spans a path segment.
    const char stop = t < uri_template.size() ? uri_template[t] : '/';
    std::size_t end = u;
    while (end < uri.size() && uri[end] != '/' && uri[end] != stop) ++end;
    if (end == u) return std::nullopt;
    vars.emplace(name, uri.substr(u, end - u));
    u = end;
  }
  if (u != uri.size()) return std::nullopt;
  return vars;
}

// ---------------------------------------------------------------------------
// Registration

Server::Server(std::string name, std::string version)
    : name_(std::move(name)), version_(std::move(version)) {}

Server::~Server() = default;

void Server::add_tool(ToolSpec spec) {
  for (const Tool& t : tools_)
    if (t.name == spec.name) throw std::invalid_argument("duplicate tool: " + spec.name);
  if (static_cast<bool>(spec.handler) == static_cast<bool>(spec.context_handler))
    throw std::invalid_argument("tool " + spec.name + ": give exactly one of handler and context_handler");

  // Built once here, so tools/list only copies and a typo in a schema fails
  // at startup rather than on the first list.
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  if (!spec.title.empty()) def.AddMember("title", json::str(spec.title, a), a);
  if (!spec.description.empty()) def.AddMember("description", json::str(spec.description, a), a);
  const std::pair<const char*, const JsonText*> fragments[] = {
      {"inputSchema", &spec.input_schema},
      {"outputSchema", &spec.output_schema},
      {"annotations", &spec.annotations},
      {"_meta", &spec.meta},
  };
  for (const auto& [key, text] : fragments) {
    if (text->empty()) continue;
    json::Document frag = parse_or_throw(*text, spec.name + "." + key);
    def.AddMember(json::ref(key), json::Value(frag, a), a);
  }
  tools_.push_back({std::move(spec.name), std::move(def), std::move(spec.handler),
                    std::move(spec.context_handler)});
}

void Server::add_resource(ResourceSpec spec) {
  for (const Resource& r : resources_)
    if (r.spec.uri == spec.uri) throw std::invalid_argument("duplicate resource: " + spec.uri);
  if (!spec.read) throw std::invalid_argument("resource " + spec.uri + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uri", json::str(spec.uri, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  resources_.push_back({std::move(spec), std::move(def)});
}

void Server::add_resource_template(ResourceTemplateSpec spec) {
  for (const ResourceTemplate& t : templates_)
    if (t.spec.uri_template == spec.uri_template)
      throw std::invalid_argument("duplicate resource template: " + spec.uri_template);
  if (!spec.read) throw std::invalid_argument("resource template " + spec.uri_template + " has no reader");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("uriTemplate", json::str(spec.uri_template, a), a);
  def.AddMember("name", json::str(spec.name.empty() ? spec.uri_template : spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  add_optional(def, "mimeType", spec.mime_type, a);
  templates_.push_back({std::move(spec), std::move(def)});
}

void Server::add_prompt(PromptSpec spec) {
  for (const Prompt& p : prompts_)
    if (p.spec.name == spec.name) throw std::invalid_argument("duplicate prompt: " + spec.name);
  if (!spec.get) throw std::invalid_argument("prompt " + spec.name + " has no handler");
  json::Document def(rapidjson::kObjectType);
  auto& a = def.GetAllocator();
  def.AddMember("name", json::str(spec.name, a), a);
  add_optional(def, "title", spec.title, a);
  add_optional(def, "description", spec.description, a);
  if (!spec.arguments.empty()) {
    json::Value args(rapidjson::kArrayType);
    for (const PromptArgument& arg : spec.arguments) {
      json::Value v(rapidjson::kObjectType);
      v.AddMember("name", json::str(arg.name, a), a);
      add_optional(v, "description", arg.description, a);
      v.AddMember("required", arg.required, a);
      args.PushBack(v, a);
    }
    def.AddMember("arguments", args, a);
  }
  prompts_.push_back({std::move(spec), std::move(def)});
}

void Server::set_completion_handler(CompletionHandler handler) { completion_ = std::move(handler); }

// ---------------------------------------------------------------------------
// Protocol

std::optional<std::string> Server::dispatch(const jsonrpc::Message& msg, detail::Session& session,
                                            const CallContext::Send& send) {
  if (msg.is_response()) {
    session.resolve(msg);
    return std::nullopt;
  }
  // Notifications (notifications/initialized, cancellations) need no action.
  if (!msg.is_request()) return std::nullopt;

  const std::string_view method = msg.method();
  const json::Value* params = msg.params();
  auto list = [&](const char* key, const auto& items) {
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    json::Value array(rapidjson::kArrayType);
    for (const auto& item : items) array.PushBack(json::Value(item.definition, a), a);
    r.AddMember(json::ref(key), array, a);
    return jsonrpc::make_result(msg.id(), r);
  };

  if (method == "initialize") return initialize(msg, session);
  if (method == "ping") return jsonrpc::make_result(msg.id(), json::Value(rapidjson::kObjectType));
  if (method == "tools/list") return list_tools(msg);
  if (method == "tools/call") return answer(msg.id(), call(params, session, send));
  if (!resources_.empty() || !templates_.empty()) {
    if (method == "resources/list") return list("resources", resources_);
    if (method == "resources/templates/list") return list("resourceTemplates", templates_);
    if (method == "resources/read") return answer(msg.id(), read_resource(params));
    if (subscriptions_ && method == "resources/subscribe") return answer(msg.id(), subscribe(params, session, true));
    if (subscriptions_ && method == "resources/unsubscribe")
      return answer(msg.id(), subscribe(params, session, false));
  }
  if (!prompts_.empty()) {
    if (method == "prompts/list") return list("prompts", prompts_);
    if (method == "prompts/get") return answer(msg.id(), get_prompt(params));
  }
  if (completion_ && method == "completion/complete") return answer(msg.id(), complete(params));
  if (logging_ && method == "logging/setLevel") return answer(msg.id(), set_log_level(params, session));
  return jsonrpc::make_error(msg.id(), jsonrpc::kMethodNotFound,
                             "Method not found: " + std::string(method));
}

bool Server::talks_during_call(const jsonrpc::Message& msg) const {
  if (!msg.is_request() || msg.method() != "tools/call" || !msg.params()) return false;
  auto name = json::get_string(*msg.params(), "name");
  return name && std::any_of(tools_.begin(), tools_.end(), [&](const Tool& t) {
           return t.name == *name && t.context_handler;
         });
}

std::string Server::initialize(const jsonrpc::Message& msg, detail::Session& session) {
  std::string_view requested;
  if (const json::Value* p = msg.params()) {
    requested = json::get_string(*p, "protocolVersion").value_or("");
    if (const json::Value* caps = json::find(*p, "capabilities")) session.set_client_capabilities(*caps);
  }

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(mcp::negotiate(requested), a), a);
  json::Value caps(rapidjson::kObjectType);
  // Only what this server actually answers: a client (or gateway) decides
  // from the capabilities which methods to try.
  json::Value tools(rapidjson::kObjectType);
  tools.AddMember("listChanged", true, a);
  caps.AddMember("tools", tools, a);
  if (!resources_.empty() || !templates_.empty()) {
    json::Value resources(rapidjson::kObjectType);
    resources.AddMember("subscribe", subscriptions_, a);
    resources.AddMember("listChanged", true, a);
    caps.AddMember("resources", resources, a);
  }
  if (!prompts_.empty()) {
    json::Value prompts(rapidjson::kObjectType);
    prompts.AddMember("listChanged", true, a);
    caps.AddMember("prompts", prompts, a);
  }
  if (completion_) caps.AddMember("completions", json::Value(rapidjson::kObjectType), a);
  if (logging_) caps.AddMember("logging", json::Value(rapidjson::kObjectType), a);
  r.AddMember("capabilities", caps, a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", json::str(name_, a), a);
  info.AddMember("version", json::str(version_, a), a);
  r.AddMember("serverInfo", info, a);
  return jsonrpc::make_result(msg.id(), r);
}

std::string Server::list_tools(const jsonrpc::Message& msg) {
  std::size_t offset = 0;
  if (const json::Value* p = msg.params(); p && json::find(*p, "cursor")) {
    auto cursor = json::get_string(*p, "cursor");
    auto decoded = cursor ? mcp::decode_cursor(*cursor) : std::nullopt;
    if (!decoded || *decoded > tools_.size())
      return jsonrpc::make_error(msg.id(), jsonrpc::kInvalidParams, "Invalid cursor");
    offset = *decoded;
  }
  const std::size_t end =
      page_size_ == 0 ? tools_.size() : std::min(tools_.size(), offset + page_size_);

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (std::size_t i = offset; i < end; ++i) list.PushBack(json::Value(tools_[i].definition, a), a);
  r.AddMember("tools", list, a);
  if (end < tools_.size()) r.AddMember("nextCursor", json::str(mcp::encode_cursor(end), a), a);
  return jsonrpc::make_result(msg.id(), r);
}

ToolOutcome Server::call(const json::Value* params, detail::Session& session, const CallContext::Send& send) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing tool name"};
  auto tool = std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.name == *name; });
  if (tool == tools_.end()) return RpcError{jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name)};

  const json::Value empty(rapidjson::kObjectType);
  const json::Value* args = json::find(*params, "arguments");
  if (!args) args = &empty;
  if (!args->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
  if (tool->handler) return guarded([&] { return tool->handler(*args); });

  const json::Value* meta = json::find(*params, "_meta");
  const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr;
  CallContext ctx(session, send, token);
  return guarded([&] { return tool->context_handler(*args, ctx); });
}

bool Server::known_resource(std::string_view uri) const {
  return std::any_of(resources_.begin(), resources_.end(), [&](const Resource& r) { return r.spec.uri == uri; }) ||
         std::any_of(templates_.begin(), templates_.end(), [&](const ResourceTemplate& t) {
           return match_uri_template(t.spec.uri_template, uri).has_value();
         });
}

Outcome Server::read_resource(const json::Value* params) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  for (const Resource& r : resources_)
    if (r.spec.uri == *uri) return guarded([&] { return r.spec.read(*uri); });
  for (const ResourceTemplate& t : templates_)
    if (auto vars = match_uri_template(t.spec.uri_template, *uri))
      return guarded([&] { return t.spec.read(*uri, *vars); });
  return RpcError{kResourceNotFound, "Resource not found: " + std::string(*uri)};
}

Outcome Server::subscribe(const json::Value* params, detail::Session& session, bool on) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  // Unsubscribing from anything is harmless; subscribing to nothing is a
  // mistake the client should hear about.
  if (on && !known_resource(*uri)) return RpcError{kResourceNotFound, "Resource not found: " + std::string(*uri)};
  session.subscribe(*uri, on);
  return empty_result();
}

Outcome Server::get_prompt(const json::Value* params) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing prompt name"};
  auto prompt = std::find_if(prompts_.begin(), prompts_.end(), [&](const Prompt& p) { return p.spec.name == *name; });
  if (prompt == prompts_.end()) return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(*name)};

  PromptArgs args;
  if (const json::Value* given = json::find(*params, "arguments"); given && !given->IsNull()) {
    if (!given->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
    for (const auto& m : given->GetObject()) {
      if (!m.value.IsString())
        return RpcError{jsonrpc::kInvalidParams,
                        "Prompt argument " + std::string(m.name.GetString()) + " must be a string"};
      args.emplace(m.name.GetString(), std::string(m.value.GetString(), m.value.GetStringLength()));
    }
  }
  for (const PromptArgument& arg : prompt->spec.arguments)
    if (arg.required && !args.count(arg.name))
      return RpcError{jsonrpc::kInvalidParams, "Missing required argument: " + arg.name};
  return guarded([&] { return prompt->spec.get(args); });
}

Outcome Server::complete(const json::Value* params) {
  const json::Value* ref = params ? json::find(*params, "ref") : nullptr;
  const json::Value* argument = params ? json::find(*params, "argument") : nullptr;
  auto type = ref ? json::get_string(*ref, "type") : std::nullopt;
  auto arg_name = argument ? json::get_string(*argument, "name") : std::nullopt;
  auto arg_value = argument ? json::get_string(*argument, "value") : std::nullopt;
  if (!type || !arg_name || !arg_value)
    return RpcError{jsonrpc::kInvalidParams, "completion/complete needs ref.type, argument.name and argument.value"};
  if (*type == "ref/prompt") {
    auto name = json::get_string(*ref, "name").value_or("");
    if (std::none_of(prompts_.begin(), prompts_.end(), [&](const Prompt& p) { return p.spec.name == name; }))
      return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(name)};
  } else if (*type == "ref/resource") {
    auto uri = json::get_string(*ref, "uri").value_or("");
    if (std::none_of(templates_.begin(), templates_.end(),
                     [&](const ResourceTemplate& t) { return t.spec.uri_template == uri; }) &&
        !known_resource(uri))
      return RpcError{jsonrpc::kInvalidParams, "Unknown resource or template: " + std::string(uri)};
  } else {
    return RpcError{jsonrpc::kInvalidParams, "Unknown ref type: " + std::string(*type)};
  }

  return guarded([&]() -> Outcome {
    std::vector<std::string> values = completion_(*ref, *arg_name, *arg_value);
    // The spec caps a response at 100 values; hasMore tells the client there
    // are others.
    constexpr std::size_t kMaxValues = 100;
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    json::Value list(rapidjson::kArrayType);
    for (std::size_t i = 0; i < values.size() && i < kMaxValues; ++i) list.PushBack(json::str(values[i], a), a);
    json::Value completion(rapidjson::kObjectType);
    completion.AddMember("values", list, a);
    completion.AddMember("total", static_cast<std::uint64_t>(values.size()), a);
    completion.AddMember("hasMore", values.size() > kMaxValues, a);
    r.AddMember("completion", completion, a);
    return r;
  });
}

Outcome Server::set_log_level(const json::Value* params, detail::Session& session) {
  auto level = params ? json::get_string(*params, "level") : std::nullopt;
  auto it = level ? std::find(kLogLevels.begin(), kLogLevels.end(), *level) : kLogLevels.end();
  if (it == kLogLevels.end())
    return RpcError{jsonrpc::kInvalidParams, "level must be one of debug, info, notice, warning, error, "
                                             "critical, alert, emergency"};
  session.log_level = static_cast<int>(it - kLogLevels.begin());
  return empty_result();
}

// ---------------------------------------------------------------------------
// stdio transport

void Server::write_line(std::string_view line) {
  std::lock_guard lock(stdout_mutex_);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Server::write_raw_line(std::string_view line) {
  if (stdio_) write_line(line);
}

int Server::serve_stdio() {
  stdio_ = true;
  // One client, one session for the whole process.
  auto session = std::make_shared<detail::Session>("stdio");
  session->writer = [this](std::string msg) { write_line(msg); };
  track(session);
  const CallContext::Send send = [this](std::string msg) {
    write_line(msg);
    return true;
  };
  std::jthread background;
  if (background_) background = std::jthread(background_);

  // One thread per request, so a slow call (sleep, or one waiting for the
  // client's answer, which this loop must read) never holds up the others.
  // std::list keeps each entry in place, so a thread can flag its own entry.
  struct Worker {
    std::atomic<bool> done{false};
    std::thread thread;
  };
  std::list<Worker> workers;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (all || it->done) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    reap(false);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jsonrpc::Parsed parsed = jsonrpc::parse(line);
    if (parsed.batch) {
      write_line(jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest,
                                     "Invalid Request: batches are not supported"));
      continue;
    }
    for (const std::string& err : parsed.errors) write_line(err);
    for (jsonrpc::Message& msg : parsed.messages) {
      // Initialize runs here, before anything read after it: the session's
      // client capabilities must be known before a call asks about them.
      if (!msg.is_request() || msg.method() == "initialize") {
        if (auto reply = dispatch(msg, *session, send)) write_line(*reply);
        continue;
      }
      Worker& w = workers.emplace_back();
      w.thread = std::thread([this, &w, &session, &send, m = std::move(msg)] {
        if (auto reply = dispatch(m, *session, send)) write_line(*reply);
        w.done = true;
      });
    }
  }
  // No more answers can arrive: calls waiting for one give up now.
  session->close("the client closed stdin");
  reap(true);
  untrack(session->id);
  return 0;
}

// ---------------------------------------------------------------------------
// Streamable HTTP transport

namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kEventStream = "text/event-stream";
/// Comment line on an idle GET stream, so proxies and clients see it alive.
constexpr std::string_view kHeartbeat = ": ping\n\n";
constexpr auto kHeartbeatInterval = 15s;

std::string sse_event(std::string_view data) {
  std::string frame = "event: message\ndata: ";
  frame.append(data);
  frame.append("\n\n");
  return frame;
}

void reply_error(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), kJson);
}

void reply_status(httplib::Response& res, int status, std::string_view why) {
  reply_error(res, status,
              jsonrpc::make_error(json::Value(), jsonrpc::kInvalidRequest, std::string(why)));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// True for "localhost", "127.0.0.1" and "[::1]", with or without a port.
bool is_loopback_authority(std::string_view authority) {
  std::string host = lower(authority);
  if (host.starts_with('[')) {
    const std::size_t end = host.find(']');
    if (end == std::string::npos) return false;
    host.resize(end + 1);
  } else if (const std::size_t colon = host.rfind(':'); colon != std::string::npos) {
    host.resize(colon);
  }
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

/// DNS-rebinding protection (spec: transports, "Security Warning"): this
/// server listens on loopback only, so a Host or Origin naming another host
/// means a web page reached it through a name rebound to 127.0.0.1. Empty
/// when the request may proceed, else why not.
std::string foreign_host_or_origin(const httplib::Request& req) {
  if (req.has_header("Host") && !is_loopback_authority(req.get_header_value("Host")))
    return "Forbidden: Host " + req.get_header_value("Host") + " is not a loopback name";
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    const std::size_t scheme = origin.find("://");
    const std::string authority =
        scheme == std::string::npos ? std::string() : origin.substr(scheme + 3, origin.find('/', scheme + 3) - scheme - 3);
    if (!is_loopback_authority(authority)) return "Forbidden: Origin " + origin + " is not a loopback origin";
  }
  return {};
}

/// Whether the client takes an SSE stream as the answer to a POST; a client
/// that sends no Accept header is assumed to take anything.
bool accepts_event_stream(const httplib::Request& req) {
  if (!req.has_header("Accept")) return true;
  const std::string accept = lower(req.get_header_value("Accept"));
  return accept.find(kEventStream) != std::string::npos || accept.find("*/*") != std::string::npos;
}

/// The answer to one POST whose call talks to the client: what the call
/// sends on the way, then its response, handed from the worker thread that
/// runs the call to the HTTP thread that writes them out.
class PostExchange {
 public:
  explicit PostExchange(bool can_stream) : can_stream_(can_stream) {}

  /// Queues a message for the stream; false when there will be no stream
  /// (the client does not accept one, or has gone away).
  bool send(std::string msg) {
    {
      std::lock_guard lock(mutex_);
      if (!can_stream_ || abandoned_) return false;
      events_.emplace_back(std::move(msg), false);
    }
    cv_.notify_all();
    return true;
  }
  void finish(std::string response) {
    {
      std::lock_guard lock(mutex_);
      events_.emplace_back(std::move(response), true);
    }
    cv_.notify_all();
  }
  /// Waits for the first message; true when it is the response, which then
  /// goes out as plain JSON.
  bool first_is_response() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !events_.empty(); });
    return events_.front().second;
  }
  /// The next message, waiting for it; `.second` marks the response.
  std::pair<std::string, bool> next() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !events_.empty(); });
    auto event = std::move(events_.front());
    events_.pop_front();
    return event;
  }
  /// The client went away: what the call sends from now on goes nowhere.
  void abandon() {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, bool>> events_;
  const bool can_stream_;
  bool abandoned_ = false;
};

}  // namespace

int Server::serve_http(int port) {
  // Block the stop signals before httplib starts its threads, so they all
  // inherit the mask and only the sigwait below ever receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The session named by the request, or the status to answer with: 400
  // without an id (spec 2025-06-18, "Session Management"), 404 for an
  // unknown or ended one, which tells the client to initialize again.
  auto find_session = [&](const httplib::Request& req, int& status) -> std::shared_ptr<detail::Session> {
    if (!req.has_header("Mcp-Session-Id")) {
      status = 400;
      return nullptr;
    }
    std::lock_guard lock(sessions_mutex_);
    auto it = sessions_.find(req.get_header_value("Mcp-Session-Id"));
    if (it == sessions_.end()) {
      status = 404;
      return nullptr;
    }
    return it->second;
  };
  auto reply_session_status = [](httplib::Response& res, int status) {
    reply_status(res, status, status == 400 ? "Missing Mcp-Session-Id" : "Unknown session");
  };
  const CallContext::Send no_stream = [](std::string) { return false; };

  httplib::Server http;
  // httplib takes ownership of the raw pointer (its API demands one). Each
  // keep-alive connection occupies a worker, and slow calls must not starve
  // the others, so the pool is well above the default.
  http.new_task_queue = [] { return new httplib::ThreadPool(64); };
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(10000);

  http.Post("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    if (std::string why = foreign_host_or_origin(req); !why.empty()) return reply_status(res, 403, why);
    if (auto v = req.get_header_value("MCP-Protocol-Version"); !v.empty() && !mcp::is_supported(v))
      return reply_status(res, 400, "Unsupported MCP-Protocol-Version: " + v);
    jsonrpc::Parsed parsed = jsonrpc::parse(req.body);
    if (parsed.batch) return reply_status(res, 400, "Invalid Request: batches are not supported");
    if (parsed.messages.empty()) return reply_error(res, 400, parsed.errors.front());

    jsonrpc::Message msg = std::move(parsed.messages.front());
    if (msg.is_request() && msg.method() == "initialize") {
      auto session = std::make_shared<detail::Session>(random_hex(16));
      res.set_header("Mcp-Session-Id", session->id);
      res.set_content(*dispatch(msg, *session, no_stream), kJson);
      track(std::move(session));
      return;
    }
    int status = 0;
    std::shared_ptr<detail::Session> session = find_session(req, status);
    if (!session) return reply_session_status(res, status);
    if (!talks_during_call(msg)) {
      if (auto reply = dispatch(msg, *session, no_stream))
        res.set_content(*reply, kJson);
      else
        res.status = 202;  // a notification, or the client's answer to our request
      return;
    }

    // A call that may talk to the client runs on its own thread while this
    // one streams what it sends; a call that sends nothing is answered with
    // plain JSON like any other.
    auto exchange = std::make_shared<PostExchange>(accepts_event_stream(req));
    auto worker = std::make_shared<std::jthread>([this, exchange, session, m = std::move(msg)] {
      auto send = [exchange](std::string out) { return exchange->send(std::move(out)); };
      exchange->finish(*dispatch(m, *session, send));
    });
    if (exchange->first_is_response()) {
      worker->join();
      res.set_content(exchange->next().first, kJson);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    // The provider owns the worker: the last copy of it joins the thread once
    // the stream is done (the call always finishes: client requests time out).
    res.set_chunked_content_provider(kEventStream, [exchange, worker](std::size_t, httplib::DataSink& sink) {
      for (;;) {
        auto [msg, is_response] = exchange->next();
        const std::string frame = sse_event(msg);
        if (!sink.write(frame.data(), frame.size())) {
          exchange->abandon();
          return false;
        }
        if (is_response) {
          sink.done();
          return true;
        }
      }
    });
  });

  http.Delete("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    if (std::string why = foreign_host_or_origin(req); !why.empty()) return reply_status(res, 403, why);
    int status = 0;
    std::shared_ptr<detail::Session> session = find_session(req, status);
    if (!session) {
      res.status = status;
      return;
    }
    untrack(session->id);
    session->close("the client ended the session");
    res.status = 200;
  });

  http.Get("/mcp", [&](const httplib::Request& req, httplib::Response& res) {
    // Without subscriptions nothing is ever sent outside a call, so there is
    // no standalone SSE stream (spec: 405).
    if (!subscriptions_) {
      res.status = 405;
      res.set_header("Allow", "POST, DELETE");
      return;
    }
    if (std::string why = foreign_host_or_origin(req); !why.empty()) return reply_status(res, 403, why);
    int status = 0;
    std::shared_ptr<detail::Session> session = find_session(req, status);
    if (!session) return reply_session_status(res, status);
    if (!session->outbox.attach())
      return reply_status(res, 409, "Conflict: this session already has a GET stream open");
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        kEventStream,
        [session](std::size_t, httplib::DataSink& sink) {
          for (;;) {
            auto msg = session->outbox.pop(kHeartbeatInterval);
            if (!msg && session->outbox.closed()) {
              sink.done();
              return true;
            }
            const std::string frame = msg ? sse_event(*msg) : std::string(kHeartbeat);
            if (!sink.write(frame.data(), frame.size())) return false;
          }
        },
        [session](bool) { session->outbox.detach(); });
  });

  const int bound = port == 0 ? http.bind_to_any_port("127.0.0.1")
                              : (http.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound < 0) {
    log_line("cannot bind 127.0.0.1:" + std::to_string(port));
    return 1;
  }
  std::printf("listening http://127.0.0.1:%d/mcp\n", bound);
  std::fflush(stdout);

  std::jthread background;
  if (background_) background = std::jthread(background_);

  std::atomic<bool> listening_done{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // Ending the sessions ends their GET streams and wakes calls waiting for
    // a client's answer, so the in-flight handlers that stop() waits for
    // finish promptly.
    {
      std::lock_guard lock(sessions_mutex_);
      for (const auto& [id, session] : sessions_) session->close("the server is shutting down");
    }
    // stop() is a no-op until listen has started, so retry until it returns.
    while (!listening_done) {
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  // Returns after stop(), once in-flight handlers have finished.
  const bool ok = http.listen_after_bind();
  listening_done = true;
  if (!ok) pthread_kill(stopper.native_handle(), SIGTERM);  // wake sigwait
  stopper.join();
  return 0;
}

// ---------------------------------------------------------------------------
// Command line

int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra) {
  const std::string prog = argc > 0 ? argv[0] : "server";
  auto usage = [&](std::ostream& out) {
    auto row = [&](const std::string& left, std::string_view help) {
      out << "  " << std::left << std::setw(20) << left << help << "\n";
    };
    out << "usage: " << prog << " [--http PORT]";
    for (const Flag& f : extra) out << " [" << f.name << " VALUE]";
    out << "\n";
    row("(default)", "serve MCP over stdin/stdout");
    row("--http PORT", "serve Streamable HTTP on 127.0.0.1:PORT/mcp (0 = any free port)");
    for (const Flag& f : extra) row(f.name + " VALUE", f.help);
  };
  auto fail = [&](const std::string& why) {
    std::cerr << prog << ": " << why << "\n";
    usage(std::cerr);
    return 2;
  };

  // A client that goes away mid-reply must not kill the server with SIGPIPE;
  // the failed write is enough.
  signal(SIGPIPE, SIG_IGN);

  std::optional<int> http_port;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(std::cout);
      return 0;
    }
    if (i + 1 >= argc) return fail("missing value for " + std::string(flag));
    const std::string_view value = argv[++i];
    if (flag == "--http") {
      int port = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
      if (ec != std::errc() || p != value.data() + value.size() || port < 0 || port > 65535)
        return fail("invalid port: " + std::string(value));
      http_port = port;
      continue;
    }
    auto f = std::find_if(extra.begin(), extra.end(), [&](const Flag& e) { return e.name == flag; });
    if (f == extra.end()) return fail("unknown flag: " + std::string(flag));
    try {
      if (!f->apply(value)) return fail("invalid value for " + f->name + ": " + std::string(value));
    } catch (const std::exception& e) {  // e.g. a flag that adds a tool twice
      return fail(e.what());
    }
  }
  return http_port ? server.serve_http(*http_port) : server.serve_stdio();
}

}  // namespace mcpgw::examples
