#pragma once
// The router: answers each MCP method for a client session, using the
// current catalog snapshot and the upstreams behind it.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <variant>

#include "catalog/catalog.hpp"
#include "saga/token.hpp"
#include "server/client_call.hpp"
#include "server/session.hpp"
#include "config/config.hpp"
#include "server/metrics.hpp"
#include "transport/downstream.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw::server {

class ClientCall;
class Progress;

class Router final : public transport::Handler {
 public:
  /// `session_closed` is told the id of every session that ends (to close
  /// per-client upstream connections).
  /// What the router tells the rest of the gateway.
  struct Hooks {
    /// The id of every session that ends (to close per-client upstream
    /// connections).
    std::function<void(const std::string& session)> session_closed;
    /// The most verbose log level any live session asked for changed (to
    /// pass it on to the upstreams).
    std::function<void(const std::string& level)> log_level;
  };
  /// `keyring` signs the requestState of suspended calls.
  Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
         std::shared_ptr<const saga::Keyring> keyring, Hooks hooks = {});
  ~Router() override;

  Result<std::shared_ptr<transport::Session>> open_session(const transport::ClientContext& ctx) override;
  void handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
              std::shared_ptr<transport::Exchange> exchange) override;
  void close_session(const std::shared_ptr<transport::Session>& session) override;
  std::vector<std::string> modes() const override;

  /// Uses `cfg` and `keyring` for requests from now on (reload).
  void set_config(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring);
  /// Tells every live session that a list changed (`what`: tools,
  /// resources or prompts).
  void list_changed(std::string_view what);
  /// Forwards an upstream's notifications/resources/updated to the sessions
  /// subscribed to that resource.
  void resource_updated(const upstream::Upstream& origin, const jsonrpc::Message& msg);
  /// Waits for queued calls and stops the worker threads.
  void drain();

 private:
  /// The work of one request on upstreams, given the way back to its
  /// client, the signal that cancels it and its progress reporter.
  using Work = std::function<upstream::Reply(const std::shared_ptr<ClientCall>&, CancelSignal&,
                                             const std::shared_ptr<Progress>&)>;
  struct Parked;
  /// Calls suspended at once, at most (each holds an upstream request open).
  static constexpr std::size_t kMaxParked = 256;

  std::shared_ptr<const config::Config> config() const;
  std::shared_ptr<const saga::Keyring> keyring() const;
  /// A request of a stateless (2026-07-28) client, on `parent` (the HTTP
  /// request's own session, or the stdio client's).
  void handle_stateless(const std::shared_ptr<McpSession>& parent, jsonrpc::Message msg,
                        std::shared_ptr<transport::Exchange> ex);
  /// dispatch() plus, for a stateless client, what the revision adds to results.
  std::string answer(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  std::string dispatch(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  /// Runs `work` for `m` with a way back to its client: streamed to a
  /// stateful client, suspended and resumed for a stateless one. `target`
  /// and `args` identify the request in its requestState.
  std::string execute(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex, const std::string& target,
                      const json::Value* args, Work work);
  std::string suspendable(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex,
                          const std::string& target, const json::Value* args, Work work);
  /// What a suspendable call came to: its final reply, or the questions its
  /// client must answer first.
  using Outcome = std::variant<upstream::Reply, std::vector<Question>>;
  /// Runs `work` (when `parked` is null: a fresh call, or a replay answered
  /// from `answers`) or resumes `parked` with `answers`, until it ends or
  /// asks; `parked` is then the call to park. `sagas`: the client answers
  /// whatever it is asked (no capability check).
  Outcome drive(McpSession& s, transport::Exchange& ex, std::shared_ptr<Parked>& parked, const json::Value& answers,
                const json::Value* progress_token, Work work, bool sagas);
  /// The suspended call a token's state names, taken out of the registry;
  /// null when this process has none (another process, a restart, expiry).
  std::shared_ptr<Parked> take_parked(const json::Value& state);
  /// Keeps `parked` until resumed or `ttl`; sets `error` when full.
  void park(const std::shared_ptr<Parked>& parked, std::chrono::seconds ttl, std::string& error);
  /// The work of a tools/call of `tool` by `s` (chain resolution included);
  /// it owns everything it reads, so it may outlive the request.
  Work tool_work(McpSession& s, std::shared_ptr<const catalog::Snapshot> snap, std::size_t mode,
                 const catalog::ExposedTool& tool, std::shared_ptr<json::Document> arguments,
                 std::shared_ptr<json::Document> meta);
  /// tools/callSaga and tools/resumeSaga (seed 004).
  std::string call_saga(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  std::string resume_saga(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  /// The saga answer for `outcome`: the final CallToolResult, or the
  /// suspended state with a new sagaToken and the steps.
  std::string saga_reply(McpSession& s, const jsonrpc::Message& m, Outcome outcome, std::shared_ptr<Parked>& parked,
                         const std::string& tool, const json::Value& arguments);
  /// Registers `msg` in `parent`'s requests in flight (for cancellation)
  /// and answers it for `s`, on this thread or the pool.
  void run(const std::shared_ptr<McpSession>& parent, const std::shared_ptr<McpSession>& s, jsonrpc::Message msg,
           std::shared_ptr<transport::Exchange> ex);
  std::string discover(McpSession& s, const jsonrpc::Message& m);
  /// subscriptions/listen: acknowledges, then streams the chosen
  /// notifications until the client goes away.
  void listen(const std::shared_ptr<McpSession>& s, const jsonrpc::Message& m, std::shared_ptr<transport::Exchange> ex);
  void end_listen(const std::shared_ptr<McpSession>& s);
  /// Sends `method` (with `uri`, when not empty) to the listens for which
  /// `wants` is true, tagged with each one's subscription id.
  void notify_listeners(std::string_view method, const std::string& uri,
                        const std::function<bool(const McpSession&)>& wants);
  std::string initialize(McpSession& s, const jsonrpc::Message& m);
  /// Calls the welcome tool of `s`'s mode; its text, or "" (none, failed).
  std::string welcome_text(const McpSession& s, const config::Config& cfg);
  std::string list_tools(McpSession& s, const jsonrpc::Message& m);
  std::string call_tool(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  std::string read_resource(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  std::string subscribe(McpSession& s, const jsonrpc::Message& m, bool on);
  std::string get_prompt(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  std::string complete(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
  void on_notification(McpSession& s, const jsonrpc::Message& m);
  /// Drops `s`'s subscriptions (session end), unsubscribing upstream when
  /// it was the last subscriber.
  void unsubscribe_all(McpSession& s);
  /// Sends `note` to every live session for which `wants` (called under the
  /// session's lock) is true.
  void notify_sessions(const std::string& note, const std::function<bool(const McpSession&)>& wants);
  /// Counts subscribers per upstream resource; sends (un)subscribe upstream
  /// on the first and last.
  void count_subscription(const catalog::Route& r, int delta);

  mutable std::mutex cfg_mu_;
  std::shared_ptr<const config::Config> cfg_;
  std::shared_ptr<const saga::Keyring> keyring_;
  catalog::Catalog& catalog_;
  Metrics& metrics_;
  std::mutex sessions_mu_;
  std::set<std::shared_ptr<McpSession>> sessions_;
  std::mutex subs_mu_;
  std::map<std::pair<const upstream::Upstream*, std::string>, int> upstream_subs_;
  std::unique_ptr<WorkerPool> pool_;
  /// Runs the calls of stateless clients, which may outlive the request
  /// that started them.
  std::unique_ptr<WorkerPool> bridge_pool_;
  std::mutex parked_mu_;
  std::map<std::string, std::shared_ptr<Parked>> parked_;
  /// Ids of the saga tokens resumed, until they expire: a token resumes
  /// once (see README, "Sagas").
  std::mutex resumed_mu_;
  std::map<std::string, std::int64_t> resumed_;
  std::mutex listeners_mu_;
  std::set<std::shared_ptr<McpSession>> listeners_;
  Hooks hooks_;
  /// The level last passed to hooks_.log_level.
  std::string upstream_log_level_;
  /// Recomputes the most verbose level the sessions want; tells the hook
  /// when it changed.
  void update_log_level();
  /// Ids of the requests forwarded to clients ("mcpgw-N"): unique across
  /// sessions, so a client can never answer another's.
  std::atomic<std::uint64_t> next_forwarded_id_{1};
};

}  // namespace mcpgw::server
