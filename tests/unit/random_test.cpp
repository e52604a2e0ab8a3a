// The kernel-backed random bytes (handed out from a per-thread pool) and an
// Aead whose keys are derived on first use, from several threads at once.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/aead.hpp"
#include "util/random.hpp"

using namespace mcpgw;

TEST_CASE("random bytes: every size, across the pool's refills, never repeated") {
  CHECK(random_bytes(0).empty());
  std::set<std::string> seen;
  // 16-byte ids drain a 256-byte pool every 16 ids; 300 bytes span two fills.
  for (int i = 0; i < 100; ++i) CHECK(seen.insert(random_bytes(16)).second);
  std::string big = random_bytes(300);
  CHECK(big.size() == 300);
  CHECK(big.find(std::string(16, '\0')) == std::string::npos);
  std::string hex = random_hex(16);
  CHECK(hex.size() == 32);
  CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("aead: the first seals and opens race on deriving the keys, and all agree") {
  const Aead aead("test purpose", {"secret"});
  std::vector<std::string> boxes(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < boxes.size(); ++i)
    threads.emplace_back([&, i] { boxes[i] = aead.seal("plain", "aad", Aead::Nonce::Synthetic).value(); });
  for (auto& t : threads) t.join();
  for (const auto& b : boxes) {
    CHECK(b == boxes.front());
    CHECK(aead.open(b, "aad") == std::optional<std::string>("plain"));
    CHECK_FALSE(aead.open(b, "other aad"));
  }
  CHECK_FALSE(Aead("other purpose", {"secret"}).open(boxes.front(), "aad"));
}
