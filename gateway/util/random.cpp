#include "util/random.hpp"

#include <openssl/rand.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <stdexcept>

#include "util/hex.hpp"

namespace mcpgw {

std::string random_bytes(std::size_t bytes) {
  std::string buf(bytes, '\0');
  // Failure here means the system has no entropy source: nothing sensible can
  // continue, and handing out guessable session ids would be worse.
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(buf.size())) != 1)
    throw std::runtime_error("RAND_bytes failed");
  return buf;
}

std::string random_hex(std::size_t bytes) {
  std::string buf = random_bytes(bytes);
  return hex(reinterpret_cast<const unsigned char*>(buf.data()), buf.size());
}

void unique_hex_into(char* out, std::size_t bytes) {
  thread_local std::mt19937_64 engine = [] {
    std::uint32_t seed[8];  // seed_seq takes 32 bits per value
    if (RAND_bytes(reinterpret_cast<unsigned char*>(seed), sizeof seed) != 1)
      throw std::runtime_error("RAND_bytes failed");
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
