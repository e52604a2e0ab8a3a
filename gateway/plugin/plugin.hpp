#pragma once
// Composite-tool plugins: shared libraries speaking the C ABI of
// plugins/include/mcpgw/plugin.h, loaded into the gateway. A loaded plugin
// is a ToolOrigin: its tools enter the catalog next to the proxied ones.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "upstream/upstream.hpp"
#include "util/result.hpp"
#include "util/worker_pool.hpp"

struct mcpgw_plugin;

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

/// One loaded plugin. Destroying it calls the plugin's shutdown and unloads
/// the library; whoever can still call a tool of it holds a shared_ptr, so
/// that happens after the last call has returned.
class Plugin final : public upstream::ToolOrigin {
 public:
  /// Loads `cfg.path` (dlopen RTLD_NOW | RTLD_LOCAL), checks the entry
  /// point and ABI version, runs init with `cfg.config_json` and reads the
  /// tool list. Every error names the file and what is wrong.
  static Result<std::shared_ptr<Plugin>> load(const config::Plugin& cfg, std::shared_ptr<Host> host);
  ~Plugin() override;
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const override { return name_; }
  int welcome_priority() const override { return 0; }
  bool has_tool(std::string_view tool) const override;
  /// Plugin code cannot be interrupted: the plugin's own upstream calls are
  /// what the deadline bounds, each by its server's timeout.
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::time_point::max();
  }
  /// Runs the handler on the host's pool; the coroutine waits without a thread.
  Task<upstream::Reply> call_tool(std::string_view tool, const json::Value* arguments, const json::Value* meta,
                                  const upstream::CallOptions& opts) override;

  const std::string& version() const { return version_; }
  const config::Plugin& config() const { return cfg_; }
  /// The tools it declared: MCP Tool objects, in its order.
  const json::Document& tools() const { return tools_; }

  /// Writes a line of the plugin's to the gateway log (host function).
  void log(int level, std::string_view message) const;
  Host& host() const { return *host_; }

 private:
  /// call_tool's work: the handler's rounds, asking the client between them.
  Task<upstream::Reply> run_rounds(std::string_view tool, const json::Value* arguments,
                                   const upstream::CallOptions& opts);
  /// Rounds of client input one call may ask for.
  static constexpr int kMaxInputRounds = 16;
  /// One run of the handler, with the answers and state of earlier rounds
  /// (JSON); a CallToolResult, or an input_required result to act on.
  upstream::Reply invoke(const std::string& name, const std::string& args, std::string answers, std::string state,
                         const upstream::CallOptions& opts);
  struct Library;
  Plugin(config::Plugin cfg, std::shared_ptr<Host> host);

  config::Plugin cfg_;
  std::shared_ptr<Host> host_;
  std::unique_ptr<Library> lib_;
  const mcpgw_plugin* desc_ = nullptr;
  void* state_ = nullptr;
  bool initialized_ = false;  ///< init succeeded: shutdown is owed
  bool loaded_ = false;       ///< every check passed: it served tools
  std::string name_, version_;
  json::Document tools_{rapidjson::kArrayType};
};

/// Loads every configured plugin. A plugin that fails to load is left out
/// and its error returned in `errors`; the others load.
struct LoadResult {
  std::vector<std::shared_ptr<Plugin>> plugins;
  std::vector<std::string> errors;
};
LoadResult load_all(const std::vector<config::Plugin>& cfgs, const std::shared_ptr<Host>& host,
                    const std::vector<std::shared_ptr<Plugin>>& reuse = {});

}  // namespace mcpgw::plugin
