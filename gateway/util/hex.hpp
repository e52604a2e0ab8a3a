#pragma once
// Lower-case hex: of bytes, and of SHA-256 digests (names, keys and ids the
// gateway derives from text).
#include <cstddef>
#include <string>
#include <string_view>

namespace mcpgw {

/// The value of hex digit `c` (either case), or -1 when it is none.
constexpr int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// `n` bytes at `p` as 2n lower-case hex digits.
std::string hex(const unsigned char* p, std::size_t n);
/// The first `bytes` bytes (at most 32) of SHA-256(`text`), in hex.
std::string sha256_hex(std::string_view text, std::size_t bytes = 32);

}  // namespace mcpgw
