#include "server/gateway.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <chrono>

#include <boost/asio/strand.hpp>

#include "server/access.hpp"
#include "server/status.hpp"
#include "util/random.hpp"
#include "util/offload.hpp"

namespace mcpgw::server {
namespace {

/// Closes client session `session`'s own connections (`session:
/// per_client`) to `upstreams`, resuming once they are closed.
Task<> end_client(std::vector<std::shared_ptr<upstream::Upstream>> upstreams, std::string session) {
  for (const auto& u : upstreams) co_await u->end_client(session);
}

}  // namespace

Gateway::Gateway(config::Config cfg, unsigned io_threads)
    : io_(io_threads),
      cfg_(std::make_shared<const config::Config>(std::move(cfg))),
      plugin_host_(std::make_shared<plugin::Host>([this](std::string_view name) { return find_upstream(name); },
                                                  io_.executor())),
      cluster_(std::make_unique<cluster::Cluster>(cfg_->cluster, io_.context())),
      router_(cfg_, catalog_, metrics_, make_keyring(*cfg_), io_.executor(),
              Router::Hooks{[this](std::string session) { return end_client(upstreams(), std::move(session)); },
                            [this](const std::string& level) {
                              for (const auto& u : upstreams()) u->set_log_level(level);
                            },
                            [this](std::string_view name) { return find_upstream(name); }}) {
  if (auto made = make_oauth(*cfg_)) oauth_ = std::move(*made);
  else startup_error_ = made.error();
  pins_ = std::make_unique<integrity::Guard>(make_pin_store(*cfg_));
  start_pins();
  for (const auto& s : cfg_->servers) upstreams_.push_back(make_upstream(s));
}

Result<std::unique_ptr<oauth::Manager>> Gateway::make_oauth(const config::Config& cfg) {
  std::shared_ptr<oauth::TokenStore> store;
  if (!cfg.cluster.redis.empty()) {
    store = cluster_->token_store();
  } else if (!cfg.upstream_oauth.store.empty()) {
    auto file = oauth::FileStore::open(cfg.upstream_oauth.store);
    if (!file) return Error{file.error()};
    store = std::move(*file);
  } else {
    store = std::make_shared<oauth::MemoryStore>();
  }
  auto m = oauth::Manager::create(cfg, io_, std::move(store));
  if (!m) return Error{m.error()};
  (*m)->set_address(cfg, cfg.listen.host, cfg.listen.port, cfg.listen.tls.enabled());
  oauth::Manager::Hooks hooks;
  hooks.consented = [this](const oauth::Flow& flow) {
    // Also told on the call's own stream when the call waited for it.
    json::Document p(rapidjson::kObjectType);
    p.AddMember("elicitationId", json::str(flow.elicitation_id, p.GetAllocator()), p.GetAllocator());
    router_.notify_session(flow.session, "notifications/elicitation/complete", &p);
  };
  hooks.revoked = [this](const std::string& server, const std::string& principal) {
    if (auto u = find_upstream(server)) u->end_principal(principal);
  };
  (*m)->set_hooks(std::move(hooks));
  return m;
}

std::map<std::string, oauth::CheckReport> Gateway::check_oauth(std::chrono::milliseconds timeout) {
  std::map<std::string, oauth::CheckReport> out;
  if (!oauth_) return out;
  for (const auto& [name, client] : oauth_->clients()) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    out[name] = block_on(asio::make_strand(io_.executor()), client->check(deadline),
                         [] { return oauth::CheckReport{"not checked: the gateway is stopping", "", false}; });
  }
  return out;
}

std::shared_ptr<upstream::Upstream> Gateway::make_upstream(const config::Server& s) {
  return std::make_shared<upstream::Upstream>(s, io_, *this, oauth_ && s.oauth ? oauth_->find(s.name) : nullptr);
}

std::shared_ptr<const saga::Keyring> Gateway::make_keyring(const config::Config& cfg) {
  if (cfg.sagas.secrets.empty())
    spdlog::info("sagas.secret is not set: suspended calls and sagas are signed with a key of this process only, so "
                 "they cannot be resumed by another gateway process or after a restart");
  return std::make_shared<const saga::Keyring>(cfg.sagas.secrets, std::chrono::seconds(cfg.sagas.ttl_s));
}

Gateway::~Gateway() {
  pins_->stop();
  cluster_->stop();
  router_.drain();
  stop_upstreams();
  // What the calls recorded goes out while the loop still runs.
  if (exporter_) exporter_->shutdown(std::chrono::seconds(2));
  oauth_.reset();
  rebuilds_.reset();
  // Unload the plugins now, while the logger and everything they may touch
  // still exist: the snapshot and this list hold the last references.
  catalog_.publish(std::make_shared<catalog::Snapshot>());
  util::MutexLock lk(state_mu_);
  plugins_.clear();
}

std::shared_ptr<upstream::Upstream> Gateway::find_upstream(std::string_view name) const {
  util::MutexLock lk(state_mu_);
  for (const auto& u : upstreams_)
    if (u->name() == name) return u;
  return nullptr;
}

std::vector<std::shared_ptr<plugin::Plugin>> Gateway::plugins() const {
  util::MutexLock lk(state_mu_);
  return plugins_;
}

std::vector<std::string> Gateway::plugin_errors() const {
  util::MutexLock lk(state_mu_);
  return plugin_errors_;
}

void Gateway::load_plugins(const config::Config& cfg) {
  auto loaded = plugin::load_all(cfg.plugins, plugin_host_, plugins());
  for (const auto& e : loaded.errors) spdlog::error("{}; serving without it", e);
  util::MutexLock lk(state_mu_);
  plugins_ = std::move(loaded.plugins);
  plugin_errors_ = std::move(loaded.errors);
}

std::shared_ptr<const config::Config> Gateway::config() const {
  util::MutexLock lk(state_mu_);
  return cfg_;
}

std::vector<std::shared_ptr<upstream::Upstream>> Gateway::upstreams() const {
  util::MutexLock lk(state_mu_);
  return upstreams_;
}

namespace {

/// How long start-up or a reload waits for an upstream's first attempt:
/// initialize and every tools/list page each get the server's timeout; a
/// generous bound keeps a dead upstream from holding it forever.
std::chrono::milliseconds first_attempt_bound(const upstream::Upstream& u) {
  return std::chrono::milliseconds(std::min(u.config().timeout_ms, 10000) * 3);
}

}  // namespace

void Gateway::start_cluster() {
  std::call_once(cluster_started_, [this] { cluster_->start(); });
}

void Gateway::start_upstreams() {
  // --stdio and `mcpgw check` too: the pins (and OAuth tokens) may be in Redis.
  start_cluster();
  load_plugins(*config());
  for (auto& u : upstreams()) u->start();
  on_tools_changed("");
}

Result<void> Gateway::await_upstreams() {
  auto ups = upstreams();
  for (auto& u : ups) u->wait_first_attempt(first_attempt_bound(*u));
  on_tools_changed("");
  auto connected = std::count_if(ups.begin(), ups.end(), [](const auto& u) { return u->ready(); });
  spdlog::info("start-up: every upstream tried once ({} of {} connected)", connected, ups.size());
  auto snap = catalog_.snapshot();
  for (const auto& w : catalog::name_warnings(*snap)) spdlog::warn("naming: {}", w);
  {
    // Stopped meanwhile, the upstreams may not have listed their tools.
    util::MutexLock lk(serve_mu_);
    if (stopping_) return {};
  }
  if (!snap->errors.empty()) return Error{snap->errors.front()};
  return {};
}

Result<void> Gateway::start_telemetry() {
  auto cfg = config();  // held while read: a reload may drop the last other reference
  const auto& otlp = cfg->telemetry.otlp;
  if (otlp.endpoint.empty()) return {};
  telemetry::ExporterSettings s;
  s.endpoint = otlp.endpoint;
  s.headers = otlp.headers;
  s.sample_ratio = otlp.sample_ratio;
  s.resource.attributes = {{"service.name", otlp.service_name},
                           {"service.version", std::string(MCPGW_VERSION)},
                           {"service.instance.id", unique_hex(16)}};
  s.on_exported = [this](std::size_t n) { metrics_.spans_exported(n); };
  s.on_dropped = [this](std::size_t n) { metrics_.spans_dropped(n); };
  auto exporter = telemetry::Exporter::create(io_, std::move(s));
  if (!exporter) return Error{exporter.error()};
  exporter_ = std::move(*exporter);
  exporter_->start();
  router_.set_spans(exporter_.get());
  spdlog::info("otlp: exporting spans to {}/v1/traces (sample ratio {})", otlp.endpoint, otlp.sample_ratio);
  return {};
}

void Gateway::on_tools_changed(const std::string& server) {
  if (io_.in_loop() && rebuilds_ && rebuilds_->submit([this, server] { on_tools_changed(server); })) return;
  util::MutexLock lk(rebuild_mu_);
  auto old = catalog_.snapshot();
  auto ups = upstreams();
  auto started = std::chrono::steady_clock::now();
  auto cfg = config();
  auto next = catalog::build(*cfg, ups, plugins(), catalog_.next_generation(), integrity_input(*cfg));
  spdlog::debug("catalog: generation {} ({} tools, search index included) built in {:.1f} ms", next->generation,
                next->tools.size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  for (const auto& u : ups) metrics_.set_upstream_up(u->name(), u->ready());
  auto same = [](const auto& a, const auto& b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) { return x.definition == y.definition; });
  };
  // A mode that turned to (or from) search lists other tools.
  bool tools = !same(old->tools, next->tools) || old->search_modes != next->search_modes;
  bool resources = !same(old->resources, next->resources) || !same(old->templates, next->templates);
  bool prompts = !same(old->prompts, next->prompts);
  // After start-up a collision cannot stop the gateway: the first tool of
  // the name stays, the operator is told. (A welcome.tool of a server still
  // connecting is not missing yet.)
  if (old->errors != next->errors && next->pending.empty())
    for (const auto& e : next->errors) spdlog::error("catalog: {}", e);
  if (old->warnings != next->warnings)
    for (const auto& w : next->warnings) spdlog::warn("catalog: {}", w);
  integrity_reported(*old, *next);
  catalog_.publish(std::move(next));
  if (server.empty()) return;
  if (tools || resources || prompts) spdlog::info("catalog: {} changed", server);
  if (tools) router_.list_changed("tools");
  if (resources) router_.list_changed("resources");
  if (prompts) router_.list_changed("prompts");
}

void Gateway::on_health(const std::string& server, bool up) {
  // A server a reload replaced reports its end too: the current one decides.
  if (auto current = find_upstream(server)) up = current->ready();
  metrics_.set_upstream_up(server, up);
}

void Gateway::on_circuit(const std::string& server, upstream::Breaker::State state) {
  using S = upstream::Breaker::State;
  metrics_.set_circuit(server, state == S::Open ? 1 : state == S::HalfOpen ? 2 : 0);
}

void Gateway::on_upstream_notification(const std::string& server, jsonrpc::Message& msg) {
  if (msg.method() == "notifications/tasks/status") return router_.task_status(server, msg);
  for (const auto& u : upstreams())
    if (u->name() == server && msg.method() == "notifications/resources/updated") router_.resource_updated(*u, msg);
}

std::string Gateway::log_text(std::string_view text) const {
  auto cfg = config();
  std::string masked;
  redact::Tally tally;
  if (!cfg->redact.enabled || !cfg->redact.detectors || !cfg->redact.detectors->mask(text, masked, tally))
    return std::string(text);
  return masked;
}

Result<void> Gateway::bind_http() {
  auto cfg = config();
  const auto& l = cfg->listen;
  transport::HttpServerOptions o;
  o.host = l.host;
  o.port = l.port;
  o.path = l.path;
  o.allowed_origins = l.allowed_origins;
  o.allowed_hosts = l.allowed_hosts;
  o.max_body_bytes = l.max_body_bytes;
  o.heartbeat_ms = l.heartbeat_ms;
  o.session_idle_s = l.session_idle_s;
  o.reuse_port = l.reuse_port;
  o.tls_cert_file = l.tls.cert_file;
  o.tls_key_file = l.tls.key_file;
  o.access = access_settings(*cfg);
  o.limits = limit_settings(*cfg);
  o.forward_headers = forwarded_header_names(*cfg);
  auto http = std::make_unique<transport::HttpServer>(std::move(o), router_, io_);
  if (cluster_->sealing()) http->share_sessions(*cluster_);
  if (cluster_->sealing() || cluster_->redis()) {
    router_.set_cluster(*cluster_);
    start_cluster();
  }
  std::unique_ptr<transport::AdminServer> admin;
  if (cfg->admin) {
    admin = std::make_unique<transport::AdminServer>(cfg->admin->host, cfg->admin->port, io_);
    add_operator_endpoints(*admin, *http);
    auto bound = admin->bind();
    if (!bound) return Error{"admin: " + bound.error()};
    spdlog::info("admin endpoints on {}:{}", cfg->admin->host, *bound);
  } else {
    add_operator_endpoints(*http, *http);
  }
  if (oauth_) add_oauth_endpoints(*http, admin.get());
  auto port = http->bind();
  if (!port) return Error{port.error()};
  http_port_ = *port;
  if (oauth_) oauth_->set_address(*cfg, l.host, *port, l.tls.enabled());
  util::MutexLock lk(serve_mu_);
  http_ = std::move(http);
  admin_ = std::move(admin);
  return {};
}

template <typename Server>
void Gateway::add_operator_endpoints(Server& http, const transport::HttpServer& mcp) {
  http.add_get("/healthz", [] { return transport::SimpleResponse{200, "text/plain", "ok\n", {}}; });
  http.add_get("/readyz", [this] { return readiness(); });
  // The status page: the document is static, its data asks for a token
  // on the MCP listener when auth is set (browsers cannot send one with a
  // page load; the page asks for it).
  const std::vector<std::pair<std::string, std::string>> page_headers = {
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Cache-Control", "no-store"}};
  http.add_get("/", [page_headers] {
    return transport::SimpleResponse{200, "text/html; charset=utf-8", std::string(status_html()), page_headers};
  });
  http.add_get(
      "/status.json",
      [this] {
        return transport::SimpleResponse{200, "application/json", status_document(), {{"Cache-Control", "no-store"}}};
      },
      transport::GetAccess::Token);
  http.add_get(
      "/status/catalog.json",
      [this] {
        return transport::SimpleResponse{200, "application/json", catalog_document(), {{"Cache-Control", "no-store"}}};
      },
      transport::GetAccess::Token);
  http.add_get("/metrics", [this, server = &mcp] {
    metrics_.set_suspended(static_cast<double>(router_.suspended_calls()));
    metrics_.set_open_streams(static_cast<double>(server->open_streams()));
    // An open breaker turns half open by time alone: read now.
    for (const auto& u : upstreams()) {
      on_circuit(u->name(), u->circuit());
      metrics_.set_queued(u->name(), u->calls_waiting());
    }
    return transport::SimpleResponse{200, "text/plain; version=0.0.4", metrics_.render(), {}};
  });
}

std::string Gateway::status_document() {
  StatusInputs in;
  in.config = config();
  in.upstreams = upstreams();
  in.plugins = plugins();
  in.plugin_errors = plugin_errors();
  in.snapshot = catalog_.snapshot();
  in.principals = router_.sessions_by_principal();
  in.suspended = router_.suspended_calls();
  {
    util::MutexLock lk(serve_mu_);
    in.open_streams = http_ ? http_->open_streams() : 0;
  }
  in.recent = router_.audit().recent();
  in.series = metrics_.history().snapshot();
  in.started_unix_ms = started_unix_ms_;
  in.pins_error = pins_->why();
  return status_json(in);
}

std::string Gateway::catalog_document() {
  auto snap = catalog_.snapshot();
  util::MutexLock lk(status_mu_);
  // Built once per catalog generation: thousands of tools are a few
  // milliseconds of work, not one per page refresh.
  if (!catalog_json_ || catalog_json_generation_ != snap->generation) {
    catalog_json_ = std::make_shared<const std::string>(catalog_json(*snap));
    catalog_json_generation_ = snap->generation;
  }
  return *catalog_json_;
}

int Gateway::serve_http() {
  transport::HttpServer* http;
  transport::AdminServer* admin;
  {
    util::MutexLock lk(serve_mu_);
    if (stopping_ || !http_) return 0;
    http = http_.get();
    admin = admin_.get();
  }
  if (admin) admin->start();
  auto cfg = config();
  const auto& l = cfg->listen;
  std::string shown = l.host.find(':') != std::string::npos ? "[" + l.host + "]" : l.host;
  spdlog::info("listening on {}://{}:{}{}", http->tls() ? "https" : "http", shown, http_port_, l.path);
  http->serve();
  if (admin) admin->stop();
  router_.drain();
  stop_upstreams();
  spdlog::info("stopped");
  return 0;
}

int Gateway::serve_stdio(const std::string& mode) {
  transport::ClientContext ctx;
  ctx.mode = mode;
  auto cfg = config();  // held while read: a reload may drop the last other reference
  const auto& limits = cfg->limits;
  transport::StdioServer stdio(router_, ctx, io_,
                               {static_cast<std::size_t>(limits.max_batch_size),
                                static_cast<std::size_t>(limits.batch_concurrency)});
  auto pages = serve_consent_pages();
  {
    util::MutexLock lk(serve_mu_);
    if (stopping_) return 0;
    stdio_ = &stdio;
  }
  auto r = stdio.run();
  {
    util::MutexLock lk(serve_mu_);
    stdio_ = nullptr;
  }
  if (pages) pages->stop();
  router_.drain();
  stop_upstreams();
  if (!r) {
    spdlog::error("{}", r.error());
    return 2;
  }
  return 0;
}

void Gateway::stop() {
  util::MutexLock lk(serve_mu_);
  stopping_ = true;
  if (http_) http_->stop();
  if (stdio_) stdio_->stop();
}

void Gateway::cut_upstreams() { stop_upstreams(); }

void Gateway::stop_upstreams() {
  std::call_once(upstreams_stopped_, [this] {
    std::vector<std::weak_ptr<upstream::Upstream>> retiring;
    {
      util::MutexLock lk(state_mu_);
      retiring = retiring_;
    }
    for (auto& w : retiring)
      if (auto u = w.lock()) u->stop();
    for (auto& u : upstreams()) u->stop();
  });
}

void Gateway::retire(std::shared_ptr<upstream::Upstream> u, std::string_view why) {
  auto grace = std::chrono::milliseconds(config()->shutdown_grace_ms);
  std::string reason = "was " + std::string(why) + " by a configuration reload, and this call was still running after shutdown_grace_ms (" +
                       std::to_string(grace.count()) + " ms)";
  {
    util::MutexLock lk(state_mu_);
    std::erase_if(retiring_, [](const auto& w) { return w.expired(); });
    retiring_.push_back(u);
  }
  // Holds `u` (not the gateway) until it is over (its connections closed,
  // its children reaped): the gateway may be gone.
  asio::co_spawn(
      asio::make_strand(io_.executor()),
      [u, grace, reason = std::move(reason)]() -> Task<> {
        co_await u->drain(std::chrono::steady_clock::now() + grace);
        co_await u->stop_async(reason);
      },
      asio::detached);
}

namespace {

/// Tells the operator which changes of a reload wait for a restart.
void warn_restart_needed(const config::Config& prev, const config::Config& next) {
  if (!(next.listen == prev.listen) || !(next.admin == prev.admin))
    spdlog::warn("reload: changes to listen and admin take effect after a restart");
  if (!(next.cluster == prev.cluster)) spdlog::warn("reload: changes to cluster take effect after a restart");
  if (!(next.telemetry == prev.telemetry)) spdlog::warn("reload: changes to telemetry take effect after a restart");
  if (!(next.upstream_oauth == prev.upstream_oauth))
    spdlog::warn("reload: changes to upstream_oauth take effect after a restart");
}

}  // namespace

void Gateway::reread_files() {
  router_.audit().reopen();
  // A store that could not be watched (or a damaged file, since mended).
  pins_->reload([this] { on_tools_changed(kPinsChanged); });
}

Result<void> Gateway::reload(const std::string& path) {
  // SIGHUP is also logrotate's signal: the audit file is reopened (and the
  // pins read again) whether or not the configuration reads.
  reread_files();
  auto loaded = config::load(path);
  if (!loaded) return Error{loaded.error()};
  auto next = std::make_shared<const config::Config>(std::move(*loaded));
  auto prev = config();
  warn_restart_needed(*prev, *next);
  {
    // auth and limits apply now, or nothing does: a bad jwks_file keeps
    // the old configuration whole.
    util::MutexLock lk(serve_mu_);
    if (http_) {
      auto applied = http_->set_access(access_settings(*next), limit_settings(*next), forwarded_header_names(*next));
      if (!applied) return Error{applied.error()};
    }
  }
  if (oauth_)
    if (auto applied = oauth_->configure(*next); !applied) return Error{applied.error()};
  // A changed server keeps its old upstream in the list until the new one
  // is up: calls go on meanwhile, and none waits on a connection not there.
  std::vector<std::shared_ptr<upstream::Upstream>> kept, started, removed;
  std::vector<std::pair<std::shared_ptr<upstream::Upstream>, std::shared_ptr<upstream::Upstream>>> replaced;
  auto old = upstreams();
  for (const auto& s : next->servers) {
    auto same = std::find_if(old.begin(), old.end(), [&](const auto& u) { return u->config() == s; });
    auto named = std::find_if(old.begin(), old.end(), [&](const auto& u) { return u->name() == s.name; });
    if (same != old.end()) {
      kept.push_back(*same);
    } else if (named != old.end()) {
      kept.push_back(*named);
      replaced.emplace_back(*named, make_upstream(s));
    } else {
      kept.push_back(make_upstream(s));
      started.push_back(kept.back());
    }
  }
  for (const auto& u : old)
    if (std::find(kept.begin(), kept.end(), u) == kept.end()) removed.push_back(u);
  {
    util::MutexLock lk(state_mu_);
    cfg_ = next;
    upstreams_ = kept;
  }
  router_.set_config(next, make_keyring(*next));
  // Plugins whose entry changed are loaded anew; the old instance unloads
  // when the last call on it returns (the snapshots in flight hold it).
  load_plugins(*next);
  for (auto& u : started) u->start();
  for (auto& [was, now] : replaced) now->start();
  // Calls already running on a removed upstream finish on their own snapshot.
  for (auto& u : removed) retire(u, "removed");
  on_tools_changed("reload");
  if (!replaced.empty()) {
    for (auto& [was, now] : replaced) {
      now->wait_first_attempt(first_attempt_bound(*now));
      now->inherit_listing(*was);
    }
    {
      util::MutexLock lk(state_mu_);
      for (auto& [was, now] : replaced) std::replace(upstreams_.begin(), upstreams_.end(), was, now);
    }
    on_tools_changed("reload");
    for (auto& [was, now] : replaced) {
      router_.upstream_replaced(was, now);
      if (!now->ready()) spdlog::warn("reload: upstream {} with its new settings: {}", now->name(), now->status());
      retire(was, "replaced");
    }
  }
  // A replaced server counts as one started and one stopped.
  spdlog::info("reloaded {}: {} upstreams kept, {} started, {} stopped", path,
               kept.size() - started.size() - replaced.size(), started.size() + replaced.size(),
               removed.size() + replaced.size());
  return {};
}

}  // namespace mcpgw::server
