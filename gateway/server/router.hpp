#pragma once
// The router: answers each MCP method for a client session, using the
// current catalog snapshot and the upstreams behind it.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "catalog/catalog.hpp"
#include "config/config.hpp"
#include "server/metrics.hpp"
#include "transport/downstream.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw::server {

class ClientCall;

/// A client session as the router sees it.
class McpSession final : public transport::Session, public std::enable_shared_from_this<McpSession> {
 public:
  std::mutex mu;
  std::string mode;  ///< the mode this session sees ("all" or a configured one)
  std::string protocol_version;
  json::Document client_capabilities{rapidjson::kObjectType};
  std::string client_name;
  std::string log_level = "info";
  bool initialized = false;
  /// The client declared sampling, elicitation or roots: its calls run
  /// where they can stream the requests upstreams send it.
  bool answers_requests = false;
  /// Requests forwarded to this client and not answered yet, by our id.
  std::map<std::string, std::weak_ptr<ClientCall>> forwarded;
  /// Requests in flight by their JSON id text, for notifications/cancelled.
  std::map<std::string, std::weak_ptr<transport::Exchange>> inflight;
  /// Exposed resource URIs this session subscribed to.
  std::set<std::string> subscriptions;
};

class Router final : public transport::Handler {
 public:
  /// `session_closed` is told the id of every session that ends (to close
  /// per-client upstream connections).
  Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
         std::function<void(const std::string& session)> session_closed = {});
  ~Router() override;

  Result<std::shared_ptr<transport::Session>> open_session(const transport::ClientContext& ctx) override;
  void handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
              std::shared_ptr<transport::Exchange> exchange) override;
  void close_session(const std::shared_ptr<transport::Session>& session) override;
  std::vector<std::string> modes() const override;

  /// Uses `cfg` for requests from now on (reload).
  void set_config(std::shared_ptr<const config::Config> cfg);
  /// Tells every live session that a list changed (`what`: tools,
  /// resources or prompts).
  void list_changed(std::string_view what);
  /// Forwards an upstream's notifications/resources/updated to the sessions
  /// subscribed to that resource.
  void resource_updated(const upstream::Upstream& origin, const jsonrpc::Message& msg);
  /// Waits for queued calls and stops the worker threads.
  void drain();

 private:
  std::shared_ptr<const config::Config> config() const;
  std::string dispatch(McpSession& s, const jsonrpc::Message& m, transport::Exchange& ex);
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
  catalog::Catalog& catalog_;
  Metrics& metrics_;
  std::mutex sessions_mu_;
  std::set<std::shared_ptr<McpSession>> sessions_;
  std::mutex subs_mu_;
  std::map<std::pair<const upstream::Upstream*, std::string>, int> upstream_subs_;
  std::unique_ptr<WorkerPool> pool_;
  std::function<void(const std::string&)> session_closed_;
  /// Ids of the requests forwarded to clients ("mcpgw-N"): unique across
  /// sessions, so a client can never answer another's.
  std::atomic<std::uint64_t> next_forwarded_id_{1};
};

}  // namespace mcpgw::server
