#pragma once
// A tiny MCP server framework for the example servers: register tools (and,
// optionally, resources, prompts, completions and logging), then serve them
// over stdio or Streamable HTTP. It implements just enough of MCP to be a
// realistic upstream for the gateway and a readable starting point for
// writing one:
//   - initialize, ping, tools/list, tools/call (every server);
//   - resources/list, resources/templates/list, resources/read,
//     resources/subscribe, resources/unsubscribe; prompts/list, prompts/get;
//     completion/complete; logging/setLevel (only when registered/enabled, so
//     a tools-only server answers them with "method not found" and advertises
//     only the tools capability);
//   - tools that talk to the client while they run (progress, log messages,
//     sampling and elicitation requests) through a CallContext.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jsonrpc/json.hpp"
#include "mcp/protocol.hpp"
#include "jsonrpc/message.hpp"
#include "util/result.hpp"

namespace mcpgw::examples {

/// A JSON-RPC error a handler returns instead of a result.
struct RpcError {
  int code = jsonrpc::kInternalError;
  std::string message;
};

/// MCP's "resource not found" error code (spec: server/resources, "Error Handling").
inline constexpr int kResourceNotFound = -32002;

/// What a handler produces: a result document or a JSON-RPC error.
using Outcome = std::variant<json::Document, RpcError>;
/// What a tool handler produces: a CallToolResult document or a JSON-RPC error.
using ToolOutcome = Outcome;

/// Runs one tool call; `args` is always an object. May run on any thread,
/// concurrently with other calls.
using ToolHandler = std::function<ToolOutcome(const json::Value& args)>;

/// The MCP logging levels (RFC 5424 severities), least severe first.
enum class LogLevel { Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency };

namespace detail {
struct Session;
}

/// What a tool that talks to the client while it runs gets: progress, log
/// messages and server-to-client requests (sampling, elicitation), all tied
/// to the call. Over stdio they are lines on stdout; over Streamable HTTP they
/// travel on the POST's SSE stream ahead of the result. Valid only during the
/// call; usable from the handler's thread only.
class CallContext {
 public:
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  /// True when the call carried `_meta.progressToken`.
  bool has_progress_token() const { return !progress_token_.IsNull(); }
  /// Sends notifications/progress for the call's token; nothing without one
  /// (the spec allows progress only for requests that asked for it).
  void progress(double progress, std::optional<double> total = std::nullopt,
                std::string_view message = {});
  /// Sends notifications/message unless the session's level (logging/setLevel)
  /// filters it out. Without a setLevel everything is sent.
  void log(LogLevel level, std::string_view message, std::string_view logger = {});
  /// True when the client declared capability `name` ("sampling",
  /// "elicitation", "roots") in its initialize request.
  bool client_supports(std::string_view name) const;
  /// Sends request `method` to the client and waits for its answer: the
  /// result, or an error naming why there is none (JSON-RPC error from the
  /// client, no answer within the timeout, the transport cannot carry it, the
  /// session ended).
  Result<json::Document> request(std::string_view method, const json::Value& params);

 private:
  friend class Server;
  /// Sends one serialised message to the client; false when it cannot.
  using Send = std::function<bool(std::string)>;
  CallContext(detail::Session& session, Send send, const json::Value* progress_token);

  detail::Session& session_;
  Send send_;
  json::Document progress_token_;  // null when the call has none
};

/// A tool handler that may talk to the client while it runs.
using ContextToolHandler = std::function<ToolOutcome(const json::Value& args, CallContext& ctx)>;

/// A JSON fragment of a definition, written as JSON text or taken from a
/// RapidJSON value. Empty means "leave the field out".
class JsonText {
 public:
  JsonText() = default;
  JsonText(const char* text) : text_(text) {}
  JsonText(std::string text) : text_(std::move(text)) {}
  JsonText(const json::Value& value) : text_(json::write(value)) {}

  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// Everything `tools/list` says about a tool, plus the code that runs it:
/// exactly one of `handler` and `context_handler`.
/// Meant for designated initializers; every field has an initializer, so
/// any may be left out without a -Wmissing-field-initializers warning.
struct ToolSpec {
  std::string name{};
  std::string title{};
  std::string description{};
  JsonText input_schema = R"({"type":"object","properties":{},"additionalProperties":false})";
  JsonText output_schema{};
  JsonText annotations{};
  JsonText meta{};  ///< The tool's `_meta`.
  ToolHandler handler{};
  ContextToolHandler context_handler{};
};

/// Reads a fixed resource: returns a ReadResourceResult ({contents: [...]}).
using ResourceReader = std::function<Outcome(std::string_view uri)>;

/// A resource listed by `resources/list` and read by `resources/read`.
struct ResourceSpec {
  std::string uri{};
  std::string name{};
  std::string title{};
  std::string description{};
  std::string mime_type{};
  ResourceReader read{};
};

/// The variables of a URI template match: `test://item/{id}` against
/// `test://item/7` gives {"id": "7"}.
using TemplateVars = std::map<std::string, std::string, std::less<>>;
/// Reads a resource of a template: returns a ReadResourceResult.
using TemplateReader = std::function<Outcome(std::string_view uri, const TemplateVars& vars)>;

/// A resource template listed by `resources/templates/list`. `resources/read`
/// of a URI no fixed resource has tries the templates in order. Templates use
/// RFC 6570 level 1 only (`{name}`); a variable matches one or more
/// characters up to the template's next literal character, never a '/'.
struct ResourceTemplateSpec {
  std::string uri_template{};
  std::string name{};
  std::string title{};
  std::string description{};
  std::string mime_type{};
  TemplateReader read{};
};

/// One argument of a prompt, as `prompts/list` shows it.
struct PromptArgument {
  std::string name{};
  std::string description{};
  bool required = false;
};

/// The arguments of a `prompts/get` (MCP prompt arguments are strings).
using PromptArgs = std::map<std::string, std::string, std::less<>>;
/// Builds a GetPromptResult ({messages: [...]}); required arguments are
/// checked before it runs.
using PromptHandler = std::function<Outcome(const PromptArgs& args)>;

struct PromptSpec {
  std::string name{};
  std::string title{};
  std::string description{};
  std::vector<PromptArgument> arguments{};
  PromptHandler get{};
};

/// Suggestions for `completion/complete`: `ref` is the request's ref
/// ({type: "ref/prompt", name} or {type: "ref/resource", uri}, already known
/// to exist), `argument` and `value` the argument being typed.
using CompletionHandler =
    std::function<std::vector<std::string>(const json::Value& ref, std::string_view argument,
                                            std::string_view value)>;

/// A CallToolResult with one text content item.
using mcp::text_result;
/// Sets member `key` of `result` to `value` (JSON text), e.g. structuredContent.
void set_json(json::Document& result, std::string_view key, std::string_view json_text);
/// Parses JSON text the program itself wrote; throws std::invalid_argument on
/// a syntax error (a bug, like a malformed schema).
json::Document parse_json(std::string_view json_text);

/// Argument `key` as a number (integer or not), if present and numeric.
std::optional<double> get_number(const json::Value& args, std::string_view key);
/// Argument `key` as an integer, if present and an integer.
std::optional<std::int64_t> get_int(const json::Value& args, std::string_view key);

/// Shortest text for a number: "5" rather than "5.000000".
std::string format_number(double v);

/// The variables of `uri` matched against `uri_template` (see
/// ResourceTemplateSpec), or nullopt when it does not match.
std::optional<TemplateVars> match_uri_template(std::string_view uri_template, std::string_view uri);

/// An MCP server: its tools, resources and prompts and the protocol logic
/// that exposes them. Register everything before serving; serving never
/// changes the registrations.
class Server {
 public:
  /// `name` and `version` become the `serverInfo` of the initialize result.
  Server(std::string name, std::string version);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Adds a tool; throws std::invalid_argument on a duplicate name, a JSON
  /// fragment that does not parse or not exactly one handler (all are
  /// programming errors).
  void add_tool(ToolSpec spec);
  /// Adds a resource, a resource template or a prompt (advertising the
  /// `resources` or `prompts` capability); throws std::invalid_argument on a
  /// duplicate URI, template or name, or a missing handler.
  void add_resource(ResourceSpec spec);
  void add_resource_template(ResourceTemplateSpec spec);
  void add_prompt(PromptSpec spec);
  /// Answers `completion/complete` (advertising `completions`).
  void set_completion_handler(CompletionHandler handler);
  /// Accepts `logging/setLevel` (advertising `logging`); CallContext::log then
  /// honours the session's level.
  void enable_logging() { logging_ = true; }
  /// Accepts `resources/subscribe` and `resources/unsubscribe` (advertising
  /// `resources.subscribe`). Over HTTP the session's GET stream then carries
  /// notifications/resources/updated.
  void enable_subscriptions() { subscriptions_ = true; }
  /// Page size of tools/list; 0 (the default) returns every tool at once.
  void set_page_size(std::size_t n) { page_size_ = n; }
  /// Replaces serverInfo.name.
  void set_name(std::string name) { name_ = std::move(name); }
  /// A task that runs on its own thread while the server serves: started
  /// once serving begins, asked to stop (through the token) and joined before
  /// serve_* returns. For servers that change things on their own.
  void run_while_serving(std::function<void(std::stop_token)> task) { background_ = std::move(task); }

  /// Sends notifications/resources/updated for `uri` to every session that
  /// subscribed to it. Callable from any thread while serving.
  void notify_resource_updated(std::string_view uri);

  /// Serves newline-delimited JSON-RPC on stdin/stdout until EOF, then waits
  /// for calls still running. Returns the exit code.
  int serve_stdio();
  /// Serves Streamable HTTP on 127.0.0.1:`port` (0 = any free port) at /mcp,
  /// announcing the address on stdout, until SIGTERM or SIGINT.
  int serve_http(int port);

  /// Writes `line` to stdout as is while serving stdio (ignored over HTTP):
  /// lets a test double show how a client copes with noise on the stream.
  void write_raw_line(std::string_view line);

 private:
  struct Tool {
    std::string name;
    json::Document definition;
    ToolHandler handler;
    ContextToolHandler context_handler;
  };
  struct Resource {
    ResourceSpec spec;
    json::Document definition;
  };
  struct ResourceTemplate {
    ResourceTemplateSpec spec;
    json::Document definition;
  };
  struct Prompt {
    PromptSpec spec;
    json::Document definition;
  };

  /// Answers one message of `session`: the serialised response for a
  /// request, nullopt for a notification or a response (which resolves a
  /// pending server-to-client request). `send` carries what a tool sends to
  /// the client during the call.
  std::optional<std::string> dispatch(const jsonrpc::Message& msg, detail::Session& session,
                                      const CallContext::Send& send);
  /// True when `msg` calls a tool with a context handler, which may talk to
  /// the client before it answers.
  bool talks_during_call(const jsonrpc::Message& msg) const;

  std::string initialize(const jsonrpc::Message& msg, detail::Session& session);
  std::string list_tools(const jsonrpc::Message& msg);
  ToolOutcome call(const json::Value* params, detail::Session& session, const CallContext::Send& send);
  Outcome read_resource(const json::Value* params);
  Outcome subscribe(const json::Value* params, detail::Session& session, bool on);
  Outcome get_prompt(const json::Value* params);
  Outcome complete(const json::Value* params);
  Outcome set_log_level(const json::Value* params, detail::Session& session);
  bool known_resource(std::string_view uri) const;

  void write_line(std::string_view line);
  /// Makes `session` reachable by notify_resource_updated, or forgets it.
  void track(std::shared_ptr<detail::Session> session);
  void untrack(const std::string& id);

  std::string name_;
  std::string version_;
  std::vector<Tool> tools_;
  std::vector<Resource> resources_;
  std::vector<ResourceTemplate> templates_;
  std::vector<Prompt> prompts_;
  CompletionHandler completion_;
  bool logging_ = false;
  bool subscriptions_ = false;
  std::size_t page_size_ = 0;
  std::function<void(std::stop_token)> background_;
  bool stdio_ = false;
  std::mutex stdout_mutex_;  // one writer at a time keeps lines whole

  std::mutex sessions_mutex_;
  std::map<std::string, std::shared_ptr<detail::Session>, std::less<>> sessions_;
};

/// A command-line flag of one server, taking one value. `apply` returns
/// false when the value is invalid.
struct Flag {
  std::string name;  ///< e.g. "--tools"
  std::string help;
  std::function<bool(std::string_view value)> apply;
};

/// The shared entry point: parses `--http PORT` (default: stdio), `--help`
/// and `extra` flags, then serves. Returns the process exit code (2 on a
/// usage error).
int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra = {});

}  // namespace mcpgw::examples
