#pragma once
// A tiny MCP server framework for the example servers: register tools (and,
// optionally, resources, prompts, completions and logging), then serve them
// over stdio or Streamable HTTP. It implements just enough of MCP to be a
// realistic upstream for the gateway and a readable starting point for
// writing one. One server speaks both protocol eras on the same endpoint,
// as set_era (or `--era`) allows:
//   - the stateful era (2024-11-05 … 2025-11-25): initialize and a session,
//     ping, tools/list, tools/call (every server); resources/list,
//     resources/templates/list, resources/read, resources/subscribe,
//     resources/unsubscribe; prompts/list, prompts/get; completion/complete;
//     logging/setLevel (only when registered/enabled, so a tools-only server
//     answers them with "method not found" and advertises only the tools
//     capability); server-to-client requests in the middle of a call;
//   - the stateless era (2026-07-28): every request carries its protocol
//     version and client capabilities in `params._meta`; server/discover
//     instead of initialize; `resultType` on every result and caching hints
//     on lists and reads; subscriptions/listen instead of the GET stream and
//     resources/subscribe; per-request log level; and multi-round-trip
//     requests (MRTR): a call that needs the client's input answers
//     `input_required` and is re-run when the client retries with the answers.
//   - tools (and prompts) that talk to the client while they run (progress,
//     log messages, sampling, elicitation and roots requests) through a
//     CallContext, with the same handler code for both eras.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jsonrpc/json.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::examples {

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

/// A JSON-RPC error a handler returns instead of a result; `data` (JSON,
/// optional) becomes the error's `data` member.
struct RpcError {
  int code = jsonrpc::kInternalError;
  std::string message{};
  JsonText data{};
};

/// MCP's "resource not found" error code of the stateful era (spec:
/// server/resources, "Error Handling"); stateless requests get -32602 with
/// `data.uri` instead (SEP-2164).
inline constexpr int kResourceNotFound = -32002;
/// Stateless-era error codes and revision (2026-07-28), as the gateway
/// defines them.
using mcp::kHeaderMismatch;
using mcp::kMissingClientCapability;
using mcp::kStatelessVersion;
inline constexpr int kUnsupportedProtocolVersion = mcp::kUnsupportedVersion;

/// What a handler produces: a result document or a JSON-RPC error.
using Outcome = std::variant<json::Document, RpcError>;
/// What a tool handler produces: a CallToolResult document or a JSON-RPC error.
using ToolOutcome = Outcome;

/// Runs one tool call; `args` is always an object. May run on any thread,
/// concurrently with other calls.
using ToolHandler = std::function<ToolOutcome(const json::Value& args)>;

/// The MCP logging levels (RFC 5424 severities), least severe first.
enum class LogLevel { Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency };

/// Which protocol eras a server accepts (`--era legacy|2026|both`).
enum class Era {
  Legacy,     ///< Sessions only: server/discover is an unknown method, 2026 `_meta` is ignored.
  Stateless,  ///< 2026-07-28 only: initialize is an unknown method.
  Both,       ///< Stateless requests and server/discover, and initialize sessions too.
};

/// One question for the client, asked through CallContext::request_all.
/// `key` names it in the stateless era's `inputRequests`/`inputResponses`
/// (and in `params._meta["mcpgw/inputKey"]` of a stateful-era request).
struct InputRequest {
  std::string key{};
  std::string method{};  ///< elicitation/create, sampling/createMessage or roots/list
  JsonText params{};
};
/// The client's answers by key: its result, or why there is none.
using InputAnswers = std::map<std::string, Outcome, std::less<>>;

namespace detail {
struct Session;
struct Stateless;
}  // namespace detail

/// What a tool (or prompt) that talks to the client while it runs gets:
/// progress, log messages and requests to the client (sampling,
/// elicitation, roots), all tied to the call. Over stdio they are lines on
/// stdout; over Streamable HTTP they travel on the POST's SSE stream ahead
/// of the result. Valid only during the call; usable from the handler's
/// thread only.
///
/// Requests work in both eras with the same handler code. In the stateful
/// era they go to the client in the middle of the call. In the stateless
/// era the server may not send requests: an unanswered request unwinds the
/// handler (with an internal exception: never swallow exceptions with
/// `catch (...)` without rethrowing) and the call answers `input_required`;
/// the client retries with the answers and the handler runs again from the
/// start, this time getting them. Handlers must therefore do nothing
/// irreversible before their last request.
class CallContext {
 public:
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  /// True for a request of the stateless era (2026-07-28).
  bool stateless() const { return stateless_ != nullptr; }
  /// True when the call carried `_meta.progressToken`.
  bool has_progress_token() const { return !progress_token_.IsNull(); }
  /// Sends notifications/progress for the call's token; nothing without one
  /// (the spec allows progress only for requests that asked for it).
  void progress(double progress, std::optional<double> total = std::nullopt,
                std::string_view message = {});
  /// Sends notifications/message unless the level filters it out: the
  /// session's (logging/setLevel; without one everything is sent) in the
  /// stateful era, the request's `_meta["io.modelcontextprotocol/logLevel"]`
  /// in the stateless era (without one nothing is sent).
  void log(LogLevel level, std::string_view message, std::string_view logger = {});
  /// True when the client declared capability `name` ("sampling",
  /// "elicitation", "roots"): in its initialize request, or in the
  /// request's `_meta["io.modelcontextprotocol/clientCapabilities"]`.
  bool client_supports(std::string_view name) const;
  /// True when the client declared extension `id` (capabilities.extensions).
  bool client_declares(std::string_view id) const;
  /// Asks the client `method` with `params` and returns its answer: the
  /// result, or an RpcError saying why there is none: -32021 (with
  /// `data.requiredCapabilities`) when the client did not declare the
  /// capability the method needs, the client's own JSON-RPC error, no
  /// answer within the timeout, a transport that cannot carry the request,
  /// a stateless answer that is not an object (-32602). In the stateless era
  /// an unanswered request does not return (see the class comment).
  Outcome request(std::string_view method, const json::Value& params, std::string_view key);
  /// Asks several questions at once: in the stateless era every unanswered
  /// one goes into the same `input_required` answer. Answers by key.
  InputAnswers request_all(const std::vector<InputRequest>& requests);

 private:
  friend class Server;
  /// Sends one serialised message to the client; false when it cannot.
  using Send = std::function<bool(std::string)>;
  /// One question, parsed.
  struct Ask {
    std::string_view key;
    std::string_view method;
    const json::Value& params;
  };
  /// Exactly one of `session` (stateful era) and `stateless` is set.
  CallContext(Send send, const json::Value* progress_token, detail::Session* session,
              detail::Stateless* stateless);
  InputAnswers ask(const std::vector<Ask>& asks);
  InputAnswers ask_session(const std::vector<Ask>& asks);

  Send send_;
  json::Document progress_token_;  // null when the call has none
  detail::Session* session_;
  detail::Stateless* stateless_;
};

/// A tool handler that may talk to the client while it runs.
using ContextToolHandler = std::function<ToolOutcome(const json::Value& args, CallContext& ctx)>;

/// Everything `tools/list` says about a tool, plus the code that runs it:
/// exactly one of `handler` and `context_handler`.
/// Meant for designated initializers; every field has an initializer, so
/// any may be left out without a -Wmissing-field-initializers warning.
/// A string property of `input_schema` may carry `"x-mcp-header": "Name"`:
/// stateless HTTP calls must then mirror its value in `Mcp-Param-Name`.
struct ToolSpec {
  std::string name{};
  std::string title{};
  std::string description{};
  JsonText input_schema = R"({"type":"object","properties":{},"additionalProperties":false})";
  JsonText output_schema{};
  JsonText annotations{};
  JsonText meta{};       ///< The tool's `_meta`.
  JsonText execution{};  ///< The tool's `execution` (e.g. its taskSupport).
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

/// Answers an extension's request: `params` may be null; `stateless` tells
/// the era, for results whose shape depends on it.
using MethodHandler = std::function<Outcome(const json::Value* params, bool stateless)>;

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
/// A prompt handler that may ask the client for input (see CallContext).
using ContextPromptHandler = std::function<Outcome(const PromptArgs& args, CallContext& ctx)>;

/// A prompt: exactly one of `get` and `context_get`.
struct PromptSpec {
  std::string name{};
  std::string title{};
  std::string description{};
  std::vector<PromptArgument> arguments{};
  PromptHandler get{};
  ContextPromptHandler context_get{};
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

/// The lists whose changes a server announces (notifications/<list>/list_changed).
enum class ListKind { Tools, Prompts, Resources };

/// An MCP server: its tools, resources and prompts and the protocol logic
/// that exposes them. Register everything before serving; while serving,
/// only replace_tool and replace_prompt change the registrations.
class Server {
 public:
  /// `name` and `version` become the `serverInfo` of the initialize result
  /// (and of server/discover's `_meta`).
  Server(std::string name, std::string version);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Adds a tool; throws std::invalid_argument on a duplicate name, a JSON
  /// fragment that does not parse or not exactly one handler (all are
  /// programming errors).
  void add_tool(ToolSpec spec);
  /// Replaces the tool of the same name in place (the list keeps its
  /// order) and announces notifications/tools/list_changed. Callable from
  /// any thread while serving, also from the replaced tool's own handler.
  /// Throws std::invalid_argument like add_tool, or for an unknown name.
  void replace_tool(ToolSpec spec);
  /// Adds a resource, a resource template or a prompt (advertising the
  /// `resources` or `prompts` capability); throws std::invalid_argument on a
  /// duplicate URI, template or name, or not exactly one handler.
  void add_resource(ResourceSpec spec);
  void add_resource_template(ResourceTemplateSpec spec);
  void add_prompt(PromptSpec spec);
  /// Replaces the prompt of the same name, like replace_tool (announcing
  /// notifications/prompts/list_changed).
  void replace_prompt(PromptSpec spec);
  /// Declares extension `id` (SEP-2133) with `settings` under
  /// capabilities.extensions; a JSON object.
  void set_extension(std::string id, JsonText settings);
  /// Answers request `method` (an extension's) in both eras with
  /// `handler(params, stateless)`; throws std::invalid_argument for a method
  /// the kit answers itself or one added before.
  void add_method(std::string method, MethodHandler handler);
  /// Answers `completion/complete` (advertising `completions`).
  void set_completion_handler(CompletionHandler handler);
  /// Accepts `logging/setLevel` (advertising `logging`); CallContext::log then
  /// honours the session's level.
  void enable_logging() { logging_ = true; }
  /// Accepts `resources/subscribe` and `resources/unsubscribe`, and the
  /// `resourceSubscriptions` filter of subscriptions/listen (advertising
  /// `resources.subscribe`). Over HTTP a session's GET stream then carries
  /// notifications.
  void enable_subscriptions() { subscriptions_ = true; }
  /// Page size of tools/list; 0 (the default) returns every tool at once.
  void set_page_size(std::size_t n) { page_size_ = n; }
  /// Replaces serverInfo.name.
  void set_name(std::string name) { name_ = std::move(name); }
  /// Text of the `instructions` of initialize and server/discover results.
  void set_instructions(std::string text) { instructions_ = std::move(text); }
  /// Which eras the server accepts; the default is Era::Legacy.
  void set_era(Era era) { era_ = era; }
  /// A task that runs on its own thread while the server serves: started
  /// once serving begins, asked to stop (through the token) and joined before
  /// serve_* returns. For servers that change things on their own.
  void run_while_serving(std::function<void(std::stop_token)> task) { background_ = std::move(task); }

  /// Sends notifications/resources/updated for `uri` to every session that
  /// subscribed to it and every listen stream that asked for it. Callable
  /// from any thread while serving.
  void notify_resource_updated(std::string_view uri);
  /// Sends notifications/<list>/list_changed to every session and every
  /// listen stream that asked for it. Callable from any thread while serving.
  void notify_list_changed(ListKind list);

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
  struct Listener;
  /// The Streamable HTTP transport (kit_http.cpp), on the gateway's
  /// generic HTTP listener.
  struct Http;
  friend struct Http;

  static std::shared_ptr<const Tool> make_tool(ToolSpec spec);
  static std::shared_ptr<const Prompt> make_prompt(PromptSpec spec);
  std::shared_ptr<const Tool> find_tool(std::string_view name) const;
  std::shared_ptr<const Prompt> find_prompt(std::string_view name) const;

  /// True when `msg` is a request of the stateless era: always with
  /// Era::Stateless, never with Era::Legacy, else when it says so (`_meta`
  /// protocol version, or `header_says_so` for the HTTP header) or is
  /// server/discover.
  bool is_stateless(const jsonrpc::Message& msg, bool header_says_so) const;
  /// Answers one stateful-era message of `session`: the serialised response
  /// for a request, nullopt for a notification or a response (which
  /// resolves a pending server-to-client request). `send` carries what a
  /// tool sends to the client during the call.
  std::optional<std::string> dispatch(const jsonrpc::Message& msg, detail::Session& session,
                                      const CallContext::Send& send);
  /// Checks the envelope of a stateless request (`_meta` keys, protocol
  /// version, log level; with `header_version` also the HTTP header) and
  /// fills `call` from it; the error to answer with when it is not valid.
  std::optional<RpcError> check_envelope(const jsonrpc::Message& msg, const std::string* header_version,
                                         detail::Stateless& call) const;
  /// Answers a stateless request that passed check_envelope.
  Outcome dispatch_stateless(const jsonrpc::Message& msg, detail::Stateless& call, const CallContext::Send& send);
  /// The methods both eras share, and the ones of the era given by which of
  /// `session` and `stateless` is set.
  Outcome handle(const jsonrpc::Message& msg, detail::Session* session, detail::Stateless* stateless,
                 const CallContext::Send& send);
  /// True when `msg` runs a handler that may talk to the client before it
  /// answers (a context tool or prompt).
  bool talks_during_call(const jsonrpc::Message& msg) const;

  json::Value capabilities(json::Allocator& a) const;
  Outcome initialize(const json::Value* params, detail::Session& session);
  Outcome discover() const;
  Outcome list_tools(const json::Value* params) const;
  Outcome list_prompts() const;
  Outcome call(const json::Value* params, CallContext& ctx);
  Outcome read_resource(const json::Value* params, bool stateless);
  Outcome subscribe(const json::Value* params, detail::Session& session, bool on);
  Outcome get_prompt(const json::Value* params, CallContext& ctx);
  Outcome complete(const json::Value* params);
  Outcome set_log_level(const json::Value* params, detail::Session& session);
  bool known_resource(std::string_view uri) const;
  bool has_resources() const { return !resources_.empty() || !templates_.empty(); }
  bool has_prompts() const;

  /// Opens a subscriptions/listen stream: acknowledges it (through `writer`
  /// over stdio, into the listener's outbox over HTTP when `writer` is
  /// empty) and registers it; the error to answer with instead.
  std::variant<RpcError, std::shared_ptr<Listener>> listen(const jsonrpc::Message& msg,
                                                          std::function<void(std::string)> writer);
  void unlisten(const Listener* listener);
  /// Ends the listen stream opened by request `id` (stdio: notifications/cancelled).
  void cancel_listen(const json::Value& id);
  /// Every open listen stream, for a notification to pick its receivers from.
  std::vector<std::shared_ptr<Listener>> listeners();

  void write_line(std::string_view line);
  /// Makes `session` reachable by the notify_* functions, or forgets it.
  void track(std::shared_ptr<detail::Session> session);
  void untrack(const std::string& id);
  std::vector<std::shared_ptr<detail::Session>> sessions();

  std::string name_;
  std::string version_;
  std::string instructions_;
  Era era_ = Era::Legacy;
  mutable util::Mutex registry_mutex_;  // tools_ and prompts_ change while serving
  std::vector<std::shared_ptr<const Tool>> tools_ GUARDED_BY(registry_mutex_);
  std::vector<std::shared_ptr<const Prompt>> prompts_ GUARDED_BY(registry_mutex_);
  std::vector<Resource> resources_;
  std::vector<ResourceTemplate> templates_;
  CompletionHandler completion_;
  /// Extension id -> settings (serialised object), in declaration order.
  std::vector<std::pair<std::string, std::string>> extensions_;
  std::map<std::string, MethodHandler, std::less<>> methods_;
  bool logging_ = false;
  bool subscriptions_ = false;
  std::size_t page_size_ = 0;
  std::function<void(std::stop_token)> background_;
  bool stdio_ = false;
  util::Mutex stdout_mutex_;  // one writer at a time keeps lines whole

  util::Mutex sessions_mutex_;
  std::map<std::string, std::shared_ptr<detail::Session>, std::less<>> sessions_ GUARDED_BY(sessions_mutex_);
  util::Mutex listeners_mutex_;
  std::vector<std::shared_ptr<Listener>> listeners_ GUARDED_BY(listeners_mutex_);
};

/// A command-line flag of one server, taking one value. `apply` returns
/// false when the value is invalid.
struct Flag {
  std::string name;  ///< e.g. "--tools"
  std::string help;
  std::function<bool(std::string_view value)> apply;
};

/// The shared entry point: parses `--http PORT` (default: stdio),
/// `--era legacy|2026|both` (default legacy), `--help` and `extra` flags,
/// then serves. Returns the process exit code (2 on a usage error).
int run_main(Server& server, int argc, char** argv, const std::vector<Flag>& extra = {});

}  // namespace mcpgw::examples
