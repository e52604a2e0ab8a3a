#pragma once
// One running mcpgw-plugin-host: the child process, the framed protocol
// on its stdin and stdout (plugin_host/frame.hpp), its stderr read into
// the gateway log (rate-limited), the calls in flight in it. When it dies,
// each of those calls fails with what happened; nothing is retried.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/strand.hpp>

#include "plugin/engine.hpp"
#include "plugin/memory_limit.hpp"
#include "plugin/plugin.hpp"
#include "plugin_host/frame.hpp"
#include "transport/child_process.hpp"
#include "upstream/log_gate.hpp"
#include "util/event.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::plugin {

/// What a host is started with.
struct HostSpec {
  std::string program;  ///< the mcpgw-plugin-host executable
  config::Plugin cfg;
  std::string label;    ///< how logs and errors name the plugin (its name once known, else its path)
  MemoryLimit memory;   ///< how memory_mb is enforced
};

/// The plugin's own description, as its host reported it after init.
struct Hello {
  std::string name, version, tools_json;
};

class HostProcess : public std::enable_shared_from_this<HostProcess> {
 public:
  /// Starts a host for `spec` (on the loop of `host`) and waits until its
  /// plugin has run init and listed its tools, or `deadline`. The error
  /// names the library and what went wrong (the plugin's refusal, a crash
  /// with its signal, no answer in time).
  static Task<Result<std::pair<std::shared_ptr<HostProcess>, Hello>>> start(std::shared_ptr<Host> host, HostSpec spec,
                                                                          std::chrono::steady_clock::time_point deadline);
  ~HostProcess();
  HostProcess(const HostProcess&) = delete;
  HostProcess& operator=(const HostProcess&) = delete;

  /// Runs `run` in the host. Past `deadline` the call fails and the host is
  /// killed (its other calls fail as having lost their host). Returns once
  /// the plugin's upstream calls for it have ended too.
  Task<Outcome> call(const Run& run, const upstream::CallOptions& opts, std::chrono::steady_clock::time_point deadline);
  /// Called once when the host has died or been killed (not when stop()
  /// ended it), with why; at once when that has happened already.
  void on_death(std::function<void(const std::string& why)> fn);
  /// Asks the host to end: it lets its calls finish, runs the plugin's
  /// shutdown and exits; killed if still there after a grace period.
  void stop();
  /// Kills the host now; its calls fail with `why`.
  void kill(const std::string& why);
  int pid() const { return child_->pid(); }
  /// When it was started.
  std::chrono::steady_clock::time_point started() const { return started_; }
  /// Whether it has answered a call: it started well.
  bool served() const;

 private:
  struct Pending;
  HostProcess(std::shared_ptr<Host> host, HostSpec spec, asio::strand<asio::any_io_executor> strand,
              std::shared_ptr<transport::ChildProcess> child);
  void begin();
  void send(plugin_host::Type type, std::uint64_t id, std::uint64_t sub,
            std::initializer_list<std::optional<std::string_view>> fields);
  Task<> write_out();
  Task<> read_frames();
  Task<> read_stderr();
  void handle(plugin_host::Frame& f);
  void upstream_call(plugin_host::Frame& f);
  /// The host is gone (`why`): every call in flight fails.
  void died(const std::string& why);
  /// What a call lost with its host is told.
  std::string lost_message(const Pending& p, const std::string& why) const;
  std::string exit_cause() const;

  std::shared_ptr<Host> host_;
  HostSpec spec_;
  asio::strand<asio::any_io_executor> strand_;
  std::shared_ptr<transport::ChildProcess> child_;
  std::shared_ptr<HostCgroup> cgroup_;  ///< its memory_mb group (cgroup v2), or null
  std::chrono::steady_clock::time_point started_;
  upstream::LogGate log_gate_;

  mutable util::Mutex mu_;
  std::string outbox_ GUARDED_BY(mu_);
  bool writing_ GUARDED_BY(mu_) = false;
  std::map<std::uint64_t, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);
  std::uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::optional<std::string> dead_ GUARDED_BY(mu_);     ///< why it is gone
  std::optional<std::string> killing_ GUARDED_BY(mu_);  ///< why we killed it
  bool stopping_ GUARDED_BY(mu_) = false;
  bool served_ GUARDED_BY(mu_) = false;
  bool frames_ended_ GUARDED_BY(mu_) = false;  ///< its stdout reached its end
  std::optional<Hello> hello_ GUARDED_BY(mu_);
  std::optional<std::string> refused_ GUARDED_BY(mu_);  ///< the host's Failed message
  std::function<void(const std::string&)> on_death_ GUARDED_BY(mu_);
  Event changed_;  ///< hello, refusal, the end of its frames, or death
};

}  // namespace mcpgw::plugin
