#pragma once
// Giving memory back to the system after large work.
#include <atomic>
#include <chrono>
#include <cstddef>

namespace mcpgw {

/// Returns the heap's free memory to the system after a request that took
/// a lot of it (a large body, a big batch), at most once per `interval`.
/// glibc keeps what a burst of allocations freed in its arenas (one per
/// thread that allocated): without a trim, a single 4 MiB batch left the
/// process hundreds of megabytes larger for good. A trim walks every arena
/// (about a millisecond per hundred megabytes), so it is kept for the
/// requests that need it.
class MemoryTrimmer {
 public:
  /// Requests of at least this many bytes are large.
  static constexpr std::size_t kLargeRequest = 1 << 20;

  explicit MemoryTrimmer(std::chrono::milliseconds interval = std::chrono::seconds(1)) : interval_(interval) {}
  /// A request of `bytes` is over: trims when it was large and the last
  /// trim is `interval` old. Safe from any thread.
  void after(std::size_t bytes);

 private:
  const std::chrono::milliseconds interval_;
  std::atomic<std::int64_t> last_ns_{0};
};

/// Asks the kernel to back the part of [p, p + n) that holds whole 2 MiB
/// pages with transparent huge pages (where the system leaves that to the
/// program, `madvise` mode). A buffer of megabytes filled at once is then
/// faulted in a huge page at a time instead of 4 KiB at a time: each fault
/// costs a trip into the kernel, which under a hypervisor is most of what
/// filling the buffer costs. Does nothing for smaller buffers.
void prefer_huge_pages(void* p, std::size_t n);

}  // namespace mcpgw
