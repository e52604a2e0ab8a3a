#include "util/random.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cstdint>
#include <iterator>
#include <random>
#include <stdexcept>

#include "util/hex.hpp"

namespace mcpgw {

namespace {

// The kernel's generator, not OpenSSL's: RAND_bytes is seeded from it anyway,
// and its first use loads OpenSSL's providers, about 2 MB of a process that
// may never need them (an idle gateway makes session ids and a key only).
void fill_random(void* out, std::size_t bytes) {
  auto* p = static_cast<unsigned char*>(out);
  while (bytes > 0) {
    ssize_t n = ::getrandom(p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    // Failure means the system has no entropy source: nothing sensible can
    // continue, and handing out guessable session ids would be worse.
    if (n <= 0) throw std::runtime_error("getrandom failed");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

// A stateless request makes a session id per call: one system call per 16
// ids rather than per id. Each byte is handed out once and then erased.
class RandomPool {
 public:
  void take(char* out, std::size_t bytes) {
    while (bytes > 0) {
      if (used_ == buf_.size()) {
        fill_random(buf_.data(), buf_.size());
        used_ = 0;
      }
      std::size_t n = std::min(bytes, buf_.size() - used_);
      std::memcpy(out, buf_.data() + used_, n);
      std::memset(buf_.data() + used_, 0, n);
      used_ += n;
      out += n;
      bytes -= n;
    }
  }

 private:
  std::array<char, 256> buf_{};
  std::size_t used_ = buf_.size();
};

}  // namespace

std::string random_bytes(std::size_t bytes) {
  thread_local RandomPool pool;
  std::string buf(bytes, '\0');
  pool.take(buf.data(), buf.size());
  return buf;
}

std::string random_hex(std::size_t bytes) {
  std::string buf = random_bytes(bytes);
  return hex(reinterpret_cast<const unsigned char*>(buf.data()), buf.size());
}

void unique_hex_into(char* out, std::size_t bytes) {
  thread_local std::mt19937_64 engine = [] {
    std::uint32_t seed[8];  // seed_seq takes 32 bits per value
    fill_random(seed, sizeof seed);
    std::seed_seq seq(std::begin(seed), std::end(seed));
    return std::mt19937_64(seq);
  }();
  // Written as hex straight from the engine's words: ids are made per call
  // (trace and span ids), so no buffer of their own.
  static constexpr char kDigits[] = "0123456789abcdef";
  std::uint64_t r = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0) r = engine();
    auto b = static_cast<unsigned char>(r >> (8 * (i % 8)));
    out[2 * i] = kDigits[b >> 4];
    out[2 * i + 1] = kDigits[b & 0xf];
  }
}

std::string unique_hex(std::size_t bytes) {
  std::string out(2 * bytes, '\0');
  unique_hex_into(out.data(), bytes);
  return out;
}

}  // namespace mcpgw
