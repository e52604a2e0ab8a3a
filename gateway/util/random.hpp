#pragma once
#include <string>

namespace mcpgw {

/// Hex string of `bytes` cryptographically random bytes (OpenSSL RAND_bytes).
/// Used for session ids: 16 bytes give the 128 unguessable bits they need.
std::string random_hex(std::size_t bytes);

}  // namespace mcpgw
