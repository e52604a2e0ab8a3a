#include "util/memory.hpp"

#include <sys/mman.h>

#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mcpgw {

void MemoryTrimmer::after(std::size_t bytes) {
  if (bytes < kLargeRequest) return;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  std::int64_t last = last_ns_.load();
  if (now - last < std::chrono::nanoseconds(interval_).count()) return;
  // One thread trims; the others had it done for them.
  if (!last_ns_.compare_exchange_strong(last, now)) return;
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void prefer_huge_pages(void* p, std::size_t n) {
  constexpr std::uintptr_t kHuge = 2 << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(kHuge - 1);
  // Only advice: a kernel without huge pages refuses it, and nothing changes.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace mcpgw
