#pragma once
// Lower-case hex: of bytes, and of SHA-256 digests (names, keys and ids the
// gateway derives from text).
#include <cstddef>
#include <string>
#include <string_view>

namespace mcpgw {

/// `n` bytes at `p` as 2n lower-case hex digits.
std::string hex(const unsigned char* p, std::size_t n);
/// The first `bytes` bytes (at most 32) of SHA-256(`text`), in hex.
std::string sha256_hex(std::string_view text, std::size_t bytes = 32);

}  // namespace mcpgw
