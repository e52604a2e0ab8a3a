#pragma once
// A child process with pipes on stdin/stdout/stderr, in its own process group.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace mcpgw::transport {

struct ChildSpec {
  std::string command;   ///< looked up in PATH when it has no slash
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  ///< added to ours
  std::string cwd;       ///< empty = ours
};

/// Owns a running child. Destruction stops the whole process group (TERM,
/// then KILL after a grace period) and reaps it, so no child outlives us.
class ChildProcess {
 public:
  /// Starts the child. It gets its own process group (so signals to us do not
  /// reach it directly, and killing the group also kills its children) and
  /// SIGKILL when the thread that spawned it dies: spawn from a thread that
  /// lives as long as the child should.
  static Result<std::unique_ptr<ChildProcess>> spawn(const ChildSpec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }

  /// Writes all of `data` to the child's stdin; false when the pipe is closed.
  bool write_all(std::string_view data);
  /// Closes our end of the child's stdin (the child sees EOF once writes
  /// already in progress have finished).
  void close_stdin();
  /// TERM to the group, wait up to `grace`, then KILL; reaps. Idempotent.
  /// Returns the exit status as a readable string ("exit 3", "signal 9").
  std::string stop(std::chrono::milliseconds grace);
  /// Waits up to `timeout` for the child to exit on its own; reaps it.
  std::optional<std::string> wait_exit(std::chrono::milliseconds timeout);

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  /// Closes an fd when the last user lets go: a writer keeps stdin open
  /// while close_stdin runs on another thread.
  struct Fd {
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();
    int fd;
  };
  std::shared_ptr<Fd> stdin_pipe() const;
  std::shared_ptr<Fd> in_;
  int out_ = -1, err_ = -1;
  mutable std::mutex mu_;
  std::optional<std::string> status_;
};

}  // namespace mcpgw::transport
