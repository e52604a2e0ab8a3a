// The kit's core: dispatching a message to the MCP methods both eras share
// (and the stateful era's own), the notification fan-out to sessions and
// listen streams, and the command line. The transports (kit_stdio.cpp,
// kit_http.cpp) and the stateless era's envelope (kit_stateless.cpp) lead
// here; the file list is in kit_internal.hpp.
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <iomanip>
#include <iostream>
#include <set>
#include <stdexcept>
#include <utility>

#include "kit_internal.hpp"
#include "mcp/protocol.hpp"

namespace mcpgw::examples {

void detail::log_line(std::string_view what) { std::cerr << what << std::endl; }

json::Document detail::parse_or_throw(const JsonText& text, std::string_view what) {
  auto doc = json::parse(text.text());
  if (!doc) throw std::invalid_argument(std::string(what) + ": " + doc.error());
  return std::move(*doc);
}

std::string detail::answer(const jsonrpc::Id& id, Outcome out) {
  if (auto* err = std::get_if<RpcError>(&out)) {
    if (err->data.empty()) return jsonrpc::make_error(id, err->code, err->message);
    auto data = json::parse(err->data.text());
    if (data) return jsonrpc::make_error(id, err->code, err->message, &*data);
    // A handler's bug; the error itself still tells the client what failed.
    log_line("dropping the malformed data of error " + std::to_string(err->code) + ": " + data.error());
    return jsonrpc::make_error(id, err->code, err->message);
  }
  return jsonrpc::make_result(id, std::get<json::Document>(out));
}

std::string detail::no_initialize(const jsonrpc::Id& id) {
  return jsonrpc::make_error(id, jsonrpc::kMethodNotFound,
                             "Method not found: initialize (protocol 2026-07-28 has none; use server/discover)");
}

namespace {

using detail::answer;
using detail::kLogLevels;

/// Runs a registered handler; a throwing one is a bug in the server, not in
/// the caller's input, hence an internal error. Only std::exception is
/// caught: the stateless era's unwinding (detail::InputRequired) passes.
template <typename F>
Outcome guarded(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::exception& e) {
    return RpcError{jsonrpc::kInternalError, std::string("Internal error: ") + e.what()};
  }
}

json::Document empty_result() { return json::Document(rapidjson::kObjectType); }

}  // namespace

void Server::track(std::shared_ptr<detail::Session> session) {
  util::MutexLock lock(sessions_mutex_);
  sessions_[session->id] = std::move(session);
}

void Server::untrack(const std::string& id) {
  util::MutexLock lock(sessions_mutex_);
  sessions_.erase(id);
}

std::vector<std::shared_ptr<detail::Session>> Server::sessions() {
  util::MutexLock lock(sessions_mutex_);
  std::vector<std::shared_ptr<detail::Session>> out;
  for (const auto& [id, session] : sessions_) out.push_back(session);
  return out;
}

std::vector<std::shared_ptr<Server::Listener>> Server::listeners() {
  util::MutexLock lock(listeners_mutex_);
  return listeners_;
}

void Server::notify_resource_updated(std::string_view uri) {
  json::Document params(rapidjson::kObjectType);
  params.AddMember("uri", json::str(uri, params.GetAllocator()), params.GetAllocator());
  const std::string note = jsonrpc::make_notification("notifications/resources/updated", &params);
  for (const auto& session : sessions())
    if (session->subscribed(uri)) session->notify(note);
  for (const auto& listener : listeners())
    if (listener->uris.count(uri)) listener->notify("notifications/resources/updated", &params);
}

void Server::notify_list_changed(ListKind list) {
  const std::string_view method = list == ListKind::Tools     ? "notifications/tools/list_changed"
                                  : list == ListKind::Prompts ? "notifications/prompts/list_changed"
                                                              : "notifications/resources/list_changed";
  const std::string note = jsonrpc::make_notification(method, nullptr);
  for (const auto& session : sessions()) session->notify(note);
  for (const auto& listener : listeners())
    if (listener->wants(list)) listener->notify(method, nullptr);
}

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
  return answer(msg.id(), handle(msg, &session, nullptr, send));
}

Outcome Server::handle(const jsonrpc::Message& msg, detail::Session* session, detail::Stateless* stateless,
                       const CallContext::Send& send) {
  const std::string_view method = msg.method();
  const json::Value* params = msg.params();
  auto list = [](const char* key, const auto& items) -> Outcome {
    json::Document r(rapidjson::kObjectType);
    auto& a = r.GetAllocator();
    json::Value array(rapidjson::kArrayType);
    for (const auto& item : items) array.PushBack(json::copy(item.definition, a), a);
    r.AddMember(json::ref(key), array, a);
    return r;
  };
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  const json::Value* token = meta ? json::find(*meta, "progressToken") : nullptr;

  // The methods only one era has: the stateless era dropped the session
  // handshake, ping, the session's log level and resources/subscribe.
  if (session) {
    if (method == "initialize") return initialize(params, *session);
    if (method == "ping") return empty_result();
    if (subscriptions_ && has_resources() && (method == "resources/subscribe" || method == "resources/unsubscribe"))
      return subscribe(params, *session, method == "resources/subscribe");
    if (logging_ && method == "logging/setLevel") return set_log_level(params, *session);
  } else if (method == "server/discover") {
    return discover();
  }

  if (method == "tools/list") return list_tools(params);
  if (method == "tools/call") {
    CallContext ctx(send, token, session, stateless);
    return call(params, ctx);
  }
  if (has_resources()) {
    if (method == "resources/list") return list("resources", resources_);
    if (method == "resources/templates/list") return list("resourceTemplates", templates_);
    if (method == "resources/read") return read_resource(params, stateless != nullptr);
  }
  if (has_prompts()) {
    if (method == "prompts/list") return list_prompts();
    if (method == "prompts/get") {
      CallContext ctx(send, token, session, stateless);
      return get_prompt(params, ctx);
    }
  }
  if (completion_ && method == "completion/complete") return complete(params);
  if (auto m = methods_.find(method); m != methods_.end()) return m->second(params, stateless != nullptr);
  return RpcError{jsonrpc::kMethodNotFound, "Method not found: " + std::string(method)};
}

void Server::set_extension(std::string id, JsonText settings) {
  auto parsed = json::parse(settings.text());
  if (!parsed || !parsed->IsObject())
    throw std::invalid_argument("extension " + id + ": settings must be a JSON object");
  extensions_.emplace_back(std::move(id), settings.text());
}

void Server::add_method(std::string method, MethodHandler handler) {
  static const std::set<std::string_view> kOwn = {
      "initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
      "resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
      "completion/complete", "logging/setLevel", "subscriptions/listen"};
  if (kOwn.count(method) || methods_.count(method) || !handler)
    throw std::invalid_argument("add_method: " + method + " is answered already, or has no handler");
  methods_.emplace(std::move(method), std::move(handler));
}

bool Server::talks_during_call(const jsonrpc::Message& msg) const {
  if (!msg.is_request() || !msg.params()) return false;
  auto name = json::get_string(*msg.params(), "name");
  if (!name) return false;
  if (msg.method() == "tools/call") {
    auto tool = find_tool(*name);
    return tool && tool->context_handler;
  }
  if (msg.method() == "prompts/get") {
    auto prompt = find_prompt(*name);
    return prompt && prompt->spec.context_get;
  }
  return false;
}

json::Value Server::capabilities(json::Allocator& a) const {
  // Only what this server actually answers: a client (or gateway) decides
  // from the capabilities which methods to try.
  json::Value caps(rapidjson::kObjectType);
  json::Value tools(rapidjson::kObjectType);
  tools.AddMember("listChanged", true, a);
  caps.AddMember("tools", tools, a);
  if (has_resources()) {
    json::Value resources(rapidjson::kObjectType);
    resources.AddMember("subscribe", subscriptions_, a);
    resources.AddMember("listChanged", true, a);
    caps.AddMember("resources", resources, a);
  }
  if (has_prompts()) {
    json::Value prompts(rapidjson::kObjectType);
    prompts.AddMember("listChanged", true, a);
    caps.AddMember("prompts", prompts, a);
  }
  if (completion_) caps.AddMember("completions", json::Value(rapidjson::kObjectType), a);
  if (logging_) caps.AddMember("logging", json::Value(rapidjson::kObjectType), a);
  if (!extensions_.empty()) {
    json::Value ext(rapidjson::kObjectType);
    for (const auto& [id, settings] : extensions_) ext.AddMember(json::str(id, a), json::copy(*json::parse(settings), a), a);
    caps.AddMember("extensions", ext, a);
  }
  return caps;
}

Outcome Server::initialize(const json::Value* params, detail::Session& session) {
  std::string_view requested;
  if (params) {
    requested = json::get_string(*params, "protocolVersion").value_or("");
    if (const json::Value* caps = json::find(*params, "capabilities")) session.set_client_capabilities(*caps);
  }
  session.initialized = true;

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  r.AddMember("protocolVersion", json::str(mcp::negotiate(requested), a), a);
  r.AddMember("capabilities", capabilities(a), a);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("name", json::str(name_, a), a);
  info.AddMember("version", json::str(version_, a), a);
  r.AddMember("serverInfo", info, a);
  if (!instructions_.empty()) r.AddMember("instructions", json::str(instructions_, a), a);
  return r;
}

Outcome Server::list_tools(const json::Value* params) const {
  util::MutexLock lock(registry_mutex_);
  std::size_t offset = 0;
  if (params && json::find(*params, "cursor")) {
    auto cursor = json::get_string(*params, "cursor");
    auto decoded = cursor ? mcp::decode_cursor(*cursor) : std::nullopt;
    if (!decoded || *decoded > tools_.size()) return RpcError{jsonrpc::kInvalidParams, "Invalid cursor"};
    offset = *decoded;
  }
  const std::size_t end =
      page_size_ == 0 ? tools_.size() : std::min(tools_.size(), offset + page_size_);

  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (std::size_t i = offset; i < end; ++i) list.PushBack(json::copy(tools_[i]->definition, a), a);
  r.AddMember("tools", list, a);
  if (end < tools_.size()) r.AddMember("nextCursor", json::str(mcp::encode_cursor(end), a), a);
  return r;
}

Outcome Server::list_prompts() const {
  util::MutexLock lock(registry_mutex_);
  json::Document r(rapidjson::kObjectType);
  auto& a = r.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const auto& p : prompts_) list.PushBack(json::copy(p->definition, a), a);
  r.AddMember("prompts", list, a);
  return r;
}

Outcome Server::call(const json::Value* params, CallContext& ctx) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing tool name"};
  // Our own reference: the tool may be replaced while it runs.
  const auto tool = find_tool(*name);
  if (!tool) return RpcError{jsonrpc::kInvalidParams, "Unknown tool: " + std::string(*name)};

  const json::Value empty(rapidjson::kObjectType);
  const json::Value* args = json::find(*params, "arguments");
  if (!args) args = &empty;
  if (!args->IsObject()) return RpcError{jsonrpc::kInvalidParams, "\"arguments\" must be an object"};
  if (tool->handler) return guarded([&] { return tool->handler(*args); });
  try {
    return guarded([&] { return tool->context_handler(*args, ctx); });
  } catch (const detail::InputRequired&) {
    return detail::input_required(*ctx.stateless_);
  }
}

bool Server::known_resource(std::string_view uri) const {
  return std::any_of(resources_.begin(), resources_.end(), [&](const Resource& r) { return r.spec.uri == uri; }) ||
         std::any_of(templates_.begin(), templates_.end(), [&](const ResourceTemplate& t) {
           return match_uri_template(t.spec.uri_template, uri).has_value();
         });
}

Outcome Server::read_resource(const json::Value* params, bool stateless) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  for (const Resource& r : resources_)
    if (r.spec.uri == *uri) return guarded([&] { return r.spec.read(*uri); });
  for (const ResourceTemplate& t : templates_)
    if (auto vars = match_uri_template(t.spec.uri_template, *uri))
      return guarded([&] { return t.spec.read(*uri, *vars); });
  // SEP-2164 retired -32002 for the stateless era: an unknown URI is a bad parameter.
  return RpcError{stateless ? jsonrpc::kInvalidParams : kResourceNotFound, "Resource not found: " + std::string(*uri),
                  R"({"uri":)" + json::quote(*uri) + "}"};
}

Outcome Server::subscribe(const json::Value* params, detail::Session& session, bool on) {
  auto uri = params ? json::get_string(*params, "uri") : std::nullopt;
  if (!uri) return RpcError{jsonrpc::kInvalidParams, "Missing resource uri"};
  // Unsubscribing from anything is harmless; subscribing to nothing is a
  // mistake the client should hear about.
  if (on && !known_resource(*uri))
    return RpcError{kResourceNotFound, "Resource not found: " + std::string(*uri),
                    R"({"uri":)" + json::quote(*uri) + "}"};
  session.subscribe(*uri, on);
  return empty_result();
}

Outcome Server::get_prompt(const json::Value* params, CallContext& ctx) {
  auto name = params ? json::get_string(*params, "name") : std::nullopt;
  if (!name) return RpcError{jsonrpc::kInvalidParams, "Missing prompt name"};
  const auto prompt = find_prompt(*name);
  if (!prompt) return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(*name)};

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
  if (prompt->spec.get) return guarded([&] { return prompt->spec.get(args); });
  try {
    return guarded([&] { return prompt->spec.context_get(args, ctx); });
  } catch (const detail::InputRequired&) {
    return detail::input_required(*ctx.stateless_);
  }
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
    if (!find_prompt(name)) return RpcError{jsonrpc::kInvalidParams, "Unknown prompt: " + std::string(name)};
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
// Command line

int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra) {
  const std::string prog = argc > 0 ? argv[0] : "server";
  auto usage = [&](std::ostream& out) {
    auto row = [&](const std::string& left, std::string_view help) {
      out << "  " << std::left << std::setw(20) << left << help << "\n";
    };
    out << "usage: " << prog << " [--http PORT] [--era ERA]";
    for (const Flag& f : extra) out << " [" << f.name << " VALUE]";
    out << "\n";
    row("(default)", "serve MCP over stdin/stdout");
    row("--http PORT", "serve Streamable HTTP on 127.0.0.1:PORT/mcp (0 = any free port)");
    row("--era ERA", "protocol eras to accept: legacy (sessions, the default), 2026 (stateless "
                     "2026-07-28 only) or both");
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
    if (flag == "--era") {
      if (value == "legacy")
        server.set_era(Era::Legacy);
      else if (value == "2026")
        server.set_era(Era::Stateless);
      else if (value == "both")
        server.set_era(Era::Both);
      else
        return fail("invalid era (legacy, 2026 or both): " + std::string(value));
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
