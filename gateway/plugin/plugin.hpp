#pragma once
// Composite-tool plugins: shared libraries speaking the C ABI of
// plugins/include/mcpgw/plugin.h, run in a host process of their own
// (isolated.hpp) or loaded into the gateway (in_process.hpp). A loaded
// plugin is a ToolOrigin: its tools enter the catalog next to the proxied
// ones.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "upstream/upstream.hpp"
#include "util/cancel.hpp"
#include "util/event.hpp"
#include "util/result.hpp"
#include "util/thread_annotations.hpp"
#include "util/worker_pool.hpp"

namespace mcpgw::plugin {

/// The upstream named `server` in the current configuration, or null.
using UpstreamLookup = std::function<std::shared_ptr<upstream::Upstream>(std::string_view server)>;

/// What every plugin's calls into the gateway share: the way to the
/// upstreams and the threads that run asynchronous upstream calls.
class Host {
 public:
  /// `io`: the loop upstream calls run on.
  Host(UpstreamLookup lookup, asio::any_io_executor io);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  std::shared_ptr<upstream::Upstream> find(std::string_view server) const { return lookup_(server); }
  /// Runs `task` on a pool thread; false once shutting down.
  bool submit(std::function<void()> task) { return pool_.submit(std::move(task)); }
  /// The threads plugin handlers run on (they block, by the C ABI).
  WorkerPool& pool() { return pool_; }
  const asio::any_io_executor& io() const { return io_; }

 private:
  UpstreamLookup lookup_;
  asio::any_io_executor io_;
  WorkerPool pool_;
};

class Engine;
struct Outcome;

/// Writes a line of plugin `name`'s (its host function log) to the gateway
/// log at `level` (mcpgw_log_level).
void log_line(std::string_view name, int level, std::string_view message);

/// Where a library file is on disk: another inode or mtime means it was
/// rebuilt (SIGHUP loads it anew).
struct FileIdentity {
  std::uint64_t device = 0, inode = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
/// The identity of `path` now; all zero when it cannot be read (a bare
/// name that ld.so searches for).
FileIdentity identify(const std::string& path);

/// One loaded plugin, under either isolation (config isolation). Whoever
/// can still call a tool of it holds a shared_ptr; the last one unloads it
/// (in process) or stops its host, which runs the plugin's shutdown after
/// its last call.
class Plugin final : public upstream::ToolOrigin {
 public:
  /// Loads `cfg.path` in a host process of its own or in the gateway, checks
  /// its entry point and ABI version, runs init with `cfg.config_json` and
  /// reads the tool list. Every error names the file and what is wrong.
  /// Blocks: call it off the loop.
  static Result<std::shared_ptr<Plugin>> load(const config::Plugin& cfg, std::shared_ptr<Host> host);
  ~Plugin() override;
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const override { return name_; }
  int welcome_priority() const override { return 0; }
  bool has_tool(std::string_view tool) const override;
  /// Client input rounds may wait for a person: timeout_ms bounds each run
  /// of the handler (and the wait for a max_concurrency slot), not the call.
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::time_point::max();
  }
  /// Runs the handler (on the plugin pool or in the host process); the
  /// coroutine waits without a thread.
  Task<upstream::Reply> call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                                  const upstream::CallOptions& opts) override;

  const std::string& version() const { return version_; }
  const config::Plugin& config() const { return cfg_; }
  /// The library file as it was when loaded.
  const FileIdentity& file() const { return file_; }
  /// The tools it declared: MCP Tool objects, in its order.
  const json::Document& tools() const { return tools_; }
  /// "" while it serves; else why its calls fail (a host that keeps failing at start).
  std::string down() const;
  /// Its host process, 0 in process or between hosts.
  int pid() const;
  /// How memory_mb is enforced on its host processes ("" in process).
  std::string memory_limit() const;

 private:
  /// call_tool's work: the handler's rounds, asking the client between them.
  Task<upstream::Reply> run_rounds(std::string_view tool, const json::Value* arguments,
                                   const upstream::CallOptions& opts);
  /// One run of the handler, in a max_concurrency slot.
  Task<upstream::Reply> run_once(std::string name, std::string args, std::string answers, std::string state,
                                 const upstream::CallOptions& opts);
  /// A CallToolResult (or an input_required result to act on) from what
  /// the engine's run produced.
  upstream::Reply reply(const std::string& tool, Outcome outcome) const;
  /// Waits for a max_concurrency slot until `deadline` or cancel; false when none came.
  Task<bool> acquire(std::chrono::steady_clock::time_point deadline, CancelSignal* cancel);
  void release();
  /// Rounds of client input one call may ask for.
  static constexpr int kMaxInputRounds = 16;
  Plugin(config::Plugin cfg, std::shared_ptr<Host> host);

  config::Plugin cfg_;
  std::shared_ptr<Host> host_;
  std::shared_ptr<Engine> engine_;
  FileIdentity file_;
  std::string name_, version_;
  json::Document tools_{rapidjson::kArrayType};
  bool loaded_ = false;  ///< every check passed: it served tools
  util::Mutex slots_mu_;
  int running_ GUARDED_BY(slots_mu_) = 0;
  Event slot_freed_;
};

/// Loads every configured plugin, keeping the ones of `reuse` whose entry
/// and library file are unchanged. A plugin that fails to load is left out
/// and its error returned in `errors`; the others load.
struct LoadResult {
  std::vector<std::shared_ptr<Plugin>> plugins;
  std::vector<std::string> errors;
};
LoadResult load_all(const std::vector<config::Plugin>& cfgs, const std::shared_ptr<Host>& host,
                    const std::vector<std::shared_ptr<Plugin>>& reuse = {});

}  // namespace mcpgw::plugin
