// The pure parts of memory_mb's cgroup v2 path (plugin/memory_limit.hpp):
// finding the gateway's own group from /proc/self/cgroup and mountinfo,
// and reading controller lists.
#include <doctest/doctest.h>

#include "plugin/memory_limit.hpp"

using namespace mcpgw::plugin;

TEST_CASE("cgroup2_path: the 0:: line of /proc/PID/cgroup, hybrid or unified") {
  CHECK(cgroup2_path("0::/system.slice/mcpgw.service\n") == "/system.slice/mcpgw.service");
  CHECK(cgroup2_path("9:name=systemd:/\n4:memory:/x/y\n0::/\n") == "/");
  CHECK(cgroup2_path("4:memory:/x/y\n1:cpu:/\n") == std::nullopt);
  CHECK(cgroup2_path("") == std::nullopt);
}

TEST_CASE("cgroup2_directory: the cgroup2 mount holding the path, with the mount's root and escapes") {
  const std::string hybrid =
      "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
  CHECK(cgroup2_directory(hybrid, "/") == "/sys/fs/cgroup/unified");
  CHECK(cgroup2_directory(hybrid, "/a/b") == "/sys/fs/cgroup/unified/a/b");
  // Optional fields before the separator; a container's mount of a subtree.
  const std::string nested =
      "29 23 0:26 /kubepods/pod1 /sys/fs/cgroup rw,nosuid shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate\n";
  CHECK(cgroup2_directory(nested, "/kubepods/pod1") == "/sys/fs/cgroup");
  CHECK(cgroup2_directory(nested, "/kubepods/pod1/c") == "/sys/fs/cgroup/c");
  CHECK(cgroup2_directory(nested, "/kubepods/pod10") == std::nullopt);
  CHECK(cgroup2_directory("40 30 0:37 / /mnt/with\\040space rw - cgroup2 none rw\n", "/g") == "/mnt/with space/g");
  CHECK(cgroup2_directory("34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "/") == std::nullopt);
}

TEST_CASE("lists_controller: whole words of a controller list") {
  CHECK(lists_controller("cpuset cpu io memory pids\n", "memory"));
  CHECK_FALSE(lists_controller("hugetlb\n", "memory"));
  CHECK_FALSE(lists_controller("memoryx\n", "memory"));
  CHECK_FALSE(lists_controller("", "memory"));
}
