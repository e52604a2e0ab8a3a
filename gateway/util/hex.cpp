#include "util/hex.hpp"

#include <openssl/sha.h>

#include <algorithm>

namespace mcpgw {

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view text, std::size_t bytes) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), md);
  return hex(md, std::min<std::size_t>(bytes, SHA256_DIGEST_LENGTH));
}

}  // namespace mcpgw
