#pragma once
// The C++ way to write an mcpgw plugin: a header-only layer over the C ABI in
// plugin.h. A whole plugin:
//
//   #include <mcpgw/plugin.hpp>
//
//   MCPGW_PLUGIN("hello", "1.0.0") {
//     plugin.tool("balance_in_words")
//         .description("Tells an account's balance in a sentence.")
//         .input_schema(mcpgw::Json::parse(R"({"type":"object","properties":{"accountId":{"type":"string"}}})"))
//         .handler([](mcpgw::Context& ctx, const mcpgw::Json& args) {
//           auto r = ctx.call_tool("bank", "get_account_balance", mcpgw::Json::object({{"accountId", args["accountId"]}}));
//           if (r.is_error()) return mcpgw::ToolResult::error("the bank said: " + r.text());
//           return mcpgw::ToolResult::text("You have " + r.structured()["balance"].dump() + " USD.");
//         });
//   }
//
// Handlers run on gateway threads, several at once; exceptions never cross
// into the gateway (a throwing handler gives the client an isError result).
#include <mcpgw/json.hpp>
#include <mcpgw/plugin.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpgw {

/// Severity of a log line written through the gateway's logger.
enum class LogLevel { Debug = MCPGW_LOG_DEBUG, Info = MCPGW_LOG_INFO, Warn = MCPGW_LOG_WARN, Error = MCPGW_LOG_ERROR };

/// What an upstream tool call returned (a CallToolResult).
class CallResult {
 public:
  explicit CallResult(Json raw) : raw_(std::move(raw)) {}

  /// The whole result as the upstream sent it.
  const Json& raw() const { return raw_; }
  /// True when the upstream (or the gateway, for a server that is down or
  /// timed out) reported a failure.
  bool is_error() const { return raw_["isError"].as_bool(); }
  /// The text items of `content`, joined with newlines.
  std::string text() const {
    std::string out;
    for (const auto& item : raw_["content"].items())
      if (item["type"].as_string() == "text") {
        if (!out.empty()) out += '\n';
        out += item["text"].as_string();
      }
    return out;
  }
  /// `structuredContent`, or else the first text item that is JSON (older
  /// tools), or null.
  Json structured() const {
    if (raw_["structuredContent"].is_object()) return raw_["structuredContent"];
    for (const auto& item : raw_["content"].items())
      if (item["type"].as_string() == "text")
        if (auto parsed = Json::try_parse(item["text"].as_string())) return std::move(*parsed);
    return Json();
  }

 private:
  Json raw_;
};

/// One call of `Context::call_all`.
struct ToolCall {
  std::string server;
  std::string tool;
  Json arguments = Json::object();
};

/// A question for the client: an elicitation, a sampling or a request for
/// its roots, under a key the handler chooses (the key of its answer).
class Input {
 public:
  /// Asks the user for data of `requested_schema` (an object schema of
  /// primitive properties), shown with `message`.
  static Input elicit(std::string key, std::string message, Json requested_schema) {
    return Input(std::move(key), "elicitation/create",
                 Json::object({{"message", std::move(message)}, {"requestedSchema", std::move(requested_schema)}}));
  }
  /// Asks the client's model: `messages` are SamplingMessages
  /// ({role, content}); `extra` adds systemPrompt, modelPreferences, ...
  static Input sample(std::string key, Json messages, int max_tokens, Json extra = Json::object()) {
    Json params = std::move(extra);
    params.set("messages", std::move(messages));
    params.set("maxTokens", max_tokens);
    return Input(std::move(key), "sampling/createMessage", std::move(params));
  }
  /// A one-message sampling: `prompt` as the user's text.
  static Input sample(std::string key, std::string prompt, int max_tokens) {
    Json message = Json::object(
        {{"role", "user"}, {"content", Json::object({{"type", "text"}, {"text", std::move(prompt)}})}});
    return sample(std::move(key), Json::array({std::move(message)}), max_tokens);
  }
  /// Asks for the client's roots.
  static Input roots(std::string key) { return Input(std::move(key), "roots/list", Json::object()); }

  const std::string& key() const { return key_; }
  /// `{method, params}`, as input_required's inputRequests hold them.
  Json request() const { return Json::object({{"method", method_}, {"params", params_}}); }

 private:
  Input(std::string key, std::string method, Json params)
      : key_(std::move(key)), method_(std::move(method)), params_(std::move(params)) {}
  std::string key_, method_;
  Json params_;
};

/// What a handler returns to the client: a CallToolResult under
/// construction.
class ToolResult {
 public:
  /// A successful result carrying `value`: as `structuredContent` when it is
  /// an object, and as JSON text for clients that read only `content`.
  static ToolResult ok(const Json& value) { return ok(value, value.dump()); }
  /// The same with `summary` as the text for clients (and models) that read
  /// only `content`.
  static ToolResult ok(const Json& value, std::string summary) {
    ToolResult r = text(std::move(summary));
    if (value.is_object()) r.json_.set("structuredContent", value);
    return r;
  }
  /// A successful result with one text item.
  static ToolResult text(std::string text) {
    ToolResult r;
    r.add_text(std::move(text));
    return r;
  }
  /// A failed result (`isError: true`) the model can read and act on.
  static ToolResult error(std::string message) {
    ToolResult r = text(std::move(message));
    r.json_.set("isError", true);
    return r;
  }
  /// Hands off to tool `tool` with `arguments` through `_meta.nextTool`; the
  /// gateway resolves it (chain settings) before answering the client. `tool`
  /// is an exposed tool name.
  static ToolResult next_tool(std::string tool, Json arguments, std::string message = {}) {
    ToolResult r;
    if (!message.empty()) r.add_text(std::move(message));
    r.with_next_tool(std::move(tool), std::move(arguments));
    return r;
  }
  /// Suspends the call until the client has answered `inputs`; the gateway
  /// then runs the handler again, with every answer so far
  /// (Context::answer) and `state` (Context::state). Keep nothing else
  /// between the rounds: the next one may run in another gateway process.
  static ToolResult ask(std::vector<Input> inputs, Json state = Json()) {
    Json requests = Json::object();
    for (auto& i : inputs) requests.set(i.key(), i.request());
    return raw(Json::object(
        {{"resultType", "input_required"}, {"inputRequests", std::move(requests)}, {"state", std::move(state)}}));
  }
  /// The same for one question.
  static ToolResult ask(Input input, Json state = Json()) {
    std::vector<Input> one;
    one.push_back(std::move(input));
    return ask(std::move(one), std::move(state));
  }
  /// Any CallToolResult, as is.
  static ToolResult raw(Json call_tool_result) {
    ToolResult r;
    r.json_ = std::move(call_tool_result);
    return r;
  }

  /// Adds `_meta.nextTool` to this result.
  ToolResult& with_next_tool(std::string tool, Json arguments) {
    json_["_meta"].set("nextTool", Json::object({{"tool", std::move(tool)}, {"arguments", std::move(arguments)}}));
    return *this;
  }
  /// Appends a text item to `content`.
  ToolResult& add_text(std::string text) {
    json_["content"].push_back(Json::object({{"type", "text"}, {"text", std::move(text)}}));
    return *this;
  }
  /// The CallToolResult.
  const Json& json() const { return json_; }

 private:
  ToolResult() : json_(Json::object({{"content", Json::array()}})) {}
  Json json_;
};

/// One running call of a plugin tool: the way to the upstreams and to what
/// the gateway knows about the client. Valid only while the handler runs.
class Context {
 public:
  Context(const mcpgw_host* host, mcpgw_call* call) : host_(host), call_(call) {}

  /// Calls `tool` of upstream server `server` and waits for the result.
  /// Failures (server down, timeout, unknown tool) come back as an error
  /// result naming the server, never as an exception.
  CallResult call_tool(std::string_view server, std::string_view tool, const Json& arguments = Json::object()) const {
    std::string s(server), t(tool), a = arguments.dump();
    return CallResult(take(host_->call_tool(call_, s.c_str(), t.c_str(), a.c_str())));
  }
  /// Starts the same call without waiting.
  std::future<CallResult> call_tool_async(std::string_view server, std::string_view tool,
                                          const Json& arguments = Json::object()) const {
    struct Pending {
      const mcpgw_host* host;
      std::promise<CallResult> promise;
    };
    auto pending = std::make_unique<Pending>(Pending{host_, {}});
    auto future = pending->promise.get_future();
    std::string s(server), t(tool), a = arguments.dump();
    // The host runs the callback exactly once; it takes the Pending back.
    host_->call_tool_async(
        call_, s.c_str(), t.c_str(), a.c_str(),
        [](void* user, char* result) {
          std::unique_ptr<Pending> p(static_cast<Pending*>(user));
          p->promise.set_value(CallResult(take(p->host, result)));
        },
        pending.release());
    return future;
  }
  /// Runs every call in parallel and returns their results in order.
  std::vector<CallResult> call_all(const std::vector<ToolCall>& calls) const {
    std::vector<std::future<CallResult>> started;
    started.reserve(calls.size());
    for (const auto& c : calls) started.push_back(call_tool_async(c.server, c.tool, c.arguments));
    std::vector<CallResult> out;
    out.reserve(calls.size());
    for (auto& f : started) out.push_back(f.get());
    return out;
  }

  /// The authenticated principal ("" without auth).
  std::string principal() const { return host_->principal(call_); }
  /// The client's mode ("all" or a configured mode).
  std::string mode() const { return host_->mode(call_); }
  /// True once the client cancelled the call; long handlers should stop.
  bool cancelled() const { return host_->cancelled(call_) != 0; }
  /// Writes to the gateway's log, tagged with the plugin's name.
  void log(LogLevel level, std::string_view message) const {
    std::string m(message);
    host_->log(host_, static_cast<mcpgw_log_level>(level), m.c_str());
  }

  /// True when the client has answered the question asked under `key` in an
  /// earlier round (ToolResult::ask), whatever the answer.
  bool has_answer(std::string_view key) const { return inputs().answers.contains(key); }
  /// The client's answer under `key`: an ElicitResult ({action, content}),
  /// a CreateMessageResult ({role, content, model}) or a ListRootsResult
  /// ({roots}); `{"error": {code, message}}` when the client could not
  /// answer; null when not answered (yet).
  Json answer(std::string_view key) const {
    const Json* a = inputs().answers.find(key);
    return a ? *a : Json();
  }
  /// For an elicitation: the content the user accepted under `key`, or
  /// nullopt when not answered, declined, cancelled or refused.
  std::optional<Json> accepted(std::string_view key) const {
    Json a = answer(key);
    if (!a.is_object() || a["action"].as_string() != "accept") return std::nullopt;
    const Json* content = a.find("content");
    return content ? *content : Json::object();
  }
  /// The state the previous round returned with ToolResult::ask (null in
  /// the first round).
  Json state() const { return inputs().state; }

 private:
  Json take(char* s) const { return take(host_, s); }
  static Json take(const mcpgw_host* host, char* s) {
    std::unique_ptr<char, void (*)(char*)> owned(s, host->free_string);
    auto parsed = s ? Json::try_parse(s) : std::nullopt;
    if (parsed && parsed->is_object()) return std::move(*parsed);
    return ToolResult::error("mcpgw returned no valid result for the call").json();
  }

  struct Inputs {
    Json answers = Json::object();
    Json state;
  };
  /// The answers and state of earlier rounds, read from the host once; a
  /// host older than the input functions has none.
  const Inputs& inputs() const {
    if (!inputs_) {
      Inputs in;
      constexpr std::size_t need = offsetof(mcpgw_host, input_state) + sizeof(mcpgw_host::input_state);
      if (host_->struct_size >= need) {
        std::unique_ptr<char, void (*)(char*)> a(host_->input_responses(call_), host_->free_string);
        std::unique_ptr<char, void (*)(char*)> st(host_->input_state(call_), host_->free_string);
        if (auto parsed = a ? Json::try_parse(a.get()) : std::nullopt; parsed && parsed->is_object())
          in.answers = std::move(*parsed);
        if (auto parsed = st ? Json::try_parse(st.get()) : std::nullopt) in.state = std::move(*parsed);
      }
      inputs_ = std::move(in);
    }
    return *inputs_;
  }

  const mcpgw_host* host_;
  mcpgw_call* call_;
  mutable std::optional<Inputs> inputs_;
};

/// A tool's handler: the client's arguments in, the result out.
using Handler = std::function<ToolResult(Context& ctx, const Json& arguments)>;

/// One tool of the plugin, declared with chained setters.
class Tool {
 public:
  explicit Tool(std::string name)
      : def_(Json::object({{"name", std::move(name)}, {"inputSchema", Json::object({{"type", "object"}})}})) {}

  Tool& title(std::string v) { return set("title", std::move(v)); }
  Tool& description(std::string v) { return set("description", std::move(v)); }
  /// JSON Schema of the arguments (default: any object).
  Tool& input_schema(Json v) { return set("inputSchema", std::move(v)); }
  /// JSON Schema of `structuredContent`.
  Tool& output_schema(Json v) { return set("outputSchema", std::move(v)); }
  /// MCP tool annotations, e.g. `{"readOnlyHint": true}`.
  Tool& annotations(Json v) { return set("annotations", std::move(v)); }
  /// Slices for the gateway's filters and modes (as `_meta.slices`).
  Tool& slices(std::vector<std::string> names) {
    Json list = Json::array();
    for (auto& n : names) list.push_back(std::move(n));
    def_["_meta"].set("slices", std::move(list));
    return *this;
  }
  /// Any other `_meta` member, e.g. `meta("welcomeTool", true)`.
  Tool& meta(std::string_view key, Json v) {
    def_["_meta"].set(key, std::move(v));
    return *this;
  }
  Tool& handler(Handler h) {
    handler_ = std::move(h);
    return *this;
  }

  std::string name() const { return def_["name"].as_string(); }
  /// The MCP Tool object the gateway lists.
  const Json& definition() const { return def_; }
  const Handler& run() const { return handler_; }

 private:
  Tool& set(std::string_view key, Json v) {
    def_.set(key, std::move(v));
    return *this;
  }
  Json def_;
  Handler handler_;
};

/// The plugin being set up: its configuration and its tools.
class Plugin {
 public:
  Plugin(const mcpgw_host* host, Json config) : host_(host), config_(std::move(config)) {}

  /// Declares a tool; configure it with the returned builder.
  Tool& tool(std::string name) {
    tools_.push_back(std::make_unique<Tool>(std::move(name)));
    return *tools_.back();
  }
  /// The plugin's `config` object from gateway.yaml.
  const Json& config() const { return config_; }
  /// Writes to the gateway's log, tagged with the plugin's name.
  void log(LogLevel level, std::string_view message) const {
    std::string m(message);
    host_->log(host_, static_cast<mcpgw_log_level>(level), m.c_str());
  }

  const std::vector<std::unique_ptr<Tool>>& tools() const { return tools_; }
  const mcpgw_host* host() const { return host_; }

 private:
  const mcpgw_host* host_;
  Json config_;
  std::vector<std::unique_ptr<Tool>> tools_;  // stable addresses for the builders handed out
};

namespace detail {

inline char* give(const mcpgw_host* host, const std::string& s) { return host->alloc_string(s.data(), s.size()); }

using Setup = void (*)(Plugin&);

template <Setup setup>
void* init(const mcpgw_host* host, const char* config_json, char** error) {
  *error = nullptr;
  try {
    auto plugin = std::make_unique<Plugin>(host, Json::parse(config_json ? config_json : "{}"));
    setup(*plugin);
    for (const auto& t : plugin->tools())
      if (!t->run()) throw JsonError("tool \"" + t->name() + "\" has no handler");
    return plugin.release();  // back into a unique_ptr in shutdown()
  } catch (const std::exception& e) {
    *error = give(host, e.what());
  } catch (...) {
    *error = give(host, "setup threw a non-standard exception");
  }
  return nullptr;
}

inline char* list_tools(void* state) {
  auto& plugin = *static_cast<Plugin*>(state);
  Json list = Json::array();
  for (const auto& t : plugin.tools()) list.push_back(t->definition());
  return give(plugin.host(), list.dump());
}

inline char* call(void* state, mcpgw_call* call, const char* tool, const char* arguments_json) {
  auto& plugin = *static_cast<Plugin*>(state);
  const std::string_view name(tool);
  try {
    for (const auto& t : plugin.tools())
      if (t->name() == name) {
        Context ctx(plugin.host(), call);
        return give(plugin.host(), t->run()(ctx, Json::parse(arguments_json)).json().dump());
      }
    return give(plugin.host(), ToolResult::error("unknown tool " + std::string(name)).json().dump());
  } catch (const std::exception& e) {
    plugin.log(LogLevel::Error, "tool " + std::string(name) + " threw: " + e.what());
    return give(plugin.host(), ToolResult::error("tool " + std::string(name) + " failed: " + e.what()).json().dump());
  } catch (...) {
    plugin.log(LogLevel::Error, "tool " + std::string(name) + " threw a non-standard exception");
    return give(plugin.host(), ToolResult::error("tool " + std::string(name) + " failed").json().dump());
  }
}

inline void shutdown(void* state) { std::unique_ptr<Plugin> owned(static_cast<Plugin*>(state)); }

template <Setup setup>
const mcpgw_plugin* descriptor(const char* name, const char* version) {
  static const mcpgw_plugin d{sizeof(mcpgw_plugin), MCPGW_PLUGIN_ABI_VERSION, name, version, &init<setup>,
                              &list_tools, &call, &shutdown};
  return &d;
}

}  // namespace detail
}  // namespace mcpgw

/// Defines the plugin's entry point; the braces that follow are its set-up,
/// run once at load with `plugin` (an `mcpgw::Plugin&`) in scope. Throwing
/// from it fails the load with the exception's message.
#define MCPGW_PLUGIN(NAME, VERSION)                                                         \
  static void mcpgw_plugin_setup_(::mcpgw::Plugin& plugin);                                 \
  extern "C" MCPGW_PLUGIN_EXPORT const mcpgw_plugin* mcpgw_plugin_v1(void) {                \
    return ::mcpgw::detail::descriptor<&mcpgw_plugin_setup_>(NAME, VERSION);                \
  }                                                                                         \
  static void mcpgw_plugin_setup_(::mcpgw::Plugin& plugin)
