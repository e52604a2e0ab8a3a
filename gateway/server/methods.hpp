#pragma once
// The method table: the one place that decides which handler answers an MCP
// method and how it runs. Handlers get one request context (whatever era the
// request came in, see mcp/codec.hpp) and return their answer as a JSON
// document; the router serialises it once.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "cluster/cluster.hpp"
#include "config/config.hpp"
#include "mcp/codec.hpp"
#include "saga/engine.hpp"
#include "saga/token.hpp"
#include "server/audit.hpp"
#include "server/metrics.hpp"
#include "server/sessions.hpp"
#include "server/subscriptions.hpp"
#include "tasks/registry.hpp"
#include "tasks/share.hpp"
#include "transport/downstream.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

/// A handler's answer to one request: a result, or a JSON-RPC error object.
class Answer {
 public:
  /// `result` as the request's result.
  static Answer result(json::Document result);
  /// The empty result `{}`.
  static Answer empty();
  /// `result` and, after its members, member `key` whose value is the JSON
  /// text `raw` as it is (an id in it keeps the digits its client wrote).
  static Answer result_with(json::Document result, std::string_view key, std::string raw);
  /// A JSON-RPC error `{code, message, data?}`.
  static Answer error(int code, std::string_view message, const json::Value* data = nullptr);
  /// -32602 "Invalid params: <why>".
  static Answer invalid_params(std::string_view why);
  /// What an upstream (or the work done for the request) replied, as is.
  static Answer relay(upstream::Reply reply);
  /// A list page: `{"<key>": [items], ...rest}`. The items are catalog
  /// definitions, already serialised and kept alive by `keep`: they are
  /// spliced in when the answer is written rather than parsed again.
  static Answer page(std::string_view key, std::vector<std::string_view> items, json::Document rest,
                     std::shared_ptr<const void> keep);

  bool is_error() const { return error_; }
  /// The error's JSON-RPC code; 0 for a result (-32603 for an error
  /// object without an integer code, which a relayed upstream may send).
  int error_code() const;
  /// The upstream session a relayed reply came from (upstream::Reply).
  const std::string& upstream_session() const { return upstream_session_; }
  /// The result (without a page's items) or the error object; a relayed
  /// result is built first.
  json::Document& body();
  /// A tool result still the bytes its upstream sent (relayed as they are
  /// by write() unless body() builds it); else null.
  const jsonrpc::RawResult* raw() const { return raw_.get(); }
  /// The response to request `id`, serialised (around a relayed result,
  /// which is not copied).
  SplicedText write(const jsonrpc::Id& id) const;

 private:
  /// What page() and result_with() splice into the result when written.
  /// Apart, because few answers have it and an Answer is kept in the
  /// coroutine frames a call passes through: small frames stay on the
  /// allocator's fast path.
  struct Spliced {
    std::string page_key;
    std::vector<std::string_view> page_items;
    std::shared_ptr<const void> keep;
    std::string raw_key, raw;
  };
  Answer(json::Document body, bool error) : body_(std::move(body)), error_(error) {}
  json::Document body_;
  bool error_;
  std::string upstream_session_;
  std::shared_ptr<const jsonrpc::RawResult> raw_;
  std::unique_ptr<Spliced> spliced_;
};

/// The configuration and token keys of the moment (replaced on reload).
class Settings {
 public:
  Settings(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring);
  std::shared_ptr<const config::Config> config() const;
  std::shared_ptr<const saga::Keyring> keyring() const;
  void set(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring);

 private:
  mutable util::Mutex mu_;
  std::shared_ptr<const config::Config> cfg_ GUARDED_BY(mu_);
  std::shared_ptr<const saga::Keyring> keyring_ GUARDED_BY(mu_);
};

/// What handlers work with: the gateway's parts, owned by the router.
struct Services {
  const Settings& settings;
  catalog::Catalog& catalog;
  Metrics& metrics;
  Sessions& sessions;
  Subscriptions& subscriptions;
  saga::Engine& engine;
  /// Ids of the requests forwarded to clients ("mcpgw-N"): unique across
  /// sessions, so a client can never answer another's.
  std::atomic<std::uint64_t>& forwarded_ids;
  Audit& audit;
  /// The I/O loop (suspendable calls start on strands of their own there).
  asio::any_io_executor io;
  /// The tasks created through this process (docs/protocol.md, "Tasks"), and what
  /// the replicas share of them.
  mcpgw::tasks::TaskRegistry& tasks;
  mcpgw::tasks::TaskShare& task_share;
  /// The configured upstream of that name, or null.
  std::function<std::shared_ptr<upstream::Upstream>(std::string_view)> upstream;
  /// The replicas' shared state; null for a process alone (no
  /// cluster.redis or cluster.secret) and on stdio.
  cluster::Cluster* cluster = nullptr;
  /// Where spans go (telemetry.otlp); null = none recorded.
  mcp::SpanSink* spans = nullptr;
};

/// One request as its handler sees it.
struct Request {
  /// The client's session; for a stateless request, the request's own,
  /// described by its envelope.
  std::shared_ptr<McpSession> session;
  const jsonrpc::Message& message;
  std::shared_ptr<transport::Exchange> exchange;
  const mcp::RequestContext& context;

  const jsonrpc::Id& id() const { return message.id(); }
  const json::Value* params() const { return message.params(); }
  /// `params._meta.progressToken`, or null.
  const json::Value* progress_token() const;
};

/// `params._meta.progressToken` of `m`, or null.
const json::Value* progress_token(const jsonrpc::Message& m);

/// How a method runs. Every method runs on the I/O loop, none blocks a
/// thread: what waits (for an upstream, the client, Redis, a stream's end)
/// is a coroutine. Only plugin handlers block, on the plugin pool.
enum class Runs {
  /// Cheap: answered at once on the calling I/O thread.
  Inline,
  /// Waits on upstreams, the client or the end of a stream: a coroutine on
  /// the strand that writes its answer (else a strand of its own), holding
  /// no thread while it waits; cancellable by notifications/cancelled and
  /// by its client going away.
  Async,
};

using RequestHandler = Answer (*)(Services&, Request&);
using TaskHandler = Task<Answer> (*)(Services&, Request&);
using NotificationHandler = void (*)(Services&, McpSession&, const jsonrpc::Message&);

/// One entry of the table.
struct Method {
  std::string_view name;
  Runs runs;
  RequestHandler answer = nullptr;  ///< Inline
  TaskHandler task = nullptr;       ///< Async
  /// False for a request that lasts as long as its client listens
  /// (subscriptions/listen): it has no server span.
  bool span = true;
  /// Answers from the whole catalog (initialize, server/discover, lists):
  /// while servers are in their first connection attempt it waits for them,
  /// up to startup_wait_ms, so that a client connecting at start-up gets
  /// the same answer as a later one. Calls, reads and gets wait only for
  /// the servers that may serve what they name.
  bool whole = false;
};

/// The entry of request method `name`, or null (-32601). Which era has the
/// method is the codec's decision (mcp/codec.hpp), made before.
const Method* find_method(std::string_view name);
/// The handler of notification `name`, or null (ignored).
NotificationHandler find_notification(std::string_view name);

// The handlers, by topic (lifecycle.cpp, tools.cpp, sagas.cpp,
// resources.cpp, prompts.cpp, skills.cpp, subscriptions.cpp).
Task<Answer> initialize(Services& sv, Request& r);
Task<Answer> discover(Services& sv, Request& r);
Answer ping(Services& sv, Request& r);
Answer set_log_level(Services& sv, Request& r);
void on_initialized(Services& sv, McpSession& s, const jsonrpc::Message& m);
void on_cancelled(Services& sv, McpSession& s, const jsonrpc::Message& m);
Answer list_tools(Services& sv, Request& r);
Task<Answer> call_tool(Services& sv, Request& r);
Task<Answer> call_saga(Services& sv, Request& r);
Task<Answer> resume_saga(Services& sv, Request& r);
Answer list_resources(Services& sv, Request& r);
Answer list_resource_templates(Services& sv, Request& r);
Task<Answer> read_resource(Services& sv, Request& r);
Task<Answer> subscribe(Services& sv, Request& r);
Task<Answer> unsubscribe(Services& sv, Request& r);
Answer list_prompts(Services& sv, Request& r);
Task<Answer> get_prompt(Services& sv, Request& r);
Task<Answer> complete(Services& sv, Request& r);
Answer list_skills(Services& sv, Request& r);
Task<Answer> get_skill(Services& sv, Request& r);
Task<Answer> read_directory(Services& sv, Request& r);
Task<Answer> listen(Services& sv, Request& r);
Task<Answer> get_task(Services& sv, Request& r);
Task<Answer> task_result(Services& sv, Request& r);
Task<Answer> list_tasks(Services& sv, Request& r);
Task<Answer> cancel_task(Services& sv, Request& r);
Task<Answer> update_task(Services& sv, Request& r);

/// `{"<key>": [the page of defs(i) for i < count], "nextCursor"?}` after the
/// request's cursor; `keep` keeps the definitions alive.
Answer page_of(Request& r, std::string_view key, std::size_t count,
               const std::function<std::string_view(std::size_t)>& defs, std::size_t page_size,
               std::shared_ptr<const void> keep);

/// The catalog once the servers still in their first connection attempt
/// have connected or had startup_wait_ms (or the client went away): where a
/// read, get or completion whose target the current catalog cannot route
/// at start-up looks again.
Task<std::shared_ptr<const catalog::Snapshot>> after_startup(Services& sv, Request& r);

/// The client a request's upstream calls are made for. A stateless HTTP
/// request has no session to key a per-client upstream connection by: it
/// uses the shared one.
upstream::Caller caller_of(const McpSession& s);

/// Removes what a stateless client sends back for a suspended call (the
/// gateway's, not the upstream's) and the stateless envelope.
void strip_client_state(json::Value& params);

}  // namespace mcpgw::server
