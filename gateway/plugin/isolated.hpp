#pragma once
// isolation: process (the default): the plugin runs in a host process of
// its own (HostProcess), supervised like a stdio upstream. A host that dies
// costs only the calls in it; the next one starts after a backoff, and a
// plugin whose hosts keep failing at start is reported down (its tools
// answer with why) until one starts.
#include <chrono>
#include <memory>
#include <string>

#include "plugin/engine.hpp"
#include "plugin/host_process.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::plugin {

class Isolated final : public Engine, public std::enable_shared_from_this<Isolated> {
 public:
  /// What starting found: the engine and the plugin's own description.
  struct Opened {
    std::shared_ptr<Isolated> engine;
    Hello hello;
  };
  /// Starts the first host for `cfg` and waits for its init and tool list
  /// (within timeout_ms). Blocks: not on the loop.
  static Result<Opened> open(const config::Plugin& cfg, std::shared_ptr<Host> host);
  /// Stops the host: it runs the plugin's shutdown after its last call.
  ~Isolated() override;
  Isolated(const Isolated&) = delete;
  Isolated& operator=(const Isolated&) = delete;

  /// Runs `run` in the current host; between hosts, waits for the next
  /// within `deadline`; fails at once while the plugin is down.
  Task<Outcome> call(const Run& run, const upstream::CallOptions& opts,
                     std::chrono::steady_clock::time_point deadline) override;
  std::string down() const override;
  int pid() const override;
  std::string memory_limit() const override { return spec_.memory.description(); }

  /// Starts in a row that fail before a plugin is reported down.
  static constexpr int kDownAfter = 3;

 private:
  Isolated(std::shared_ptr<Host> host, HostSpec spec);
  /// Makes `hp` the host calls go to.
  void adopt(const std::shared_ptr<HostProcess>& hp);
  /// Host `hp` died (`why`): the next starts after the backoff.
  void lost(const HostProcess* hp, const std::string& why);
  /// Starts the next host after `delay`.
  void schedule(std::chrono::milliseconds delay);
  Task<> restart();

  std::shared_ptr<Host> host_;
  HostSpec spec_;
  mutable util::Mutex mu_;
  std::shared_ptr<HostProcess> current_ GUARDED_BY(mu_);
  std::string down_ GUARDED_BY(mu_);
  int failures_ GUARDED_BY(mu_) = 0;  ///< starts in a row that failed
  std::chrono::milliseconds backoff_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  Event changed_;  ///< a host came, or the plugin went down
};

/// The mcpgw-plugin-host executable: next to the running mcpgw binary (a
/// build tree), else in ../lib/mcpgw/ from it (installed).
std::string host_program();

}  // namespace mcpgw::plugin
