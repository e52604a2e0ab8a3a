#pragma once
// The router: what the downstream transports hand MCP messages to. It
// routes answers to the calls that wait for them, notifications and requests
// through the method table (server/methods.hpp) after the era codec
// (mcp/codec.hpp), runs what waits as coroutines on the I/O loop (a
// request's, or a session end's), never blocking the calling I/O thread,
// and writes each answer once.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>

#include "server/methods.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

class Router final : public transport::Handler {
 public:
  /// What the router tells the rest of the gateway.
  struct Hooks {
    /// The id of every session that ends (to close per-client upstream
    /// connections): a coroutine the session's end awaits, on the loop.
    std::function<Task<>(std::string session)> session_closed;
    /// The most verbose log level any live session asked for changed (to
    /// pass it on to the upstreams).
    std::function<void(const std::string& level)> log_level;
    /// The configured upstream of a name, or null (tasks route to it).
    std::function<std::shared_ptr<upstream::Upstream>(std::string_view name)> upstream;
  };
  /// `keyring` signs the requestState of suspended calls and saga tokens;
  /// requests run on `io`.
  Router(std::shared_ptr<const config::Config> cfg, catalog::Catalog& catalog, Metrics& metrics,
         std::shared_ptr<const saga::Keyring> keyring, asio::any_io_executor io, Hooks hooks = {});
  ~Router() override;

  Result<std::shared_ptr<transport::Session>> open_session(const transport::ClientContext& ctx) override;
  void handle(const std::shared_ptr<transport::Session>& session, jsonrpc::Message msg,
              std::shared_ptr<transport::Exchange> exchange) override;
  void close_session(const std::shared_ptr<transport::Session>& session) override;
  std::vector<std::string> modes() const override;
  Result<std::shared_ptr<transport::Session>> resume_session(const transport::ClientContext& ctx,
                                                             const transport::SealedSession& sealed) override;
  void stream_opened(const std::shared_ptr<transport::Session>& session) override;
  void stream_closed(const std::shared_ptr<transport::Session>& session) override;

  /// Records a span of every request, and of the upstream work done for
  /// it, into `spans` (which outlives the router's serving), with secrets
  /// masked first under redact:; before serving.
  void set_spans(mcp::SpanSink* spans);
  /// Shares sessions' state with the other replicas through `cluster`
  /// (which outlives the router's serving); before serving.
  void set_cluster(cluster::Cluster& cluster);

  /// Uses `cfg` and `keyring` for requests from now on (reload).
  void set_config(std::shared_ptr<const config::Config> cfg, std::shared_ptr<const saga::Keyring> keyring);
  /// Tells every live session that a list changed (`what`: tools,
  /// resources or prompts).
  void list_changed(std::string_view what);
  /// Sends notification `method` to session `id` when it lives here (on its
  /// server-to-client stream; dropped when it has none open).
  void notify_session(const std::string& id, std::string_view method, const json::Value* params);
  /// Forwards an upstream's notifications/resources/updated to the sessions
  /// subscribed to that resource.
  void resource_updated(const upstream::Upstream& origin, const jsonrpc::Message& msg);
  /// A reload replaced server `was` with `now`: the resource subscriptions
  /// held on it move to `now` (in the background).
  void upstream_replaced(std::shared_ptr<upstream::Upstream> was, std::shared_ptr<upstream::Upstream> now);
  /// Forwards an upstream's notifications/tasks/status to the session that
  /// created the task here, under the gateway's id.
  void task_status(const std::string& server, const jsonrpc::Message& msg);
  /// Tasks recorded by this process (for metrics).
  std::size_t tasks() const { return tasks_.size(); }
  /// Waits for the requests in flight and the session ends under way (off
  /// the loop: it blocks).
  void drain();
  /// The audit log (reopened on SIGHUP).
  Audit& audit() { return audit_; }
  /// Live sessions per principal, most first (the status page).
  std::vector<std::pair<std::string, std::size_t>> sessions_by_principal() { return sessions_.count_by_principal(); }
  /// Calls suspended while their client answers (MRTR, sagas).
  std::size_t suspended_calls() const;
  void refused(const transport::ClientContext& ctx, std::string_view reason, std::string_view detail,
               std::string_view tool) override;

 private:
  /// Answers request `msg` of `parent` (the transport's session), after
  /// the era codec, through the method table.
  void request(const std::shared_ptr<McpSession>& parent, jsonrpc::Message msg,
               std::shared_ptr<transport::Exchange> ex);
  /// Answers request `m` of `s` through `method` in a coroutine (an inline
  /// method too, when it answers `after_startup`: once the servers in their
  /// first attempt have connected or had startup_wait_ms); the request is in
  /// `parent`'s requests in flight meanwhile (notifications/cancelled).
  void run_async(const std::shared_ptr<McpSession>& parent, const std::shared_ptr<McpSession>& s,
                 const Method& method, std::shared_ptr<jsonrpc::Message> m, std::shared_ptr<transport::Exchange> ex,
                 std::shared_ptr<mcp::RequestContext> ctx, std::shared_ptr<mcp::SpanTimer> span,
                 bool after_startup);
  /// The answer of `m`, in the form its era wants, serialised.
  SplicedText finish(Answer answer, const jsonrpc::Message& m, const mcp::RequestContext& ctx);
  /// Runs `work` (`what`, for the log) as a coroutine on a strand of the
  /// loop, counted in flight (drain() waits for it): what a transport's
  /// call on an I/O thread starts and nobody awaits (a session's end).
  void spawn(std::string_view what, std::function<Task<>()> work);
  /// Makes this process's subscriptions of `s` (whose stream is here) those
  /// the cluster holds for it.
  void load_subscriptions(const std::shared_ptr<McpSession>& s);

  /// Requests answered by coroutines and spawn()'s work, shared with them:
  /// drain() waits for them (on the main thread, where a condition variable
  /// may block), and one destroyed with the loop later still counts itself
  /// out. Counting is an atomic add on the request path; the mutex is taken
  /// only by the one that brings the count to zero, to wake the waiter.
  class InFlight {
   public:
    void enter() { count_.fetch_add(1); }
    void leave() {
      // Decrement, then lock and notify: a wait_idle() that saw the count
      // above zero under the lock is waiting by the time this lock is had.
      if (count_.fetch_sub(1) != 1) return;
      util::MutexLock lk(mu_);
      idle_.notify_all();
    }
    /// Until nothing is in flight (off the loop: it blocks).
    void wait_idle() {
      util::UniqueLock lk(mu_);
      idle_.wait(lk.native(), [&] { return count_.load() == 0; });
    }

   private:
    std::atomic<std::size_t> count_{0};
    /// Guards no field: the condition variable's, so that a leave() cannot
    /// notify between wait_idle()'s check and its wait.
    util::Mutex mu_;
    std::condition_variable idle_;
  };

  Settings settings_;
  /// set_spans' sink behind the masking of secrets (server/redaction).
  std::unique_ptr<mcp::SpanSink> redacting_spans_;
  asio::any_io_executor io_;
  std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
  catalog::Catalog& catalog_;
  Metrics& metrics_;
  Hooks hooks_;
  Sessions sessions_;
  Subscriptions subscriptions_;
  saga::Engine engine_;
  std::atomic<std::uint64_t> forwarded_ids_{1};
  Audit audit_;
  tasks::TaskRegistry tasks_;
  tasks::TaskShare task_share_{tasks_};
  Services services_;
};

}  // namespace mcpgw::server
