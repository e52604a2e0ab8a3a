#pragma once
// The running gateway: upstreams, catalog, router and the downstream
// transport, wired together and started/stopped in the right order.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "catalog/catalog.hpp"
#include "cluster/cluster.hpp"
#include "config/config.hpp"
#include "integrity/guard.hpp"
#include "oauth/manager.hpp"
#include "plugin/plugin.hpp"
#include "server/metrics.hpp"
#include "server/router.hpp"
#include "telemetry/exporter.hpp"
#include "transport/admin_server.hpp"
#include "util/worker_pool.hpp"
#include "transport/http_server.hpp"
#include "transport/io.hpp"
#include "transport/stdio_server.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::server {

/// What `mcpgw check` and the log say of a tool integrity reported.
std::string integrity_warning(const integrity::ToolReport& r);

class Gateway final : public upstream::Listener {
 public:
  /// `io_threads`: threads of the I/O loop; 0 = one per core.
  explicit Gateway(config::Config cfg, unsigned io_threads = 0);
  ~Gateway() override;

  /// Loads the plugins, starts every upstream connecting in the background
  /// and publishes the catalog of what is there (the plugins' tools). A
  /// plugin that fails to load is logged and left out.
  void start_upstreams();
  /// Waits up to `timeout` until the pins were read from their store (Redis
  /// answers once start_upstreams() connected it; at once with pins: off);
  /// an error naming the store and why not.
  Result<void> await_pins(std::chrono::milliseconds timeout);
  /// Waits (bounded by their timeouts) until every upstream has connected or
  /// failed once, then checks the catalog: fails when it is invalid (two
  /// upstream tools under one exposed name, a welcome.tool that does not
  /// exist). Logs "start-up: every upstream tried once" when it is over.
  Result<void> await_upstreams();
  /// Starts the span exporter when telemetry.otlp.endpoint is set (before
  /// serving; `mcpgw check` does not).
  Result<void> start_telemetry();
  /// Creates the HTTP server and binds its port (before the upstreams
  /// start, so a port in use fails fast); the error names the address.
  Result<void> bind_http();
  /// Serves HTTP (after bind_http()) until stop(); returns the exit code.
  int serve_http();
  /// Serves one client on stdin/stdout until EOF or stop().
  int serve_stdio(const std::string& mode);
  /// Begins a graceful shutdown: stop accepting, let calls finish for up to
  /// shutdown_grace_ms, then cut the upstreams. Safe from any thread.
  void stop();
  /// Stops every upstream now, failing the calls still waiting on them (the
  /// end of the shutdown grace period).
  void cut_upstreams();

  /// Re-reads `path` and applies it without dropping client sessions: new
  /// upstreams start; an upstream whose settings changed gets a new
  /// connection beside the old one, which keeps serving until the new one
  /// is up (or failed once); a replaced or removed one is stopped once its
  /// calls in flight have finished, within shutdown_grace_ms. On an
  /// invalid file nothing changes.
  Result<void> reload(const std::string& path);

  void on_tools_changed(const std::string& server) override;
  void on_upstream_notification(const std::string& server, jsonrpc::Message& msg) override;
  /// `text` with what the detectors in force find masked (redact:).
  std::string log_text(std::string_view text) const override;
  void on_health(const std::string& server, bool up) override;
  void on_circuit(const std::string& server, upstream::Breaker::State state) override;

  /// The current snapshot (for `mcpgw check`).
  std::shared_ptr<const catalog::Snapshot> snapshot() const { return catalog_.snapshot(); }
  std::vector<std::shared_ptr<upstream::Upstream>> upstreams() const;
  std::vector<std::shared_ptr<plugin::Plugin>> plugins() const;
  /// Why configured plugins are not loaded (for `mcpgw check`).
  std::vector<std::string> plugin_errors() const;
  /// Why the gateway cannot serve its OAuth upstreams (a private key or a
  /// token file that does not load); "" when it can.
  const std::string& startup_error() const { return startup_error_; }
  /// The pins (integrity.pins).
  integrity::Guard& pins() { return *pins_; }
  /// Where client messages go (`mcpgw call` speaks to it as a client would).
  transport::Handler& handler() { return router_; }
  /// The upstreams' OAuth clients; null when they could not be made.
  oauth::Manager* oauth() { return oauth_.get(); }
  /// `mcpgw check`'s report of each OAuth upstream (discovery, the
  /// gateway's own credentials), by server; off the loop, waits.
  std::map<std::string, oauth::CheckReport> check_oauth(std::chrono::milliseconds timeout);

 private:
  void stop_upstreams();
  /// Stops `u` (`why`: "replaced" or "removed" by a reload) once its calls
  /// in flight have finished, or shutdown_grace_ms has passed, when those
  /// still running are told so; in the background.
  void retire(std::shared_ptr<upstream::Upstream> u, std::string_view why);
  /// Loads `cfg`'s plugins, keeping the loaded ones whose entry is unchanged.
  void load_plugins(const config::Config& cfg);
  /// The keys of `cfg`'s sagas section (a per-process one when it has none).
  static std::shared_ptr<const saga::Keyring> make_keyring(const config::Config& cfg);
  std::shared_ptr<upstream::Upstream> find_upstream(std::string_view name) const;
  /// SIGHUP's part that does not depend on the file: the audit log
  /// reopened, the pins read again.
  void reread_files();

  std::shared_ptr<const config::Config> config() const;
  /// /readyz: 200 when every required server is connected and no plugin
  /// is down (and Redis read, when shared), else 503; the JSON names what
  /// is not (server/readiness.cpp).
  transport::SimpleResponse readiness();
  /// Registers /healthz, /readyz and /metrics on `server` (the MCP
  /// listener or the admin one); `mcp` is the MCP listener, whose streams
  /// the metrics count.
  template <typename Server>
  void add_operator_endpoints(Server& server, const transport::HttpServer& mcp);
  /// The status page's data (/status.json) and catalog (/status/catalog.json).
  std::string status_document();
  std::string catalog_document();
  /// Registers the OAuth pages on `mcp` (start page, callback, client
  /// metadata documents) and revocation on `admin` (or `mcp` without one).
  void add_oauth_endpoints(transport::HttpServer& mcp, transport::AdminServer* admin);
  /// --stdio: the consent pages alone on listen.host:listen.port, when some
  /// server needs them (null otherwise, or when the port is taken: logged).
  std::unique_ptr<transport::AdminServer> serve_consent_pages();
  /// Makes the OAuth clients and their token store (Redis with
  /// cluster.redis, else upstream_oauth.store, else memory).
  Result<std::unique_ptr<oauth::Manager>> make_oauth(const config::Config& cfg);
  std::shared_ptr<upstream::Upstream> make_upstream(const config::Server& s);
  // --- tool integrity (server/integrity.cpp) ---
  /// What on_tools_changed() names when the pins changed under it.
  static constexpr const char* kPinsChanged = "pins";
  /// integrity.store's file, Redis with cluster.redis, else memory; null
  /// when the file cannot be read (startup_error_ says why).
  std::shared_ptr<integrity::Store> make_pin_store(const config::Config& cfg);
  /// Connects the cluster's Redis (cluster.redis), once; before the
  /// upstreams, whose first catalog judges against the pins kept there.
  void start_cluster();
  /// Reads the pins and watches their store.
  void start_pins();
  /// Another process changed the pins: read them again and rebuild.
  void pins_changed();
  catalog::IntegrityInput integrity_input(const config::Config& cfg) const;
  /// Writes what build `next` added to the pins; logs, audits and counts
  /// what it found that `old` had not.
  void integrity_reported(const catalog::Snapshot& old, const catalog::Snapshot& next);

  // First member: every socket, pipe and timer below lives on it, so it is
  // destroyed last.
  transport::Io io_;
  mutable util::Mutex state_mu_;
  std::shared_ptr<const config::Config> cfg_ GUARDED_BY(state_mu_);
  /// telemetry.otlp, when set. Before everything that records spans into
  /// it (the router, the upstreams' calls), so it outlives them. No lock:
  /// set by start_telemetry() on the main thread before serving, read by
  /// ~Gateway on that thread.
  std::shared_ptr<telemetry::Exporter> exporter_;
  std::vector<std::shared_ptr<upstream::Upstream>> upstreams_ GUARDED_BY(state_mu_);
  /// Upstreams a reload took out of upstreams_ that may still finish calls.
  std::vector<std::weak_ptr<upstream::Upstream>> retiring_ GUARDED_BY(state_mu_);
  std::shared_ptr<plugin::Host> plugin_host_;
  std::vector<std::shared_ptr<plugin::Plugin>> plugins_ GUARDED_BY(state_mu_);
  std::vector<std::string> plugin_errors_ GUARDED_BY(state_mu_);
  Metrics metrics_;
  catalog::Catalog catalog_;
  // Before the router, whose hooks it calls: stopped in ~Gateway first.
  std::unique_ptr<cluster::Cluster> cluster_;
  /// After the cluster: its token store may be the cluster's Redis.
  std::unique_ptr<oauth::Manager> oauth_;
  /// The hidden-instruction rules, compiled once.
  const integrity::Scanner scanner_;
  /// After the cluster: the pins' store may be its Redis. Never null.
  std::unique_ptr<integrity::Guard> pins_;
  std::string startup_error_;
  /// One catalog rebuild at a time (on_tools_changed, on the rebuild thread
  /// or off the loop: start-up, a reload): each reads the snapshot the one
  /// before published. It guards no field; the catalog has a lock of its own.
  util::Mutex rebuild_mu_;
  Router router_;
  util::Mutex serve_mu_;
  std::unique_ptr<transport::HttpServer> http_ GUARDED_BY(serve_mu_);
  std::unique_ptr<transport::AdminServer> admin_ GUARDED_BY(serve_mu_);  ///< with `admin:` set
  /// No lock: bind_http() sets it and serve_http() reads it, both on the
  /// main thread.
  int http_port_ = 0;
  transport::StdioServer* stdio_ GUARDED_BY(serve_mu_) = nullptr;
  bool stopping_ GUARDED_BY(serve_mu_) = false;
  std::once_flag upstreams_stopped_;
  std::once_flag cluster_started_;
  /// Catalog rebuilds an upstream asks for (it tells on the I/O loop;
  /// building thousands of tools and their search index is CPU work): one
  /// at a time, in order. Stopped once the upstreams are. No lock: made
  /// with the gateway, reset by ~Gateway once the upstreams that call
  /// on_tools_changed are stopped.
  std::unique_ptr<WorkerPool> rebuilds_ = std::make_unique<WorkerPool>(0, 1);
  const std::int64_t started_unix_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count();
  util::Mutex status_mu_;  ///< the catalog document cache
  std::shared_ptr<const std::string> catalog_json_ GUARDED_BY(status_mu_);
  std::uint64_t catalog_json_generation_ GUARDED_BY(status_mu_) = 0;
};

}  // namespace mcpgw::server
