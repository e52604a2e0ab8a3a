#pragma once
// Where a tool's calls go: an upstream server or a composite plugin. The
// catalog, the chain resolver and the router see tools through this
// interface only, so a composite tool is listed, filtered, chained and
// called like a proxied one.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonrpc/json.hpp"
#include "jsonrpc/scan.hpp"
#include "mcp/span.hpp"
#include "mcp/trace.hpp"
#include "util/cancel.hpp"
#include "util/event.hpp"

namespace mcpgw::upstream {

/// The client a call is made for.
struct Caller {
  std::string principal;  ///< "" without auth
  std::string mode;       ///< "all" or a configured mode
  std::string session;    ///< the client's session id
  /// The client's headers named by some server's forward_headers
  /// (lower-case names); each upstream sends the ones it lists.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The revision the client negotiated ("" unknown): a per_client
  /// connection with `protocol: auto` speaks the same era.
  std::string protocol;
  /// The client's own OAuth token ("" without one): the subject an upstream
  /// of grant token_exchange exchanges; never sent anywhere else.
  std::string subject_token;
};

/// Who a call goes upstream as, where an upstream takes OAuth tokens: for
/// the audit log (never a token).
struct UpstreamIdentity {
  std::string grant;     ///< client_credentials | authorization_code | token_exchange
  std::string identity;  ///< "client <client_id>", or the principal
};

/// One call an origin made to an upstream server on a client's behalf (a
/// plugin's upstream call), as it ended: for the audit log and metrics.
struct UpstreamCall {
  std::string server;
  std::string tool;
  const json::Value* arguments = nullptr;  ///< may be null
  bool known_tool = false;  ///< the server lists the tool (bounds metric labels)
  std::string_view outcome;  ///< ok | error | cancelled | timeout
  double ms = 0;
};

/// What a call produced: the result object, or a JSON-RPC error object
/// (`{code, message, data?}`) to relay to the client.
struct Reply {
  bool rpc_error = false;
  json::Document body;
  /// The server failed, not the call: no answer (a transport failure or a
  /// timeout), an HTTP 5xx, a JSON-RPC internal or parse error. What a
  /// circuit breaker counts; a tool's isError or -32602 is about the call.
  bool server_failed = false;
  /// The upstream session that answered (an HTTP server of the session
  /// revisions; "" otherwise): a task it created lives in that session.
  std::string session{};
  /// Set when the result is still the bytes it came in (a call made with
  /// CallOptions::relay): `body` is empty until materialize().
  std::shared_ptr<const jsonrpc::RawResult> raw{};

  /// Whether the result is a tool error (`isError`), built or not.
  bool tool_error() const {
    if (raw) return raw->facts.is_error;
    const json::Value* e = json::find(body, "isError");
    return e && e->IsTrue();
  }
  /// Builds `body` from `raw` (once): what reads or changes the result's
  /// content calls it first.
  void materialize();

  /// A JSON-RPC error reply `{code, message}`.
  static Reply error(int code, std::string_view message) {
    Reply r{true, json::Document(rapidjson::kObjectType)};
    r.body.AddMember("code", code, r.body.GetAllocator());
    r.body.AddMember("message", json::str(message, r.body.GetAllocator()), r.body.GetAllocator());
    return r;
  }
};

/// `_meta` key the gateway puts on a request an upstream sends to a client:
/// its place in the order the upstream sent them (1, 2, ...), since they
/// are relayed by coroutines of their own, in any order. Stripped before the
/// client sees it.
inline constexpr std::string_view kInputOrder = "mcpgw/inputOrder";
/// `_meta` key of such a request: the inputRequests key a client of the
/// stateless revision answers it under (so that a replayed call asking the
/// same thing again finds the answer). Stripped before the client sees it.
inline constexpr std::string_view kInputKey = "mcpgw/inputKey";

/// The way back to the client a call is made for: what an upstream sends
/// that client while the call runs (MCP's server-to-client requests and
/// notifications). Implemented by the server module (server::ClientCall),
/// one per client call.
class ClientChannel {
 public:
  virtual ~ClientChannel() = default;
  /// Forwards request `method` (sampling/createMessage, elicitation/create,
  /// roots/list) to the client and waits for its answer, until `deadline`
  /// or `cancel`. Returns the result, or a JSON-RPC error object for the
  /// upstream (also when the client did not declare the capability).
  virtual Task<Reply> request(std::string_view method, const json::Value* params,
                              std::chrono::steady_clock::time_point deadline, CancelSignal& cancel) = 0;
  /// Forwards a notification (notifications/message); dropped when the
  /// client cannot take it now.
  virtual void notify(std::string_view method, const json::Value* params) = 0;
  /// The client's session id, to tell calls of different clients apart.
  virtual const std::string& session() const = 0;
  /// What the client declared it can do (ClientCapabilities), for upstreams
  /// of the stateless revision, which are told per request.
  virtual json::Document capabilities() const = 0;
  /// The least severe log level the client wants; "" for none.
  virtual std::string log_level() const = 0;
  /// Whether request() can reach the client now: its call has a stream to
  /// send on, or suspends (stateless revision, sagas). False for a client
  /// that takes only a JSON response.
  virtual bool can_ask() const { return true; }
};

struct CallOptions {
  std::chrono::steady_clock::time_point deadline;
  CancelSignal* cancel = nullptr;  ///< may be null
  /// When set, a progress token is sent upstream and its
  /// notifications/progress params arrive here (token already removed).
  std::function<void(json::Value& params)> on_progress;
  const Caller* caller = nullptr;  ///< may be null (e.g. the welcome call of a stdio client)
  /// Where server-to-client traffic of this call goes; null = nowhere (the
  /// upstream's requests get an error).
  std::shared_ptr<ClientChannel> client;
  /// The call's trace context: each upstream request carries a child span
  /// of it (header over HTTP, `_meta.traceparent` over stdio). None: no
  /// traceparent is sent.
  std::optional<mcp::TraceContext> trace;
  /// Where the spans of this call's upstream requests (and of a plugin's
  /// run) go, as children of `trace`; null = none recorded.
  mcp::SpanSink* spans = nullptr;
  /// Told of every upstream call a composite (plugin) tool makes for this
  /// call; may be empty.
  std::function<void(const UpstreamCall&)> on_upstream_call;
  /// The result may come back as the bytes the upstream sent (Reply::raw):
  /// set for a client's own call whose answer is relayed to it.
  bool relay = false;
  /// The call's arguments as the bytes the client sent (the arguments
  /// given to call_tool are what they mean): a tool call sends these on as
  /// they are rather than write the arguments again. Set only while the
  /// arguments are the client's own, unchanged. May be null.
  std::shared_ptr<const jsonrpc::RawArguments> raw_arguments;
  /// Asked before a composite (plugin) tool calls tool `tool` (its own
  /// name) of server `server` for this call: a reply refuses the call, which
  /// then never reaches the server (the policies); may be empty.
  std::function<std::optional<Reply>(std::string_view server, std::string_view tool, const json::Value* arguments)>
      vet_upstream_call;
  /// Given what a composite (plugin) tool's upstream call answered before
  /// the plugin sees it, to change it (redaction); may be empty.
  std::function<void(Reply& reply)> screen_upstream_reply;
  /// Set: the request is about MCP tasks. A tools/call may then become a
  /// task: a server of the session revisions gets these as its `task`
  /// params, one of 2026-07-28 is told the client declares the tasks
  /// extension (which it is told for tasks/* requests too). Unset, neither
  /// hears of tasks.
  const json::Value* task = nullptr;
  /// Non-empty: sent in this session of the server rather than the
  /// connection's own (a task created through another replica's session
  /// lives there). A session the server no longer knows is not renewed.
  std::string upstream_session;
};

/// The outcome word of a reply for audit and metrics: ok, error (an isError
/// result or a JSON-RPC error), cancelled (`cancel` fired) or timeout
/// (past `deadline`).
std::string_view outcome_of(const Reply& r, const CallOptions& opts);

/// Something that serves tools.
class ToolOrigin {
 public:
  virtual ~ToolOrigin() = default;
  /// Server or plugin name, for messages, logs and metrics.
  virtual const std::string& name() const = 0;
  /// Rank among welcome tools under `welcome.strategy: priority`.
  virtual int welcome_priority() const = 0;
  /// Whether the origin has tool `tool` (its own name), exposed or not.
  virtual bool has_tool(std::string_view tool) const = 0;
  /// Default deadline for a call starting now.
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  /// Calls tool `tool` (the origin's own name). Never throws; failures are
  /// isError results naming the origin, or a JSON-RPC error to relay.
  virtual Task<Reply> call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                                const CallOptions& opts) = 0;
  /// Who a call of `caller` goes upstream as; nullopt where no OAuth token
  /// is involved.
  virtual std::optional<UpstreamIdentity> identity_for(const Caller* caller) const {
    (void)caller;
    return std::nullopt;
  }
};

/// Asks the client of `opts` the `inputRequests` of `result` (an
/// input_required result: key → {method, params}), all at once, in whatever
/// form the client speaks, and returns its results by key. A client's
/// refusal ends it all with that JSON-RPC error, or with
/// `errors_as_answers` is given as the answer `{"error": {...}}`. `who`
/// names the asker in messages.
Task<Result<Reply>> ask_client(const json::Value& result, const CallOptions& opts, std::string who,
                               bool errors_as_answers);

}  // namespace mcpgw::upstream
