#pragma once
#include <string>

namespace mcpgw {

/// `bytes` cryptographically random bytes (the kernel's getrandom).
std::string random_bytes(std::size_t bytes);

/// Hex string of `bytes` cryptographically random bytes (getrandom).
/// Used for session ids: 16 bytes give the 128 unguessable bits they need.
std::string random_hex(std::size_t bytes);

/// Hex string of `bytes` bytes from a per-thread generator seeded once from
/// getrandom: for ids that must be unique but not secret (trace and span
/// ids, one or two per call), where a system call per id would show.
std::string unique_hex(std::size_t bytes);
/// The same written to `out`, which takes 2 * `bytes` characters.
void unique_hex_into(char* out, std::size_t bytes);

}  // namespace mcpgw
