#pragma once
// How memory_mb is enforced on a plugin's host processes: a cgroup v2 group
// of its own per host with memory.max, where the gateway's own cgroup lets
// it make one with the memory controller (memory actually used counts, and
// a host past it is killed by the kernel's OOM killer); else RLIMIT_AS,
// which the host sets on itself (address space counts, and an allocation
// past it fails); in a sanitizer build, where neither the address-space
// limit nor (without cgroup) anything else works, not at all.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace mcpgw::plugin {

/// The cgroup v2 path ("/a/b") in the text of /proc/PID/cgroup (its
/// "0::PATH" line), or nullopt when the process is in no v2 hierarchy.
std::optional<std::string> cgroup2_path(std::string_view proc_cgroup);
/// The directory of cgroup v2 `path` in the text of /proc/PID/mountinfo
/// (the cgroup2 mount whose root holds it), or nullopt when none does.
std::optional<std::string> cgroup2_directory(std::string_view mountinfo, std::string_view path);
/// Whether a cgroup.controllers or cgroup.subtree_control text names `controller`.
bool lists_controller(std::string_view list, std::string_view controller);

/// A host process's own cgroup; removed when the last holder lets go
/// (after the host has been reaped: a group with a process in it stays).
class HostCgroup {
 public:
  /// Makes `dir` with memory.max = `mb` MiB (and no swap past it).
  static Result<std::shared_ptr<HostCgroup>> make(std::string dir, int mb);
  ~HostCgroup();
  HostCgroup(const HostCgroup&) = delete;
  HostCgroup& operator=(const HostCgroup&) = delete;
  /// Moves process `pid` into the group.
  Result<void> join(pid_t pid) const;
  /// Whether the kernel's OOM killer has killed a process of the group.
  bool oom_killed() const;
  const std::string& dir() const { return dir_; }

 private:
  explicit HostCgroup(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

/// The mechanism one plugin's hosts are limited by, chosen once per plugin.
class MemoryLimit {
 public:
  enum class Kind {
    Cgroup,  ///< a group per host under the gateway's own cgroup
    Rlimit,  ///< RLIMIT_AS, set by the host on itself
    None,    ///< memory_mb is 0, or nothing works (a sanitizer build without cgroup)
  };
  /// Decides for `mb` MiB: tries a group under the gateway's own cgroup
  /// (read from /proc/self), else the next best, and says why.
  static MemoryLimit choose(int mb);
  Kind kind() const { return kind_; }
  int mb() const { return mb_; }
  /// What the status page and the log say: the mechanism and, when it is
  /// not cgroup, why not.
  const std::string& description() const { return description_; }
  /// A group for the host `pid` (Kind::Cgroup only).
  Result<std::shared_ptr<HostCgroup>> group_for(pid_t pid) const;

 private:
  Kind kind_ = Kind::None;
  int mb_ = 0;
  std::string parent_;  ///< the gateway's cgroup directory (Kind::Cgroup)
  std::string description_;
};

}  // namespace mcpgw::plugin
