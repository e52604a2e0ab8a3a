#include "util/random.hpp"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

#include "util/hex.hpp"

namespace mcpgw {

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  // Failure here means the system has no entropy source: nothing sensible can
  // continue, and handing out guessable session ids would be worse.
  if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1)
    throw std::runtime_error("RAND_bytes failed");
  return hex(buf.data(), buf.size());
}

}  // namespace mcpgw
