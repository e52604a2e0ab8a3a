// mcpgw: one MCP endpoint in front of many MCP servers.
#include <CLI/CLI.hpp>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>
#include <variant>

#include "config/config.hpp"
#include "server/call_command.hpp"
#include "server/check.hpp"
#include "server/gateway.hpp"
#include "server/logging.hpp"
#include "server/pins_cli.hpp"
#include "server/revoke.hpp"
#include "util/thread_annotations.hpp"

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
      util::MutexLock lk(mu_);
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
      util::UniqueLock lk(mu_);
      if (!cv_.wait_for(lk.native(), std::chrono::milliseconds(grace_ms_), [&]() REQUIRES(mu_) { return done_; })) {
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
  util::Mutex mu_;
  std::condition_variable cv_;
  bool done_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

/// The command line, parsed.
struct Cli {
  std::string config_path, mode, log_level = "info", log_format = "text";
  bool stdio = false, as_json = false;
  unsigned threads = 0;
  bool check = false, revoke = false, call = false;
  server::CallCommand call_args;  ///< call NAME [ARGS_JSON] --principal
  std::optional<std::string> search;  ///< check --search
  std::optional<server::CheckPrincipal> principal;  ///< check --principal (--claims)
  std::string revoke_server, revoke_url;
  bool pins_list = false, pins_approve = false;
  integrity::Selection approve;
};

/// The command line, or the exit code when there is nothing to run (help,
/// version, a usage error: one line and exit 2, like an invalid configuration).
std::variant<Cli, int> parse_cli(int argc, char** argv) {
  Cli c;
  CLI::App app{"mcpgw: one MCP endpoint in front of many MCP servers"};
  app.set_version_flag("--version", std::string("mcpgw ") + MCPGW_VERSION);
  app.add_option("--config", c.config_path, "gateway YAML file");
  app.add_flag("--stdio", c.stdio, "serve one MCP client on stdin/stdout");
  app.add_option("--mode", c.mode, "with --stdio: the mode this client uses");
  app.add_option("--threads", c.threads, "I/O threads (default: one per core; one with --stdio)")
      ->check(CLI::Range(0u, 256u));
  app.add_option("--log-level", c.log_level, "trace|debug|info|warn|error")->capture_default_str();
  app.add_option("--log-format", c.log_format, "text|json")->capture_default_str();
  auto* check = app.add_subcommand("check", "validate the configuration, connect every upstream, print the catalog");
  // The common flags (--config, --log-level, ...) belong to the app and are
  // taken before or after the subcommand alike.
  check->fallthrough();
  check->add_flag("--json", c.as_json, "machine-readable output");
  std::string search_query;
  auto* search = check->add_option("--search", search_query, "also show what this search_tools query finds per mode");
  server::CheckPrincipal as;
  auto* principal = check->add_option("--principal", as.name,
                                      "show the catalog as this principal sees it under the policies (a bearer "
                                      "token's name, or with auth.oauth any principal)");
  check->add_option("--claims", as.claims, "with --principal: an OAuth principal's token claims, as a JSON object")
      ->needs(principal);
  auto* revoke = app.add_subcommand(
      "revoke", "forget your stored upstream OAuth tokens at a running gateway (your credential in MCPGW_TOKEN)");
  revoke->fallthrough();
  revoke->add_option("--server", c.revoke_server, "only this upstream's (default: every upstream's)");
  revoke->add_option("--url", c.revoke_url, "the gateway's /oauth/revoke (default: from the configuration's admin or listen)");
  auto* pins = app.add_subcommand("pins", "the pinned tool definitions (integrity.pins)");
  pins->fallthrough();
  pins->require_subcommand(1);
  auto* pins_list = pins->add_subcommand("list", "each pinned tool: server, tool, state (pinned, changed, new), when");
  pins_list->fallthrough();
  pins_list->add_flag("--json", c.as_json, "machine-readable output");
  auto* pins_approve = pins->add_subcommand("approve", "accept the current definitions as the pins");
  pins_approve->fallthrough();
  pins_approve->add_option("names", c.approve.names, "exposed tool names");
  pins_approve->add_option("--server", c.approve.server, "every tool of this server");
  pins_approve->add_flag("--all", c.approve.all, "every tool");
  auto* call = app.add_subcommand("call", "run one tools/call through the configured gateway, print its result as JSON");
  call->fallthrough();
  call->add_option("NAME", c.call_args.tool, "the tool's exposed name")->required();
  call->add_option("ARGS_JSON", c.call_args.arguments, "its arguments, a JSON object (default {})");
  call->add_option("--principal", c.call_args.principal, "call as this principal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mcpgw: %s (see mcpgw --help)\n", e.what());
    return 2;
  }
  c.check = check->parsed();
  c.revoke = revoke->parsed();
  c.pins_list = pins_list->parsed();
  c.pins_approve = pins_approve->parsed();
  c.call = call->parsed();
  c.call_args.mode = c.mode;
  if (search->count()) c.search = search_query;
  if (principal->count()) c.principal = as;
  return c;
}

/// Runs the gateway on `cfg` until it is stopped; the process's exit code.
int serve(config::Config cfg, const Cli& cli) {
  int grace = cfg.shutdown_grace_ms;
  // A stdio client is one client: with one worker, its calls and every
  // stdio upstream's pipes share it, where with more a call to a child
  // whose pipes another worker holds crosses there and back (a third to a
  // half more CPU per call: BENCH_ONLY=placement scripts/bench).
  unsigned threads = cli.threads ? cli.threads : (cli.stdio ? 1u : 0u);
  server::Gateway gw(std::move(cfg), threads);
  if (!gw.startup_error().empty()) {
    std::fprintf(stderr, "mcpgw: %s: %s\n", cli.config_path.c_str(), gw.startup_error().c_str());
    return 2;
  }
  if (!cli.stdio) {
    if (auto bound = gw.bind_http(); !bound) {
      std::fprintf(stderr, "mcpgw: %s\n", bound.error().c_str());
      return 1;
    }
  }
  if (auto traced = gw.start_telemetry(); !traced) {
    std::fprintf(stderr, "mcpgw: %s\n", traced.error().c_str());
    return 2;
  }
  SignalThread signals(gw, cli.config_path, grace);
  gw.start_upstreams();
  auto invalid = [&](const std::string& why) { spdlog::error("{}: {}", cli.config_path, why); };
  // Both transports serve from the first moment (/healthz, connected
  // servers' calls); initialize and the lists wait for the upstreams still
  // in their first attempt, within startup_wait_ms. What needs every
  // upstream's tools is checked once they have had their try.
  std::atomic<bool> refused{false};
  std::thread start_check([&] {
    if (auto checked = gw.await_upstreams(); !checked) {
      invalid(checked.error());
      refused = true;
      gw.stop();
    }
  });
  int code = cli.stdio ? gw.serve_stdio(cli.mode) : gw.serve_http();
  start_check.join();
  return refused ? 2 : code;
}

}  // namespace

int main(int argc, char** argv) {
  // A large answer (a relayed result of megabytes) gets a mapping of its
  // own, returned to the system once written. By default glibc raises this
  // threshold after the first such free, and from then on each worker's
  // arena keeps the largest answers it has held: the resident set grows by
  // a large answer per worker and never shrinks.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  auto parsed = parse_cli(argc, argv);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  const Cli& cli = std::get<Cli>(parsed);
  if (auto r = server::setup_logging(cli.log_level, cli.log_format); !r) {
    std::fprintf(stderr, "mcpgw: %s\n", r.error().c_str());
    return 2;
  }
  if (cli.config_path.empty()) {
    std::fprintf(stderr, "mcpgw: --config FILE is required (see mcpgw --help)\n");
    return 2;
  }
  if (!cli.mode.empty() && !cli.stdio && !cli.check && !cli.revoke && !cli.call) {
    std::fprintf(stderr, "mcpgw: --mode applies to --stdio; HTTP clients select a mode with the URL /mcp/<mode>\n");
    return 2;
  }
  auto cfg = config::load(cli.config_path);
  if (!cfg) {
    std::fprintf(stderr, "mcpgw: %s\n", cfg.error().c_str());
    return cli.check ? 1 : 2;
  }
  const std::string& mode = cli.mode;
  if (!mode.empty() && mode != "all" &&
      std::none_of(cfg->modes.begin(), cfg->modes.end(), [&](const config::Mode& m) { return m.name == mode; })) {
    std::string list = "all";
    for (const auto& m : cfg->modes) list += ", " + m.name;
    std::fprintf(stderr, "mcpgw: unknown mode \"%s\" for --mode; %s defines: %s\n", mode.c_str(),
                 cli.config_path.c_str(), list.c_str());
    return 2;
  }

  // Block the signals we wait for before any thread exists, so every thread
  // inherits the mask; writes to a dead peer must fail, not kill us.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (cli.revoke) {
    const char* token = std::getenv("MCPGW_TOKEN");
    return server::run_revoke(*cfg, cli.revoke_server, cli.revoke_url, token ? token : "", std::cout, std::cerr);
  }
  if (cli.pins_list) return server::run_pins_list(*cfg, cli.as_json, std::cout, std::cerr);
  if (cli.pins_approve) return server::run_pins_approve(*cfg, cli.approve, std::cout, std::cerr);
  if (cli.call) return server::run_call(std::move(*cfg), cli.call_args, std::cout, std::cerr);
  if (cli.check) {
    std::optional<server::PrincipalView> as;
    if (cli.principal) {
      auto view = server::principal_view(*cfg, *cli.principal);
      if (!view) {
        std::fprintf(stderr, "mcpgw: %s\n", view.error().c_str());
        return 2;
      }
      as = std::move(*view);
    }
    return server::run_check(std::move(*cfg), cli.as_json, std::cout, cli.search, as);
  }
  return serve(std::move(*cfg), cli);
}
