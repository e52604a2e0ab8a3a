// mcpgw: one MCP endpoint in front of many MCP servers.
#include <CLI/CLI.hpp>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <thread>

#include "config/config.hpp"
#include "server/check.hpp"
#include "server/gateway.hpp"
#include "server/logging.hpp"

namespace {

using namespace mcpgw;

/// Owns signal handling: SIGTERM/SIGINT stop gracefully, SIGHUP reloads.
/// Signals are blocked in every thread and taken here with sigwait, so no
/// work happens in a signal handler.
class SignalThread {
 public:
  SignalThread(server::Gateway& gw, const std::string& config_path, int grace_ms)
      : gw_(gw), path_(config_path), grace_ms_(grace_ms), thread_([this] { run(); }) {}
  ~SignalThread() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }

 private:
  void run() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&set, s);
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR2) return;
      if (sig == SIGHUP) {
        auto r = gw_.reload(path_);
        if (!r) spdlog::error("reload failed, still running the previous configuration: {}", r.error());
        continue;
      }
      spdlog::info("received {}, shutting down (grace {} ms)", sig == SIGTERM ? "SIGTERM" : "SIGINT", grace_ms_);
      gw_.stop();
      std::unique_lock lk(mu_);
      if (!cv_.wait_for(lk, std::chrono::milliseconds(grace_ms_), [&] { return done_; })) {
        lk.unlock();
        spdlog::warn("calls still running after the grace period; stopping upstreams");
        gw_.cut_upstreams();
      }
      return;
    }
  }

  server::Gateway& gw_;
  std::string path_;
  int grace_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mcpgw: one MCP endpoint in front of many MCP servers"};
  app.set_version_flag("--version", std::string("mcpgw ") + MCPGW_VERSION);
  std::string config_path, mode, log_level = "info", log_format = "text";
  bool stdio = false, as_json = false;
  unsigned threads = 0;
  app.add_option("--config", config_path, "gateway YAML file");
  app.add_flag("--stdio", stdio, "serve one MCP client on stdin/stdout");
  app.add_option("--mode", mode, "with --stdio: the mode this client uses");
  app.add_option("--threads", threads, "I/O threads (default: one per core)")->check(CLI::Range(0u, 256u));
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();
  app.add_option("--log-format", log_format, "text|json")->capture_default_str();
  auto* check = app.add_subcommand("check", "validate the configuration, connect every upstream, print the catalog");
  // The common flags (--config, --log-level, ...) belong to the app and are
  // taken before or after the subcommand alike.
  check->fallthrough();
  check->add_flag("--json", as_json, "machine-readable output");
  std::string search_query;
  auto* search = check->add_option("--search", search_query, "also show what this search_tools query finds per mode");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A usage error is one line and exit 2, like an invalid configuration.
    std::fprintf(stderr, "mcpgw: %s (see mcpgw --help)\n", e.what());
    return 2;
  }
  if (auto r = server::setup_logging(log_level, log_format); !r) {
    std::fprintf(stderr, "mcpgw: %s\n", r.error().c_str());
    return 2;
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "mcpgw: --config FILE is required (see mcpgw --help)\n");
    return 2;
  }
  if (!mode.empty() && !stdio && !check->parsed()) {
    std::fprintf(stderr, "mcpgw: --mode applies to --stdio; HTTP clients select a mode with the URL /mcp/<mode>\n");
    return 2;
  }
  auto cfg = config::load(config_path);
  if (!cfg) {
    std::fprintf(stderr, "mcpgw: %s\n", cfg.error().c_str());
    return check->parsed() ? 1 : 2;
  }

  if (!mode.empty() && mode != "all" &&
      std::none_of(cfg->modes.begin(), cfg->modes.end(), [&](const config::Mode& m) { return m.name == mode; })) {
    std::string list = "all";
    for (const auto& m : cfg->modes) list += ", " + m.name;
    std::fprintf(stderr, "mcpgw: unknown mode \"%s\" for --mode; %s defines: %s\n", mode.c_str(), config_path.c_str(),
                 list.c_str());
    return 2;
  }

  // Block the signals we wait for before any thread exists, so every thread
  // inherits the mask; writes to a dead peer must fail, not kill us.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (check->parsed())
    return server::run_check(std::move(*cfg), as_json, std::cout,
                             search->count() ? std::optional(search_query) : std::nullopt);

  int grace = cfg->shutdown_grace_ms;
  server::Gateway gw(std::move(*cfg), threads);
  if (!stdio) {
    if (auto bound = gw.bind_http(); !bound) {
      std::fprintf(stderr, "mcpgw: %s\n", bound.error().c_str());
      return 1;
    }
  }
  if (auto traced = gw.start_telemetry(); !traced) {
    std::fprintf(stderr, "mcpgw: %s\n", traced.error().c_str());
    return 2;
  }
  SignalThread signals(gw, config_path, grace);
  gw.start_upstreams();
  auto invalid = [&](const std::string& why) { spdlog::error("{}: {}", config_path, why); };
  if (stdio) {
    // A stdio client lists the tools once, right after initialize, and has
    // no readiness probe: it is served once every upstream has had its try.
    if (auto checked = gw.await_upstreams(); !checked) {
      invalid(checked.error());
      return 2;
    }
    return gw.serve_stdio(mode);
  }
  // HTTP serves from the first moment (/healthz, connected servers' calls);
  // what needs every upstream's tools is checked once they have had their try.
  std::atomic<bool> refused{false};
  std::thread start_check([&] {
    if (auto checked = gw.await_upstreams(); !checked) {
      invalid(checked.error());
      refused = true;
      gw.stop();
    }
  });
  int code = gw.serve_http();
  start_check.join();
  return refused ? 2 : code;
}
