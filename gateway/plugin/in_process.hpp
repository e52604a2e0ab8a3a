#pragma once
// isolation: none: the plugin's library loaded into the gateway process
// (dlopen), its handlers run on the plugin pool. For trusted code only: a
// crash in it is a crash of the gateway.
#include <memory>
#include <string>

#include "plugin/engine.hpp"
#include "plugin/plugin.hpp"

struct mcpgw_plugin;

namespace mcpgw::plugin {

/// A plugin library loaded in process. Destroying it calls the plugin's
/// shutdown and unloads the library.
class InProcess final : public Engine {
 public:
  /// What opening found: the engine and the plugin's own description.
  struct Opened {
    std::unique_ptr<InProcess> engine;
    std::string name, version, tools_json;
  };
  /// Loads `cfg.path` (dlopen RTLD_NOW | RTLD_LOCAL), checks the entry point
  /// and ABI version, runs init with `cfg.config_json` and lists the tools.
  /// Every error names the file and what is wrong.
  static Result<Opened> open(const config::Plugin& cfg, std::shared_ptr<Host> host);
  ~InProcess() override;
  InProcess(const InProcess&) = delete;
  InProcess& operator=(const InProcess&) = delete;

  /// Runs the handler on the host's pool; the coroutine waits without a
  /// thread. The handler cannot be interrupted: `deadline` bounds only its
  /// upstream calls (through opts).
  Task<Outcome> call(const Run& run, const upstream::CallOptions& opts,
                     std::chrono::steady_clock::time_point deadline) override;

  Host& host() const { return *host_; }
  const std::string& name() const { return name_; }

 private:
  InProcess(std::shared_ptr<Host> host, std::string path);
  Outcome invoke(const Run& run, const upstream::CallOptions& opts);
  struct Library;

  std::shared_ptr<Host> host_;
  std::string path_;
  std::unique_ptr<Library> lib_;
  const mcpgw_plugin* desc_ = nullptr;
  void* state_ = nullptr;
  bool initialized_ = false;  ///< init succeeded: shutdown is owed
  std::string name_;
};

}  // namespace mcpgw::plugin
