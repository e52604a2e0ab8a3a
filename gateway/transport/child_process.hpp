#pragma once
// A child process with pipes on stdin/stdout/stderr, in its own process
// group, watched on the I/O loop: its pipes are stream descriptors and its
// exit is noticed through a pidfd, so no thread waits for it.
#include <sys/types.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw::transport {

namespace asio = boost::asio;

/// What to run.
struct ChildSpec {
  std::string command;   ///< looked up in PATH when it has no slash
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  ///< added to ours
  std::string cwd;       ///< empty = ours
};

/// Owns a running child. It is reaped on the loop as soon as it exits (the
/// pidfd watch keeps this object alive until then), so no zombie is left
/// while the loop runs; should the loop stop first, destruction kills the
/// group and reaps synchronously.
class ChildProcess : public std::enable_shared_from_this<ChildProcess> {
 public:
  /// Called once with the exit status as text ("exit 3", "signal 9").
  using ExitHandler = std::function<void(const std::string& status)>;

  /// Starts the child, its pipes, pidfd and timer bound to `ex`, which
  /// must be a strand: every handler of the child runs on it, and stop()
  /// posts there. The child gets its own
  /// process group (so signals to us do not reach it directly, and killing
  /// the group also kills its children) and SIGKILL when the thread that
  /// spawned it dies: spawn from a thread that lives as long as the child
  /// should.
  static Result<std::shared_ptr<ChildProcess>> spawn(asio::any_io_executor ex, const ChildSpec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// Our ends of the child's pipes. Use them from one strand at a time each.
  asio::posix::stream_descriptor& in() { return in_; }
  asio::posix::stream_descriptor& out() { return out_; }
  asio::posix::stream_descriptor& err() { return err_; }
  /// Hands our ends of the child's stdin and stdout over: the caller owns
  /// them from then on (and closes stdin to ask the child to end, which
  /// stop() then leaves to it).
  std::pair<int, int> release_stdio() { return {in_.release(), out_.release()}; }

  /// Runs `fn` with the exit status once the child has exited and been
  /// reaped, at once (in this thread) when it already has.
  void on_exit(ExitHandler fn);
  /// The exit status once reaped.
  std::optional<std::string> status() const;
  /// The signal that ended the child (0: it exited, or is not reaped yet),
  /// and its exit code when it exited.
  int term_signal() const;
  int exit_code() const;
  /// Closes its stdin (unless released), TERMs the group and KILLs it
  /// after `grace` if the child is still there; returns at once (on_exit
  /// tells when it is over). Idempotent.
  void stop(std::chrono::milliseconds grace);

 private:
  ChildProcess(asio::any_io_executor ex, pid_t pid, int pidfd, int in, int out, int err);
  void watch();
  void reaped(const std::string& status, int wait_status);

  pid_t pid_;
  asio::posix::stream_descriptor in_, out_, err_, pidfd_;
  asio::steady_timer kill_timer_;
  mutable util::Mutex mu_;
  std::optional<std::string> status_ GUARDED_BY(mu_);
  int wait_status_ GUARDED_BY(mu_) = 0;  ///< waitpid's, once reaped
  std::vector<ExitHandler> on_exit_ GUARDED_BY(mu_);
  bool stopping_ = false;  ///< only touched on the executor (stop()'s handler): no lock
};

}  // namespace mcpgw::transport
