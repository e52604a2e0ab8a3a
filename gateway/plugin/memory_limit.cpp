#include "plugin/memory_limit.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "plugin_host/address_limit.hpp"

namespace mcpgw::plugin {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

/// mountinfo writes space, tab, newline and backslash in paths as octal escapes.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      auto octal = [](char c) { return c >= '0' && c <= '7'; };
      if (octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
        out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<void> write_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  ssize_t n = ::write(fd, text.data(), text.size());
  int e = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return Error{"cannot write \"" + std::string(text) + "\" to " + path + ": " + std::strerror(n < 0 ? e : EIO)};
  return {};
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

/// The gateway's own cgroup v2 directory if memory.max can be set on a
/// group made in it; else why not.
Result<std::string> delegated_cgroup() {
  auto own = read_file("/proc/self/cgroup");
  auto path = own ? cgroup2_path(*own) : std::nullopt;
  if (!path) return Error{"the gateway is in no cgroup v2 hierarchy"};
  auto mounts = read_file("/proc/self/mountinfo");
  auto dir = mounts ? cgroup2_directory(*mounts, *path) : std::nullopt;
  if (!dir) return Error{"its cgroup v2 hierarchy (" + *path + ") is not mounted here"};
  const std::string controllers = trimmed(read_file(*dir + "/cgroup.controllers").value_or(""));
  if (!lists_controller(controllers, "memory"))
    return Error{"the memory controller is not available in " + *dir + " (cgroup.controllers: \"" + controllers + "\")"};
  if (!lists_controller(read_file(*dir + "/cgroup.subtree_control").value_or(""), "memory"))
    if (auto on = write_file(*dir + "/cgroup.subtree_control", "+memory"); !on)
      return Error{"the memory controller cannot be enabled for groups under " + *dir + ": " + on.error()};
  if (::access(dir->c_str(), W_OK) != 0) return Error{*dir + " is not writable: " + std::strerror(errno)};
  return *dir;
}

}  // namespace

std::optional<std::string> cgroup2_path(std::string_view proc_cgroup) {
  for (auto line : split(proc_cgroup, '\n'))
    if (line.starts_with("0::")) return std::string(line.substr(3));
  return std::nullopt;
}

std::optional<std::string> cgroup2_directory(std::string_view mountinfo, std::string_view path) {
  for (auto line : split(mountinfo, '\n')) {
    auto fields = split(line, ' ');
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
    std::size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 1 >= fields.size() || fields[dash + 1] != "cgroup2") continue;
    const std::string root = unescape(fields[3]), mount = unescape(fields[4]);
    if (root == "/") return path == "/" ? mount : mount + std::string(path);
    if (path == root) return mount;
    if (path.starts_with(root + "/")) return mount + std::string(path.substr(root.size()));
  }
  return std::nullopt;
}

bool lists_controller(std::string_view list, std::string_view controller) {
  for (auto line : split(list, '\n'))
    for (auto word : split(line, ' '))
      if (word == controller) return true;
  return false;
}

Result<std::shared_ptr<HostCgroup>> HostCgroup::make(std::string dir, int mb) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Error{"cannot make cgroup " + dir + ": " + std::strerror(errno)};
  // Not make_shared: the constructor is private to keep make() the only way in.
  std::shared_ptr<HostCgroup> g(new HostCgroup(std::move(dir)));
  if (auto set = write_file(g->dir_ + "/memory.max", std::to_string(static_cast<long long>(mb) * 1024 * 1024)); !set)
    return Error{set.error()};
  // Swap would let a host run past the limit slowly instead of stopping
  // it; a kernel without swap accounting has no such file. One OOM kill
  // takes the whole group: a host half killed serves nobody.
  if (const std::string swap = g->dir_ + "/memory.swap.max"; ::access(swap.c_str(), F_OK) == 0)
    if (auto noswap = write_file(swap, "0"); !noswap) spdlog::warn("{}", noswap.error());
  (void)write_file(g->dir_ + "/memory.oom.group", "1");
  return g;
}

HostCgroup::~HostCgroup() {
  if (::rmdir(dir_.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("cannot remove cgroup {}: {}", dir_, std::strerror(errno));
}

Result<void> HostCgroup::join(pid_t pid) const { return write_file(dir_ + "/cgroup.procs", std::to_string(pid)); }

bool HostCgroup::oom_killed() const {
  const std::string events = read_file(dir_ + "/memory.events").value_or("");
  for (auto line : split(events, '\n'))
    if (line.starts_with("oom_kill ") && line.substr(9) != "0") return true;
  return false;
}

MemoryLimit MemoryLimit::choose(int mb) {
  MemoryLimit m;
  m.mb_ = mb;
  if (mb <= 0) {
    m.description_ = "none (memory_mb: 0)";
    return m;
  }
  auto dir = delegated_cgroup();
  if (dir) {
    m.kind_ = Kind::Cgroup;
    m.parent_ = *dir;
    m.description_ = "cgroup v2 memory.max, a group per host process under " + *dir;
    return m;
  }
  if (plugin_host::kAddressLimitWorks) {
    m.kind_ = Kind::Rlimit;
    m.description_ = "RLIMIT_AS, set by the host process on itself (no cgroup v2: " + dir.error() + ")";
  } else {
    m.description_ = "none: a sanitizer build cannot limit its address space (no cgroup v2: " + dir.error() + ")";
  }
  return m;
}

Result<std::shared_ptr<HostCgroup>> MemoryLimit::group_for(pid_t pid) const {
  auto g = HostCgroup::make(parent_ + "/mcpgw-plugin-host-" + std::to_string(pid), mb_);
  if (!g) return g;
  if (auto joined = (*g)->join(pid); !joined) return Error{joined.error()};
  return g;
}

}  // namespace mcpgw::plugin
