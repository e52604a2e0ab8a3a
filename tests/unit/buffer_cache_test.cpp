#include "util/buffer_cache.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

using namespace mcpgw;
using namespace std::chrono_literals;

TEST_CASE("buffer cache: a large buffer let go is the next one of about its size, until it is stale") {
  BufferCache cache(64 << 20, 5s);
  auto a = cache.take(16 << 20);
  REQUIRE(a);
  char* first = a.get();
  std::memset(first, 'x', 16 << 20);  // every byte is writable
  CHECK(cache.kept_bytes() == 0);
  a.reset();
  CHECK(cache.kept_bytes() == 16 << 20);

  // Somewhat smaller (same 2 MiB grain): the same buffer.
  auto b = cache.take((16 << 20) - 100);
  CHECK(b.get() == first);
  CHECK(cache.kept_bytes() == 0);
  b.reset();
  // Less than half its size: a buffer of its own, the large one stays.
  auto small = cache.take(4 << 20);
  CHECK(small.get() != first);
  CHECK(cache.kept_bytes() == 16 << 20);
  // Larger: a new one.
  auto larger = cache.take(20 << 20);
  CHECK(larger.get() != first);
  small.reset();
  larger.reset();
  CHECK(cache.kept_bytes() == (16 << 20) + (4 << 20) + (20 << 20));

  // Not stale yet: kept. Stale: given back.
  cache.decay(BufferCache::Clock::now() + 1s);
  CHECK(cache.kept_bytes() == (16 << 20) + (4 << 20) + (20 << 20));
  cache.decay(BufferCache::Clock::now() + 6s);
  CHECK(cache.kept_bytes() == 0);
}

TEST_CASE("buffer cache: small buffers are not kept, nor more than its bound; a buffer may outlive it") {
  auto cache = std::make_unique<BufferCache>(32 << 20, 5s);
  auto tiny = cache->take(100);
  REQUIRE(tiny);
  tiny.reset();
  CHECK(cache->kept_bytes() == 0);

  std::vector<std::shared_ptr<char[]>> held;
  for (int i = 0; i < 3; ++i) held.push_back(cache->take(16 << 20));
  held.clear();
  CHECK(cache->kept_bytes() == 32 << 20);  // the third went back to the system

  auto survivor = cache->take(8 << 20);
  cache.reset();
  survivor[0] = 'y';
  survivor.reset();  // freed, the cache being gone
}

TEST_CASE("buffer cache: taken and let go on many threads at once") {
  BufferCache cache(64 << 20, 5s);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 50; ++i) {
        auto b = cache.take(static_cast<std::size_t>((1 + (i + t) % 3)) << 21);
        b[0] = static_cast<char>(i);
        if (i % 10 == 0) cache.decay(BufferCache::Clock::now() + 10s);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(cache.kept_bytes() <= 64 << 20);
  cache.decay(BufferCache::Clock::now() + 10s);
  CHECK(cache.kept_bytes() == 0);
}
