#include "transport/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const ChildSpec& spec) {
  if (spec.command.empty()) return Error{"empty command"};
  // Everything the child needs is prepared before fork: between fork and exec
  // only async-signal-safe calls are allowed in a threaded process.
  std::vector<std::string> argv_s{spec.command};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto name = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (auto& [k, v] : spec.env) overridden |= (k == name);
    if (!overridden) env_s.emplace_back(kv);
  }
  for (auto& [k, v] : spec.env) env_s.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  // execvpe searches the PATH of the environment we give it only through
  // the parent's PATH; resolve it ourselves so a configured PATH applies.
  std::string path_env = "/usr/local/bin:/usr/bin:/bin";
  for (auto& e : env_s)
    if (e.rfind("PATH=", 0) == 0) path_env = e.substr(5);
  std::vector<std::string> candidates;
  if (spec.command.find('/') != std::string::npos) {
    candidates.push_back(spec.command);
  } else {
    std::size_t start = 0;
    while (start <= path_env.size()) {
      auto end = path_env.find(':', start);
      std::string dir = path_env.substr(start, end == std::string::npos ? std::string::npos : end - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + spec.command);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }

  Pipe in, out, err, status;
  if (!in.open() || !out.open() || !err.open() || !status.open()) {
    int e = errno;
    in.close_all(), out.close_all(), err.close_all(), status.close_all();
    return Error{std::string("pipe: ") + std::strerror(e)};
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    in.close_all(), out.close_all(), err.close_all(), status.close_all();
    return Error{std::string("fork: ") + std::strerror(e)};
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    // Undo the parent's signal set-up (httplib ignores SIGPIPE, we block some).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    dup2(in.r, 0);
    dup2(out.w, 1);
    dup2(err.w, 2);
    int e = 0;
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
      e = errno;
    } else {
      for (auto& c : candidates) {
        execve(c.c_str(), argv.data(), envp.data());
        if (errno != ENOENT || e == 0) e = errno;
      }
    }
    [[maybe_unused]] ssize_t n = write(status.w, &e, sizeof e);
    _exit(127);
  }
  ::close(in.r);
  ::close(out.w);
  ::close(err.w);
  ::close(status.w);
  int child_errno = 0;
  ssize_t n;
  do n = read(status.r, &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  ::close(status.r);
  if (n == sizeof child_errno) {
    waitpid(pid, nullptr, 0);
    ::close(in.w);
    ::close(out.r);
    ::close(err.r);
    return Error{"cannot start " + spec.command + (spec.cwd.empty() ? "" : " in " + spec.cwd) + ": " +
                 std::strerror(child_errno)};
  }
  std::unique_ptr<ChildProcess> c(new ChildProcess());  // private constructor
  c->pid_ = pid;
  c->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  c->in_ = std::make_shared<Fd>(in.w);
  c->out_ = out.r;
  c->err_ = err.r;
  return c;
}

ChildProcess::~ChildProcess() {
  stop(std::chrono::milliseconds(2000));
  for (int fd : {out_, err_, pidfd_})
    if (fd >= 0) ::close(fd);
}

ChildProcess::Fd::~Fd() { ::close(fd); }

std::shared_ptr<ChildProcess::Fd> ChildProcess::stdin_pipe() const {
  std::lock_guard lk(mu_);
  return in_;
}

bool ChildProcess::write_all(std::string_view data) {
  auto in = stdin_pipe();
  if (!in) return false;
  while (!data.empty()) {
    ssize_t n = ::write(in->fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void ChildProcess::close_stdin() {
  std::lock_guard lk(mu_);
  in_.reset();
}

std::optional<std::string> ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  {
    std::lock_guard lk(mu_);
    if (status_) return status_;
  }
  // The reader thread and stop() may both wait; the poll is shared, the
  // reaping happens once under the lock.
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    int r;
    do r = poll(&p, 1, static_cast<int>(timeout.count()));
    while (r < 0 && errno == EINTR);
    if (r == 0) return std::nullopt;
  }
  std::lock_guard lk(mu_);
  if (status_) return status_;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) status_ = describe(st);
  else if (r < 0) status_ = "gone";
  return status_;
}

std::string ChildProcess::stop(std::chrono::milliseconds grace) {
  if (auto s = wait_exit(std::chrono::milliseconds(0))) return *s;
  close_stdin();
  kill(-pid_, SIGTERM);
  if (auto s = wait_exit(grace)) {
    kill(-pid_, SIGKILL);  // grandchildren left in the group
    return *s;
  }
  kill(-pid_, SIGKILL);
  if (auto s = wait_exit(std::chrono::milliseconds(5000))) return *s;
  return "unreaped";
}

}  // namespace mcpgw::transport
