#include "util/buffer_cache.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "util/memory.hpp"
#include "util/thread_annotations.hpp"

namespace mcpgw {
namespace {

/// Sizes are rounded up to whole huge pages: answers of nearly the same
/// size share buffers.
constexpr std::size_t kGrain = 2 << 20;

struct Block {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
  BufferCache::Clock::time_point released{};
};

}  // namespace

struct BufferCache::State {
  State(std::size_t max, std::chrono::milliseconds k) : max_bytes(max), keep(k) {}
  const std::size_t max_bytes;
  const std::chrono::milliseconds keep;
  util::Mutex mu;
  std::vector<Block> blocks GUARDED_BY(mu);
  /// What `blocks` hold (read without the lock by decay()'s quick check).
  std::atomic<std::size_t> kept{0};

  /// Takes a kept block of `size` to `2 * size` bytes, the smallest; null when none fits.
  std::unique_ptr<char[]> reuse(std::size_t size) {
    util::MutexLock lk(mu);
    auto best = blocks.end();
    for (auto it = blocks.begin(); it != blocks.end(); ++it)
      if (it->size >= size && it->size <= 2 * size && (best == blocks.end() || it->size < best->size)) best = it;
    if (best == blocks.end()) return nullptr;
    std::unique_ptr<char[]> out = std::move(best->data);
    kept -= best->size;
    blocks.erase(best);
    return out;
  }
  /// Keeps `data` if there is room; frees it otherwise (a parameter: after
  /// the lock is released).
  void give_back(std::unique_ptr<char[]> data, std::size_t size) {
    util::MutexLock lk(mu);
    if (kept + size > max_bytes) return;
    blocks.push_back(Block{std::move(data), size, Clock::now()});
    kept += size;
  }
};

/// Back to the cache, while there is one.
struct BufferCache::GiveBack {
  std::weak_ptr<State> cache;
  std::size_t size;
  void operator()(char* p) const {
    std::unique_ptr<char[]> data(p);
    if (auto s = cache.lock()) s->give_back(std::move(data), size);
  }
};

BufferCache::BufferCache(std::size_t max_bytes, std::chrono::milliseconds keep)
    : state_(std::make_shared<State>(max_bytes, keep)) {}

BufferCache::~BufferCache() = default;

std::shared_ptr<char[]> BufferCache::take(std::size_t n) {
  if (n < kMinSize) return std::make_shared_for_overwrite<char[]>(n);
  const std::size_t size = (n + kGrain - 1) / kGrain * kGrain;
  std::unique_ptr<char[]> data = state_->reuse(size);
  if (!data) {
    data = std::make_unique_for_overwrite<char[]>(size);
    // (Before the first byte is written: the pages come as they are touched.)
    prefer_huge_pages(data.get(), size);
  }
  // (From a unique_ptr: should the control block fail, the buffer is not lost.)
  return std::shared_ptr<char[]>(std::unique_ptr<char[], GiveBack>(data.release(), GiveBack{state_, size}));
}

void BufferCache::decay(Clock::time_point now) {
  if (state_->kept.load(std::memory_order_relaxed) == 0) return;
  std::vector<Block> stale;
  {
    util::MutexLock lk(state_->mu);
    auto& blocks = state_->blocks;
    auto old = std::stable_partition(blocks.begin(), blocks.end(),
                                     [&](const Block& b) { return now - b.released < state_->keep; });
    for (auto it = old; it != blocks.end(); ++it) {
      state_->kept -= it->size;
      stale.push_back(std::move(*it));
    }
    blocks.erase(old, blocks.end());
  }
  // `stale` goes back to the system here, without the lock.
}

std::size_t BufferCache::kept_bytes() const { return state_->kept.load(); }

}  // namespace mcpgw
