#include "util/random.hpp"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace mcpgw {

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  // Failure here means the system has no entropy source: nothing sensible can
  // continue, and handing out guessable session ids would be worse.
  if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1)
    throw std::runtime_error("RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : buf) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace mcpgw
