#pragma once
// Buffers of megabytes kept a short while after use, for the next large answer.
#include <chrono>
#include <cstddef>
#include <memory>

namespace mcpgw {

/// Large buffers (the body of a large answer) kept for reuse for a while
/// after their last holder let go. A new mapping is faulted in page by page
/// as it is first written, and the kernel zeroes each page first: under a
/// hypervisor, reading 16 MiB into fresh memory cost ten times what reading
/// it into memory used before did. At most `max_bytes` are kept, each
/// buffer at most `keep` after its release (decay(), which the I/O loop
/// calls every second); the rest goes back to the system at once, as large
/// buffers do (their own mappings). Safe from any thread.
class BufferCache {
 public:
  using Clock = std::chrono::steady_clock;
  /// Smaller buffers are plain allocations, never kept.
  static constexpr std::size_t kMinSize = 1 << 20;

  BufferCache(std::size_t max_bytes, std::chrono::milliseconds keep);
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  /// A buffer of at least `n` bytes, not zero-filled: a kept one that fits
  /// (not more than twice as large), else a new one, advised into huge
  /// pages. It returns to the cache when the last copy of the pointer goes
  /// (or to the system, once the cache is gone).
  std::shared_ptr<char[]> take(std::size_t n);
  /// Lets go of the buffers released longer than `keep` before `now`.
  void decay(Clock::time_point now = Clock::now());
  /// Bytes kept for reuse.
  std::size_t kept_bytes() const;

 private:
  struct State;
  struct GiveBack;  ///< a taken buffer's deleter
  std::shared_ptr<State> state_;
};

}  // namespace mcpgw
