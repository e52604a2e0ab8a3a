#include "transport/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace mcpgw::transport {
namespace {

struct Pipe {
  int r = -1, w = -1;
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    r = fds[0];
    w = fds[1];
    return true;
  }
  void close_all() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
    r = w = -1;
  }
};

std::string describe(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

/// The executable paths to try for `spec`, in order: a command with a slash
/// as is, else each directory of the PATH the child will have.
std::vector<std::string> candidates(const ChildSpec& spec, const std::vector<std::string>& env) {
  if (spec.command.find('/') != std::string::npos) return {spec.command};
  // execvpe would search the parent's PATH; the configured one must apply.
  std::string path_env = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path_env = e.substr(5);
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto end = path_env.find(':', start);
    std::string dir = path_env.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + spec.command);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

/// The child's stdin, stdout and stderr, and the pipe exec's errno comes
/// back on.
struct ChildPipes {
  Pipe in, out, err, status;
  bool open() { return in.open() && out.open() && err.open() && status.open(); }
  void close_all() { in.close_all(), out.close_all(), err.close_all(), status.close_all(); }
};

/// What exec needs, built before fork. argv and envp point into the strings
/// held here, so it stays where it is built.
struct PreparedExec {
  explicit PreparedExec(const ChildSpec& spec);
  PreparedExec(const PreparedExec&) = delete;
  PreparedExec& operator=(const PreparedExec&) = delete;

  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  std::vector<std::string> paths;  ///< the executables to try, in order
};

PreparedExec::PreparedExec(const ChildSpec& spec) : args{spec.command} {
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto name = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (auto& [k, v] : spec.env) overridden |= (k == name);
    if (!overridden) env.emplace_back(kv);
  }
  for (auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  paths = candidates(spec, env);
}

/// The child's side, between fork and exec: async-signal-safe calls only.
/// exec's errno, should every candidate fail, goes back on the status pipe.
[[noreturn]] void exec_child(const ChildSpec& spec, const PreparedExec& exec, const ChildPipes& pipes, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  // Undo the parent's signal set-up (it ignores SIGPIPE, blocks some).
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  dup2(pipes.in.r, 0);
  dup2(pipes.out.w, 1);
  dup2(pipes.err.w, 2);
  // Nothing else of ours crosses exec: sockets (the listener, clients'
  // connections) and the loop's descriptors are not opened close-on-exec
  // by Asio, and a child holding the listening socket would keep the port
  // after we exit. The status pipe is close-on-exec already.
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 4096; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  int e = 0;
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
    e = errno;
  } else {
    for (const auto& c : exec.paths) {
      execve(c.c_str(), exec.argv.data(), exec.envp.data());
      if (errno != ENOENT || e == 0) e = errno;
    }
  }
  [[maybe_unused]] ssize_t n = write(pipes.status.w, &e, sizeof e);
  _exit(127);
}

/// The parent's side once the child is forked: the child's pidfd once it has
/// exec'd (our ends of its stdio stay open), else why it did not start (then
/// it is killed and reaped and our ends are closed).
Result<int> started_child(const ChildSpec& spec, pid_t pid, const ChildPipes& pipes) {
  ::close(pipes.in.r);
  ::close(pipes.out.w);
  ::close(pipes.err.w);
  ::close(pipes.status.w);
  // The status pipe closes on exec (CLOEXEC) or carries exec's errno: a
  // wait of the order of a fork, not of the child's work.
  int child_errno = 0;
  ssize_t n;
  do n = read(pipes.status.r, &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  ::close(pipes.status.r);
  int pidfd = n == sizeof child_errno ? -1 : static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    std::string why = n == sizeof child_errno
                          ? "cannot start " + spec.command + (spec.cwd.empty() ? "" : " in " + spec.cwd) + ": " +
                                std::strerror(child_errno)
                          : std::string("pidfd_open: ") + std::strerror(errno);
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    ::close(pipes.in.w);
    ::close(pipes.out.r);
    ::close(pipes.err.r);
    return Error{why};
  }
  return pidfd;
}

}  // namespace

Result<std::shared_ptr<ChildProcess>> ChildProcess::spawn(asio::any_io_executor ex, const ChildSpec& spec) {
  if (spec.command.empty()) return Error{"empty command"};
  // Everything the child needs is prepared before fork: between fork and exec
  // only async-signal-safe calls are allowed in a threaded process.
  const PreparedExec exec(spec);
  ChildPipes pipes;
  if (!pipes.open()) {
    int e = errno;
    pipes.close_all();
    return Error{std::string("pipe: ") + std::strerror(e)};
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    pipes.close_all();
    return Error{std::string("fork: ") + std::strerror(e)};
  }
  if (pid == 0) exec_child(spec, exec, pipes, parent);
  auto pidfd = started_child(spec, pid, pipes);
  if (!pidfd) return Error{pidfd.error()};
  // Private constructor, so make_shared cannot reach it.
  std::shared_ptr<ChildProcess> c(new ChildProcess(std::move(ex), pid, *pidfd, pipes.in.w, pipes.out.r, pipes.err.r));
  c->watch();
  return c;
}

ChildProcess::ChildProcess(asio::any_io_executor ex, pid_t pid, int pidfd, int in, int out, int err)
    : pid_(pid), in_(ex, in), out_(ex, out), err_(ex, err), pidfd_(ex, pidfd), kill_timer_(ex) {}

ChildProcess::~ChildProcess() {
  // Only when the loop stopped before the child exited: the watch holds a
  // reference otherwise. A KILLed child is reaped at once.
  if (status()) return;
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

void ChildProcess::watch() {
  pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                    [self = shared_from_this()](const boost::system::error_code& ec) {
                      if (ec == asio::error::operation_aborted) return;
                      int st = 0;
                      pid_t r;
                      do r = waitpid(self->pid_, &st, WNOHANG);
                      while (r < 0 && errno == EINTR);
                      if (r == 0 && !ec) return self->watch();  // woken without an exit
                      self->reaped(r == self->pid_ ? describe(st) : "gone", r == self->pid_ ? st : 0);
                    });
}

void ChildProcess::reaped(const std::string& status, int wait_status) {
  // Grandchildren left in the group go with it.
  kill(-pid_, SIGKILL);
  kill_timer_.cancel();
  std::vector<ExitHandler> handlers;
  {
    util::MutexLock lk(mu_);
    status_ = status;
    wait_status_ = wait_status;
    handlers.swap(on_exit_);
  }
  for (auto& h : handlers) h(status);
}

void ChildProcess::on_exit(ExitHandler fn) {
  util::UniqueLock lk(mu_);
  if (!status_) {
    on_exit_.push_back(std::move(fn));
    return;
  }
  std::string st = *status_;
  lk.unlock();
  fn(st);
}

int ChildProcess::term_signal() const {
  util::MutexLock lk(mu_);
  return status_ && WIFSIGNALED(wait_status_) ? WTERMSIG(wait_status_) : 0;
}

int ChildProcess::exit_code() const {
  util::MutexLock lk(mu_);
  return status_ && WIFEXITED(wait_status_) ? WEXITSTATUS(wait_status_) : 0;
}

std::optional<std::string> ChildProcess::status() const {
  util::MutexLock lk(mu_);
  return status_;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  asio::post(kill_timer_.get_executor(), [self = shared_from_this(), grace] {
    if (self->stopping_ || self->status()) return;
    self->stopping_ = true;
    boost::system::error_code ignored;
    self->in_.close(ignored);
    kill(-self->pid_, SIGTERM);
    self->kill_timer_.expires_after(grace);
    self->kill_timer_.async_wait([self](const boost::system::error_code& ec) {
      if (!ec && !self->status()) kill(-self->pid_, SIGKILL);
    });
  });
}

}  // namespace mcpgw::transport
